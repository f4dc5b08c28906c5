"""Scripted assistant turns: what a test says the model answers, turn by turn."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypeAlias

from plancord.testing.fake_api.wire import JsonObject, StopReason


@dataclass(frozen=True)
class Text:
    """A text block of an assistant reply."""

    text: str


@dataclass(frozen=True)
class ToolCall:
    """A `tool_use` block of an assistant reply; the server assigns `toolu_…` ids when unset."""

    name: str
    input: Mapping[str, object] = field(default_factory=dict)
    id: str | None = None
    malformed: bool = False
    """The input breaks the tool's schema on purpose: a model calling a tool without
    ``strict`` can send one, even when forced. Without it the fake refuses to play an
    off-schema input to a forced or ``strict`` tool (``fake_api.answers``)."""


@dataclass(frozen=True)
class Thinking:
    """A `thinking` block of an assistant reply."""

    thinking: str
    signature: str | None = None
    """None: the server signs the block as the real API does."""


AssistantBlock: TypeAlias = Text | ToolCall | Thinking


@dataclass(frozen=True)
class Reply:
    """A successful response: the assistant's blocks and why it stopped.

    `output_tokens` overrides the size estimate; a `max_tokens` stop reports the request's
    `max_tokens`, as the real API does.
    """

    blocks: tuple[AssistantBlock, ...]
    stop_reason: StopReason = "end_turn"
    output_tokens: int | None = None
    refusal_category: str | None = None
    refusal_explanation: str | None = None


@dataclass(frozen=True)
class ErrorReply:
    """An error response, for exercising the client's retry and error handling.

    `retry_after` (seconds) is sent as `retry-after-ms`, which the SDK obeys instead of its
    own exponential back-off; `None` leaves the delay to the SDK.
    """

    status: int
    error_type: str
    message: str
    retry_after: float | None = 0.001


Turn: TypeAlias = Reply | ErrorReply
ScriptFunction: TypeAlias = Callable[[JsonObject], Turn | Awaitable[Turn | None] | None]
Script: TypeAlias = Sequence[Turn] | ScriptFunction
"""Either the turns to play in order, or a function from the request body to the next turn
(`None` when it has nothing more to say)."""


def text_turn(text: str) -> Reply:
    """The assistant answers with `text` and ends its turn."""
    return Reply(blocks=(Text(text),), stop_reason="end_turn")


def tool_turn(*calls: ToolCall, text: str | None = None) -> Reply:
    """The assistant calls one or more tools, optionally saying `text` first."""
    if not calls:
        raise ValueError("tool_turn needs at least one ToolCall")
    preamble: tuple[AssistantBlock, ...] = (Text(text),) if text else ()
    return Reply(blocks=(*preamble, *calls), stop_reason="tool_use")


def refusal_turn(
    text: str | None = None, *, category: str | None = None, explanation: str | None = None
) -> Reply:
    """The model refuses; `stop_reason` is `refusal` and any tool calls must not run."""
    blocks: tuple[AssistantBlock, ...] = (Text(text),) if text else ()
    return Reply(
        blocks=blocks,
        stop_reason="refusal",
        refusal_category=category,
        refusal_explanation=explanation,
    )


def max_tokens_turn(partial: str) -> Reply:
    """The answer is cut off at `max_tokens` after `partial`."""
    return Reply(blocks=(Text(partial),), stop_reason="max_tokens")


ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    504: "timeout_error",
    529: "overloaded_error",
}
_ERROR_MESSAGES = {
    "overloaded_error": "Overloaded",
    "api_error": "Internal server error",
    "rate_limit_error": "Number of request tokens has exceeded your per-minute rate limit",
    "timeout_error": "Request timed out",
}


def error_turn(
    status: int = 529,
    error_type: str | None = None,
    message: str | None = None,
    *,
    retry_after: float | None = 0.001,
) -> ErrorReply:
    """The API fails with `status`; the error type defaults to the API's one for that status."""
    kind = error_type or ERROR_TYPES.get(status, "api_error")
    return ErrorReply(
        status=status,
        error_type=kind,
        message=message or _ERROR_MESSAGES.get(kind, f"fake {kind}"),
        retry_after=retry_after,
    )
