"""A loopback Anthropic Messages API that plays scripted assistant turns.

It ships inside the package, not only with the tests, because ``plancord demo`` plays the
model with it: the demo runs offline, with no API key.

plancord reaches the model through the real `anthropic` SDK. Mocking the SDK would let a
malformed conversation (an unanswered `tool_use`, a fifth cache breakpoint, an empty text
block) pass every test and fail only against the real API. This server speaks the wire
protocol instead: it rejects what the Messages API rejects, with the same status codes and
error JSON, answers with scripted turns in exactly the API's response shape (plain JSON, or
server-sent events when the request asks for `stream`), and simulates prompt-cache
accounting so the placement of cache breakpoints can be tested.

    async with FakeAnthropicServer([text_turn("hello")]) as server:
        client = server.client()
        message = await client.messages.create(model=..., max_tokens=..., messages=[...])

Token counts are a deterministic estimate, `ceil(bytes / 4)` of the canonical JSON of each
prompt part; the prompt is tools, then system, then message blocks, in order. A block that
carries `cache_control` is a breakpoint. For each breakpoint the server looks back over at
most `cache_lookback_blocks` block boundaries (the real API looks back about 20) for the
longest prefix it cached earlier: that prefix is `cache_read_input_tokens`. The rest, up to
the last breakpoint, is `cache_creation_input_tokens`, and every breakpoint prefix of the
request is then cached. What follows the last breakpoint is `input_tokens`. Prefixes are
keyed by the model and their content without the `cache_control` markers, so a change to the
tools or the system prompt invalidates everything after it, and a breakpoint that moves
forward each turn still finds the previous turn's prefix. A prefix shorter than
`min_cacheable_tokens` is neither written nor read.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import math
import re
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from aiohttp import web
from anthropic import AsyncAnthropic
from anthropic.types import message_count_tokens_params, message_create_params
from anthropic.types.beta import message_create_params as beta_message_create_params

from plancord.llm.models import MODEL_LIMITS, ModelLimits

__all__ = [
    "ErrorReply",
    "FakeAnthropicServer",
    "FakeAnthropicServers",
    "Rejection",
    "Reply",
    "Script",
    "SimulatedUsage",
    "Text",
    "Thinking",
    "ToolCall",
    "Turn",
    "error_turn",
    "max_tokens_turn",
    "refusal_turn",
    "text_turn",
    "tool_turn",
]

JsonObject: TypeAlias = dict[str, Any]
StopReason: TypeAlias = Literal[
    "end_turn",
    "max_tokens",
    "stop_sequence",
    "tool_use",
    "pause_turn",
    "refusal",
    "model_context_window_exceeded",
]

MAX_CACHE_BREAKPOINTS = 4
FAKE_MODELS: dict[str, ModelLimits] = {
    "claude-fake-test-model": ModelLimits(64_000),
    "claude-other-fake-model": ModelLimits(64_000),
}
"""Model ids only this server knows, for tests that do not want to name a real model."""
TOOL_NAME_PATTERN = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
TOOL_USE_ID_PATTERN = re.compile(r"^[a-zA-Z0-9_-]+$")


# --- scripted turns -------------------------------------------------------------------------


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


_ERROR_TYPES = {
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
    kind = error_type or _ERROR_TYPES.get(status, "api_error")
    return ErrorReply(
        status=status,
        error_type=kind,
        message=message or _ERROR_MESSAGES.get(kind, f"fake {kind}"),
        retry_after=retry_after,
    )


# --- request validation ---------------------------------------------------------------------


class RequestRejected(Exception):
    """A request the real API would refuse, with the status and error it would answer."""

    def __init__(self, message: str, *, status: int = 400, error_type: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.error_type = error_type or _ERROR_TYPES.get(status, "api_error")


def _reject(message: str) -> RequestRejected:
    return RequestRejected(message)


def _param_names(*typed_dicts: Any) -> frozenset[str]:
    names: set[str] = set()
    for typed_dict in typed_dicts:
        names |= set(typed_dict.__required_keys__) | set(typed_dict.__optional_keys__)
    return frozenset(names)


_LEGACY_PARAMS = frozenset({"temperature", "top_p", "top_k"})
_CREATE_PARAMS = (
    _param_names(
        message_create_params.MessageCreateParamsBase,
        beta_message_create_params.MessageCreateParamsBase,
    )
    | _LEGACY_PARAMS
    | {"stream"}
)
_COUNT_TOKENS_PARAMS = _param_names(message_count_tokens_params.MessageCountTokensParams)

_USER_BLOCKS = frozenset({"text", "image", "document", "search_result", "tool_result"})
_ASSISTANT_BLOCKS = frozenset({"text", "tool_use", "thinking", "redacted_thinking"})
_TOOL_RESULT_BLOCKS = frozenset({"text", "image", "document", "search_result", "tool_reference"})
_IMAGE_SOURCES = frozenset({"base64", "url", "file"})
_TOOL_CHOICES = frozenset({"auto", "any", "tool", "none"})


def _tags(kinds: frozenset[str]) -> str:
    return ", ".join(f"'{kind}'" for kind in sorted(kinds))


@dataclass
class _CacheMarks:
    """The `cache_control` markers met while validating, in prompt order."""

    ttls: list[str] = field(default_factory=list)

    def check(self, holder: Mapping[str, Any], path: str) -> bool:
        """Validate `holder["cache_control"]`; return whether it makes a breakpoint."""
        marker = holder.get("cache_control")
        if marker is None:
            return False
        where = f"{path}.cache_control" if path else "cache_control"
        if not isinstance(marker, dict):
            raise _reject(f"{where}: Input should be a valid dictionary")
        if "type" not in marker:
            raise _reject(f"{where}.type: Field required")
        if marker["type"] != "ephemeral":
            raise _reject(f"{where}.type: Input should be 'ephemeral'")
        for key in marker:
            if key not in ("type", "ttl"):
                raise _reject(f"{where}.{key}: Extra inputs are not permitted")
        ttl = marker.get("ttl", "5m")
        if ttl not in ("5m", "1h"):
            raise _reject(f"{where}.ttl: Input should be '5m' or '1h'")
        self.ttls.append(ttl)
        return True


def check_headers(headers: Mapping[str, str], *, api_key: str | None) -> None:
    """Authentication and versioning, checked before the body as the real API does.

    The key may come as `x-api-key` or as `Authorization: Bearer …` (the SDK sends the
    latter); when the server was given an `api_key`, it must match.
    """
    key = headers.get("x-api-key", "").strip()
    authorization = headers.get("authorization", "").strip()
    if not key and authorization.lower().startswith("bearer "):
        key = authorization[len("bearer ") :].strip()
    if not key:
        raise RequestRejected("x-api-key header is required", status=401)
    if api_key is not None and key != api_key:
        raise RequestRejected("invalid x-api-key", status=401)
    if not headers.get("anthropic-version", "").strip():
        raise RequestRejected("anthropic-version: header is required")


def validate_request(body: object, *, count_tokens: bool = False) -> JsonObject:
    """Apply the Messages API's request rules; return the body or raise `RequestRejected`."""
    if not isinstance(body, dict):
        raise _reject("There was an issue with your request body: expected a JSON object")
    known = _COUNT_TOKENS_PARAMS if count_tokens else _CREATE_PARAMS
    for key in body:
        if key not in known:
            raise _reject(f"{key}: Extra inputs are not permitted")
    if "model" not in body:
        raise _reject("model: Field required")
    if not isinstance(body["model"], str) or not body["model"]:
        raise _reject("model: Input should be a valid string")
    if not count_tokens:
        _check_max_tokens(body)
        _check_thinking_param(body)
    if "messages" not in body:
        raise _reject("messages: Field required")
    marks = _CacheMarks()
    tool_names = _check_tools(body.get("tools"), marks)
    _check_system(body.get("system"), marks)
    _check_messages(body["messages"], marks)
    _check_tool_choice(body.get("tool_choice"), tool_names, has_tools="tools" in body)
    if body.get("cache_control") is not None:
        marks.check(body, "")
    _check_cache_marks(marks)
    return body


def _check_max_tokens(body: JsonObject) -> None:
    if "max_tokens" not in body:
        raise _reject("max_tokens: Field required")
    max_tokens = body["max_tokens"]
    if not isinstance(max_tokens, int) or isinstance(max_tokens, bool):
        raise _reject("max_tokens: Input should be a valid integer")
    if max_tokens < 1:
        raise _reject("max_tokens: Input should be greater than or equal to 1")


def _check_tools(tools: object, marks: _CacheMarks) -> list[str]:
    if tools is None:
        return []
    if not isinstance(tools, list):
        raise _reject("tools: Input should be a valid list")
    names: list[str] = []
    for index, tool in enumerate(tools):
        path = f"tools.{index}"
        if not isinstance(tool, dict):
            raise _reject(f"{path}: Input should be a valid dictionary")
        custom = tool.get("type") in (None, "custom")
        if custom:
            path = f"{path}.custom"
        name = tool.get("name")
        if name is None:
            raise _reject(f"{path}.name: Field required")
        if not isinstance(name, str) or not TOOL_NAME_PATTERN.match(name):
            raise _reject(f"{path}.name: String should match pattern '{TOOL_NAME_PATTERN.pattern}'")
        if custom:
            _check_input_schema(tool, path)
        marks.check(tool, path)
        names.append(name)
    if len(set(names)) != len(names):
        raise _reject("tools: Tool names must be unique.")
    return names


def _check_input_schema(tool: JsonObject, path: str) -> None:
    if "input_schema" not in tool:
        raise _reject(f"{path}.input_schema: Field required")
    schema = tool["input_schema"]
    if not isinstance(schema, dict):
        raise _reject(f"{path}.input_schema: Input should be a valid dictionary")
    if schema.get("type") != "object":
        raise _reject(f"{path}.input_schema.type: Input should be 'object'")
    description = tool.get("description")
    if description is not None and not isinstance(description, str):
        raise _reject(f"{path}.description: Input should be a valid string")


def _check_system(system: object, marks: _CacheMarks) -> None:
    if system is None or isinstance(system, str):
        return
    if not isinstance(system, list):
        raise _reject("system: Input should be a valid string or a valid list")
    for index, block in enumerate(system):
        path = f"system.{index}"
        if not isinstance(block, dict):
            raise _reject(f"{path}: Input should be a valid dictionary")
        if block.get("type") != "text":
            raise _reject(f"{path}.type: Input should be 'text'")
        _check_text(block, path, owner="system")
        marks.check(block, path)


def _check_text(block: JsonObject, path: str, *, owner: str) -> None:
    if "text" not in block:
        raise _reject(f"{path}.text: Field required")
    text = block["text"]
    if not isinstance(text, str):
        raise _reject(f"{path}.text: Input should be a valid string")
    if not text:
        raise _reject(f"{owner}: text content blocks must be non-empty")
    if not text.strip():
        raise _reject(f"{owner}: text content blocks must contain non-whitespace text")


def _check_messages(messages: object, marks: _CacheMarks) -> None:
    if not isinstance(messages, list):
        raise _reject("messages: Input should be a valid list")
    if not messages:
        raise _reject("messages: at least one message is required")
    previous_role: str | None = None
    last = len(messages) - 1
    for index, message in enumerate(messages):
        role = _check_role(message, index, previous_role)
        blocks = _blocks_of(message, index, final_assistant=index == last and role == "assistant")
        for position, block in enumerate(blocks):
            _check_block(block, f"messages.{index}.content.{position}", role, marks)
        previous_role = role
    _check_final_assistant(messages[-1])
    _check_tool_pairing(messages)


def _check_role(message: object, index: int, previous_role: str | None) -> str:
    path = f"messages.{index}"
    if not isinstance(message, dict):
        raise _reject(f"{path}: Input should be a valid dictionary")
    for key in message:
        if key not in ("role", "content"):
            raise _reject(f"{path}.{key}: Extra inputs are not permitted")
    if "role" not in message:
        raise _reject(f"{path}.role: Field required")
    role = message["role"]
    if role == "system":
        raise _reject(
            'messages: Unexpected role "system". The Messages API accepts a top-level '
            '`system` parameter, not "system" as an input message role.'
        )
    if role not in ("user", "assistant"):
        raise _reject(f"{path}.role: Input should be 'user' or 'assistant'")
    if previous_role is None and role != "user":
        raise _reject('messages: first message must use the "user" role')
    if role == previous_role:
        raise _reject(
            'messages: roles must alternate between "user" and "assistant", '
            f'but found multiple "{role}" roles in a row'
        )
    return str(role)


def _blocks_of(message: JsonObject, index: int, *, final_assistant: bool) -> list[Any]:
    path = f"messages.{index}"
    if "content" not in message:
        raise _reject(f"{path}.content: Field required")
    content = message["content"]
    if isinstance(content, str):
        if not content and final_assistant:
            return []
        if not content:
            raise _reject(
                f"{path}: all messages must have non-empty content except for the optional "
                "final assistant message"
            )
        return [{"type": "text", "text": content}]
    if not isinstance(content, list):
        raise _reject(f"{path}.content: Input should be a valid string or a valid list")
    if not content and not final_assistant:
        raise _reject(
            f"{path}: all messages must have non-empty content except for the optional "
            "final assistant message"
        )
    return content


def _check_block(block: object, path: str, role: str, marks: _CacheMarks) -> None:
    if not isinstance(block, dict):
        raise _reject(f"{path}: Input should be a valid dictionary")
    if "type" not in block:
        raise _reject(f"{path}.type: Field required")
    kind = block["type"]
    allowed = _USER_BLOCKS if role == "user" else _ASSISTANT_BLOCKS
    if kind not in _USER_BLOCKS | _ASSISTANT_BLOCKS:
        raise _reject(
            f"{path}: Input tag '{kind}' found using 'type' does not match any of the "
            f"expected tags: {_tags(allowed)}"
        )
    if kind not in allowed:
        raise _reject(f"{path}: `{kind}` blocks are not allowed in {role} messages")
    if kind == "text":
        _check_text(block, path, owner="messages")
    elif kind in ("image", "document"):
        _check_source(block, f"{path}.{kind}", image=kind == "image")
    elif kind == "tool_use":
        _check_tool_use(block, f"{path}.tool_use")
    elif kind == "tool_result":
        _check_tool_result(block, f"{path}.tool_result", marks)
    elif kind == "thinking":
        for key in ("thinking", "signature"):
            if not isinstance(block.get(key), str):
                raise _reject(f"{path}.thinking.{key}: Field required")
        if block["signature"] != thinking_signature(block["thinking"]):
            raise _reject(f"{path}: Invalid `signature` in `thinking` block")
    elif kind == "redacted_thinking" and not isinstance(block.get("data"), str):
        raise _reject(f"{path}.redacted_thinking.data: Field required")
    if block.get("cache_control") is not None and kind in ("thinking", "redacted_thinking"):
        raise _reject(f"{path}.{kind}.cache_control: Extra inputs are not permitted")
    marks.check(block, path)


def thinking_signature(thinking: str) -> str:
    """The signature this server gives a thinking block. The real API signs thinking so a
    client cannot edit it; a block passed back changed (or with another signature) fails."""
    digest = hashlib.sha256(b"fake-thinking-signature\0" + thinking.encode("utf-8"))
    return digest.hexdigest()


def _check_thinking_param(body: JsonObject) -> None:
    thinking = body.get("thinking")
    if thinking is None:
        return
    if not isinstance(thinking, dict) or thinking.get("type") not in ("enabled", "disabled"):
        raise _reject("thinking.type: Input should be 'enabled' or 'disabled'")
    if thinking["type"] == "disabled":
        return
    budget = thinking.get("budget_tokens")
    if not isinstance(budget, int) or budget < 1024:
        raise _reject(
            "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024"
        )
    if isinstance(body.get("max_tokens"), int) and budget >= body["max_tokens"]:
        raise _reject("`max_tokens` must be greater than `thinking.budget_tokens`")


def _check_source(block: JsonObject, path: str, *, image: bool) -> None:
    source = block.get("source")
    if source is None:
        raise _reject(f"{path}.source: Field required")
    if not isinstance(source, dict):
        raise _reject(f"{path}.source: Input should be a valid dictionary")
    if image and source.get("type") not in _IMAGE_SOURCES:
        raise _reject(
            f"{path}.source: Input tag '{source.get('type')}' found using 'type' does not "
            f"match any of the expected tags: {_tags(_IMAGE_SOURCES)}"
        )


def _check_tool_use(block: JsonObject, path: str) -> None:
    for key in ("id", "name", "input"):
        if key not in block:
            raise _reject(f"{path}.{key}: Field required")
    if not isinstance(block["id"], str) or not TOOL_USE_ID_PATTERN.match(block["id"]):
        raise _reject(f"{path}.id: String should match pattern '{TOOL_USE_ID_PATTERN.pattern}'")
    if not isinstance(block["name"], str) or not block["name"]:
        raise _reject(f"{path}.name: Input should be a valid string")
    if not isinstance(block["input"], dict):
        raise _reject(f"{path}.input: Input should be a valid dictionary")


def _check_tool_result(block: JsonObject, path: str, marks: _CacheMarks) -> None:
    if not isinstance(block.get("tool_use_id"), str):
        raise _reject(f"{path}.tool_use_id: Field required")
    if "is_error" in block and not isinstance(block["is_error"], bool):
        raise _reject(f"{path}.is_error: Input should be a valid boolean")
    content = block.get("content")
    if content is None or isinstance(content, str):
        return
    if not isinstance(content, list):
        raise _reject(f"{path}.content: Input should be a valid string or a valid list")
    for index, inner in enumerate(content):
        inner_path = f"{path}.content.{index}"
        if not isinstance(inner, dict):
            raise _reject(f"{inner_path}: Input should be a valid dictionary")
        kind = inner.get("type")
        if kind not in _TOOL_RESULT_BLOCKS:
            raise _reject(
                f"{inner_path}: Input tag '{kind}' found using 'type' does not match any of "
                f"the expected tags: {_tags(_TOOL_RESULT_BLOCKS)}"
            )
        if kind == "text":
            _check_text(inner, inner_path, owner="messages")
        elif kind in ("image", "document"):
            _check_source(inner, f"{inner_path}.{kind}", image=kind == "image")
        marks.check(inner, inner_path)


def _check_final_assistant(message: JsonObject) -> None:
    if message["role"] != "assistant":
        return
    content = message["content"]
    if isinstance(content, str):
        tail = content
    elif content and content[-1].get("type") == "text":
        tail = content[-1]["text"]
    else:
        return
    if tail and tail != tail.rstrip():
        raise _reject("messages: final assistant content cannot end with trailing whitespace")


def _block_list(message: JsonObject) -> list[JsonObject]:
    content = message["content"]
    return [] if isinstance(content, str) else list(content)


def _check_tool_pairing(messages: list[JsonObject]) -> None:
    """Every tool_use is answered first thing in the next message; no result is orphaned."""
    seen_ids: set[str] = set()
    for index, message in enumerate(messages):
        blocks = _block_list(message)
        if message["role"] == "user":
            _check_results_answer_previous(messages, index)
            continue
        uses = [(pos, b["id"]) for pos, b in enumerate(blocks) if b["type"] == "tool_use"]
        for position, tool_use_id in uses:
            if tool_use_id in seen_ids:
                raise _reject(f"messages.{index}.content.{position}: `tool_use` ids must be unique")
            seen_ids.add(tool_use_id)
        if uses:
            _check_uses_answered(messages, index, [tool_use_id for _, tool_use_id in uses])


def _check_uses_answered(messages: list[JsonObject], index: int, use_ids: list[str]) -> None:
    following = _block_list(messages[index + 1]) if index + 1 < len(messages) else []
    result_ids = [b["tool_use_id"] for b in following if b["type"] == "tool_result"]
    missing = [tool_use_id for tool_use_id in use_ids if tool_use_id not in result_ids]
    if missing:
        raise _reject(
            f"messages.{index}: `tool_use` ids were found without `tool_result` blocks "
            f"immediately after: {', '.join(missing)}. Each `tool_use` block must have a "
            "corresponding `tool_result` block in the next message."
        )
    leading = 0
    for block in following:
        if block["type"] != "tool_result":
            break
        leading += 1
    if leading < len(use_ids):
        raise _reject(
            f"messages.{index + 1}: Did not find {len(use_ids)} `tool_result` block(s) at the "
            "beginning of this message. Messages following `tool_use` blocks must begin with "
            "a matching number of `tool_result` blocks."
        )


def _check_results_answer_previous(messages: list[JsonObject], index: int) -> None:
    previous = _block_list(messages[index - 1]) if index > 0 else []
    use_ids = {b["id"] for b in previous if b["type"] == "tool_use"}
    answered: set[str] = set()
    for position, block in enumerate(_block_list(messages[index])):
        if block["type"] != "tool_result":
            continue
        tool_use_id = block["tool_use_id"]
        path = f"messages.{index}.content.{position}"
        if tool_use_id not in use_ids:
            raise _reject(
                f"{path}: unexpected `tool_use_id` found in `tool_result` blocks: {tool_use_id}. "
                "Each `tool_result` block must have a corresponding `tool_use` block in the "
                "previous message."
            )
        if tool_use_id in answered:
            raise _reject(f"{path}: duplicate `tool_result` blocks for tool_use id {tool_use_id}")
        answered.add(tool_use_id)


def _check_tool_choice(choice: object, tool_names: list[str], *, has_tools: bool) -> None:
    if choice is None:
        return
    if not isinstance(choice, dict) or choice.get("type") not in _TOOL_CHOICES:
        raise _reject(
            "tool_choice: Input tag found using 'type' does not match any of the expected "
            f"tags: {_tags(_TOOL_CHOICES)}"
        )
    if choice["type"] != "none" and not has_tools:
        raise _reject("tool_choice may only be specified while providing tools")
    if choice["type"] == "tool":
        name = choice.get("name")
        if not isinstance(name, str):
            raise _reject("tool_choice.tool.name: Field required")
        if name not in tool_names:
            raise _reject(f"tool_choice.tool.name: tool '{name}' is not one of the `tools`")


def _check_cache_marks(marks: _CacheMarks) -> None:
    if len(marks.ttls) > MAX_CACHE_BREAKPOINTS:
        raise _reject(
            f"A maximum of {MAX_CACHE_BREAKPOINTS} blocks with cache_control may be provided. "
            f"Found {len(marks.ttls)}."
        )
    if "5m" in marks.ttls and "1h" in marks.ttls[marks.ttls.index("5m") :]:
        raise _reject(
            "cache_control: a block with ttl='1h' must not come after a block with ttl='5m'"
        )


# --- token and prompt-cache simulation ------------------------------------------------------


def canonical_json(value: object) -> str:
    """The serialisation token counts and cache keys are computed from."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def estimate_tokens(value: object) -> int:
    """About four bytes of canonical JSON per token, rounded up."""
    return math.ceil(len(canonical_json(value).encode()) / 4)


@dataclass(frozen=True)
class SimulatedUsage:
    """The usage block of one response, as the server computed it."""

    input_tokens: int
    output_tokens: int
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0

    @property
    def total_input_tokens(self) -> int:
        return self.input_tokens + self.cache_creation_input_tokens + self.cache_read_input_tokens

    def as_json(self) -> JsonObject:
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_creation_input_tokens": self.cache_creation_input_tokens,
            "cache_read_input_tokens": self.cache_read_input_tokens,
        }


@dataclass(frozen=True)
class _PromptPart:
    tokens: int
    prefix_hash: str
    breakpoint: bool


def _without_cache_control(block: JsonObject) -> JsonObject:
    stripped = {key: value for key, value in block.items() if key != "cache_control"}
    if block.get("type") == "tool_result" and isinstance(block.get("content"), list):
        stripped["content"] = [
            _without_cache_control(inner) if isinstance(inner, dict) else inner
            for inner in block["content"]
        ]
    return stripped


def _has_cache_control(block: JsonObject) -> bool:
    if block.get("cache_control") is not None:
        return True
    content = block.get("content")
    return (
        block.get("type") == "tool_result"
        and isinstance(content, list)
        and any(isinstance(inner, dict) and inner.get("cache_control") for inner in content)
    )


def _raw_parts(body: JsonObject) -> Iterator[tuple[JsonObject, bool]]:
    for tool in body.get("tools") or []:
        yield {"tool": _without_cache_control(tool)}, _has_cache_control(tool)
    system = body.get("system")
    if isinstance(system, str) and system:
        yield {"system": {"type": "text", "text": system}}, False
    elif isinstance(system, list):
        for block in system:
            yield {"system": _without_cache_control(block)}, _has_cache_control(block)
    for message in body["messages"]:
        content = message["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        for block in blocks:
            part = {"role": message["role"], "block": _without_cache_control(block)}
            yield part, _has_cache_control(block)


def prompt_parts(body: JsonObject) -> list[_PromptPart]:
    """The prompt as ordered parts, each with the hash of the prefix it ends."""
    raw = list(_raw_parts(body))
    if body.get("cache_control") is not None and raw:
        raw[-1] = (raw[-1][0], True)
    running = hashlib.sha256()
    running.update(b"[" + canonical_json(body["model"]).encode())
    parts: list[_PromptPart] = []
    for part, breakpoint in raw:
        encoded = canonical_json(part).encode()
        running.update(b"," + encoded)
        snapshot = running.copy()
        snapshot.update(b"]")
        parts.append(_PromptPart(math.ceil(len(encoded) / 4), snapshot.hexdigest(), breakpoint))
    return parts


class PromptCache:
    """Which prompt prefixes have been cached, and what a request reads, writes and pays.

    Entries live for their TTL (5 minutes, or an hour when the request marks a breakpoint
    with ``ttl: "1h"``), measured on ``clock``; a read refreshes an entry's lifetime, as the
    real cache does. The TTL of a request is the longest it asks for on any breakpoint."""

    def __init__(
        self,
        *,
        min_cacheable_tokens: int = 0,
        lookback_blocks: int = 20,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.min_cacheable_tokens = min_cacheable_tokens
        self.lookback_blocks = lookback_blocks
        self.clock = clock
        self._entries: dict[str, float] = {}

    def clear(self) -> None:
        """Forget every cached prefix, as if their TTL had expired."""
        self._entries.clear()

    def __len__(self) -> int:
        now = self.clock()
        return sum(1 for expiry in self._entries.values() if expiry > now)

    def _alive(self, prefix_hash: str, now: float) -> bool:
        expiry = self._entries.get(prefix_hash)
        return expiry is not None and expiry > now

    def account(self, body: JsonObject, output_tokens: int) -> SimulatedUsage:
        """Compute the usage of a request and remember the prefixes it caches."""
        parts = prompt_parts(body)
        prefix_tokens: list[int] = []
        total = 0
        for part in parts:
            total += part.tokens
            prefix_tokens.append(total)
        breakpoints = [
            index
            for index, part in enumerate(parts)
            if part.breakpoint and prefix_tokens[index] >= self.min_cacheable_tokens
        ]
        now = self.clock()
        ttl = 3600.0 if '"ttl":"1h"' in canonical_json(body) else 300.0
        read_end = 0
        for index in breakpoints:
            for candidate in range(index, max(-1, index - self.lookback_blocks), -1):
                if self._alive(parts[candidate].prefix_hash, now):
                    read_end = max(read_end, candidate + 1)
                    self._entries[parts[candidate].prefix_hash] = max(
                        self._entries[parts[candidate].prefix_hash], now + ttl
                    )
                    break
        write_end = max(read_end, breakpoints[-1] + 1) if breakpoints else read_end
        read = prefix_tokens[read_end - 1] if read_end else 0
        written = (prefix_tokens[write_end - 1] if write_end else 0) - read
        for index in breakpoints:
            key = parts[index].prefix_hash
            self._entries[key] = max(self._entries.get(key, 0.0), now + ttl)
        return SimulatedUsage(
            input_tokens=total - read - written,
            output_tokens=output_tokens,
            cache_creation_input_tokens=written,
            cache_read_input_tokens=read,
        )


def check_model(body: JsonObject, models: Mapping[str, ModelLimits]) -> None:
    """The model must exist, and ``max_tokens`` and the prompt must fit it."""
    model = body["model"]
    limits = models.get(model)
    if limits is None:
        raise RequestRejected(f"model: {model}", status=404)
    max_tokens = body.get("max_tokens")
    if isinstance(max_tokens, int) and max_tokens > limits.max_output_tokens:
        raise _reject(
            f"max_tokens: {max_tokens} > {limits.max_output_tokens}, which is the maximum "
            f"allowed number of output tokens for {model}"
        )
    prompt = sum(part.tokens for part in prompt_parts(body))
    if prompt > limits.context_window_tokens:
        raise _reject(
            f"prompt is too long: {prompt} tokens > {limits.context_window_tokens} maximum"
        )


# --- the server -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Rejection:
    """A request the server refused, and why."""

    status: int
    error_type: str
    message: str
    body: object


class FakeAnthropicServer:
    """The Messages API on 127.0.0.1 at an ephemeral port, playing `script`.

    Every body received on `/v1/messages` is appended to `requests` (and those on
    `/v1/messages/count_tokens` to `token_count_requests`); successful responses go to
    `responses` and their usage to `usages`; refused requests to `rejections`; requests that
    found the script exhausted to `unscripted`; exceptions of a script function to
    `script_errors`. Validation happens before a turn is consumed, so a rejected request does
    not use up the script. `cache` holds the simulated prompt cache (`cache.clear()` expires
    it).
    """

    def __init__(
        self,
        script: Script = (),
        *,
        api_key: str | None = None,
        min_cacheable_tokens: int = 0,
        cache_lookback_blocks: int = 20,
        host: str = "127.0.0.1",
        models: Mapping[str, ModelLimits] | None = None,
        cache_clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.models: dict[str, ModelLimits] = (
            dict(models) if models is not None else {**MODEL_LIMITS, **FAKE_MODELS}
        )
        self._served_tool_use_ids: set[str] = set()
        self._turns: list[Turn] | None = None if callable(script) else list(script)
        self._script_function: ScriptFunction | None = script if callable(script) else None
        self._api_key = api_key
        self._host = host
        self.cache = PromptCache(
            min_cacheable_tokens=min_cacheable_tokens,
            lookback_blocks=cache_lookback_blocks,
            clock=cache_clock,
        )
        self.requests: list[JsonObject] = []
        self.responses: list[JsonObject] = []
        self.usages: list[SimulatedUsage] = []
        self.rejections: list[Rejection] = []
        self.unscripted: list[JsonObject] = []
        self.token_count_requests: list[JsonObject] = []
        self.script_errors: list[Exception] = []
        self.turns_served = 0
        self._id_counters: dict[str, int] = {}
        self._runner: web.AppRunner | None = None
        self._url: str | None = None
        self._clients: list[AsyncAnthropic] = []

    @property
    def url(self) -> str:
        """The base URL to give `AsyncAnthropic(base_url=...)`."""
        if self._url is None:
            raise RuntimeError("the fake Anthropic server is not running")
        return self._url

    @property
    def script_exhausted(self) -> bool:
        """Whether some request arrived after the script had run out."""
        return bool(self.unscripted)

    async def start(self) -> FakeAnthropicServer:
        app = web.Application()
        app.router.add_post("/v1/messages", self._handle_messages)
        app.router.add_post("/v1/messages/count_tokens", self._handle_count_tokens)
        app.router.add_route("*", "/{tail:.*}", self._handle_unknown)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, self._host, 0)
        await site.start()
        self._runner = runner
        host, port = runner.addresses[0][:2]
        self._url = f"http://{host}:{port}"
        return self

    async def stop(self) -> None:
        """Close the clients made by `client()`, then the server."""
        clients, self._clients = self._clients, []
        for client in clients:
            await client.close()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
            self._url = None

    async def __aenter__(self) -> FakeAnthropicServer:
        return await self.start()

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()

    def client(
        self, *, api_key: str = "test-key", max_retries: int = 0, **options: Any
    ) -> AsyncAnthropic:
        """An `AsyncAnthropic` bound to this server, closed when the server stops.

        Retries default to none so a failure shows at once; pass `max_retries` to test them.
        """
        client = AsyncAnthropic(
            base_url=self.url, api_key=api_key, max_retries=max_retries, **options
        )
        self._clients.append(client)
        return client

    def add_turns(self, *turns: Turn) -> None:
        """Append turns to a list script."""
        if self._turns is None:
            raise TypeError("this server plays a script function, not a list of turns")
        self._turns.extend(turns)

    def _next_id(self, prefix: str) -> str:
        number = self._id_counters.get(prefix, 0) + 1
        self._id_counters[prefix] = number
        return f"{prefix}_fake{number:016d}"

    async def _next_turn(self, body: JsonObject) -> Turn | None:
        if self._script_function is not None:
            turn = self._script_function(body)
            if inspect.isawaitable(turn):
                turn = await turn
            return turn
        return self._turns.pop(0) if self._turns else None

    def _error(
        self, status: int, error_type: str, message: str, headers: Mapping[str, str] | None = None
    ) -> web.Response:
        request_id = self._next_id("req")
        payload = {
            "type": "error",
            "error": {"type": error_type, "message": message},
            "request_id": request_id,
        }
        return web.json_response(
            payload, status=status, headers={"request-id": request_id, **(headers or {})}
        )

    def _refuse(self, body: object, rejected: RequestRejected) -> web.Response:
        self.rejections.append(
            Rejection(rejected.status, rejected.error_type, rejected.message, body)
        )
        return self._error(rejected.status, rejected.error_type, rejected.message)

    async def _read_body(self, request: web.Request) -> object:
        raw = await request.read()
        try:
            return json.loads(raw)
        except ValueError as error:
            raise RequestRejected(
                f"There was an issue with your request body: invalid JSON ({error})"
            ) from error

    async def _handle_messages(self, request: web.Request) -> web.StreamResponse:
        try:
            body = await self._read_body(request)
        except RequestRejected as rejected:
            return self._refuse(None, rejected)
        if isinstance(body, dict):
            self.requests.append(body)
        try:
            check_headers(request.headers, api_key=self._api_key)
            valid = validate_request(body)
            check_model(valid, self.models)
        except RequestRejected as rejected:
            return self._refuse(body, rejected)
        try:
            turn = await self._next_turn(valid)
        except Exception as error:
            self.script_errors.append(error)
            return self._error(
                500,
                "api_error",
                f"fake Anthropic server: the script function raised {error!r}",
                {"x-should-retry": "false"},
            )
        if turn is None:
            self.unscripted.append(valid)
            return self._error(
                500,
                "api_error",
                f"fake Anthropic server: script exhausted after {self.turns_served} turn(s); "
                f"request #{len(self.requests)} was not scripted",
                {"x-should-retry": "false"},
            )
        self.turns_served += 1
        if isinstance(turn, ErrorReply):
            headers = {}
            if turn.retry_after is not None:
                headers["retry-after-ms"] = str(max(1, round(turn.retry_after * 1000)))
            return self._error(turn.status, turn.error_type, turn.message, headers)
        try:
            message = self._render(turn, valid)
        except ValueError as error:
            self.script_errors.append(error)
            return self._error(
                500, "api_error", f"fake Anthropic server: {error}", {"x-should-retry": "false"}
            )
        if valid.get("stream"):
            return await self._stream(request, message)
        return web.json_response(message, headers={"request-id": self._next_id("req")})

    async def _handle_count_tokens(self, request: web.Request) -> web.Response:
        try:
            body = await self._read_body(request)
        except RequestRejected as rejected:
            return self._refuse(None, rejected)
        if isinstance(body, dict):
            self.token_count_requests.append(body)
        try:
            check_headers(request.headers, api_key=self._api_key)
            valid = validate_request(body, count_tokens=True)
            if valid["model"] not in self.models:
                raise RequestRejected(f"model: {valid['model']}", status=404)
        except RequestRejected as rejected:
            return self._refuse(body, rejected)
        tokens = sum(part.tokens for part in prompt_parts(valid))
        return web.json_response({"input_tokens": tokens})

    async def _handle_unknown(self, request: web.Request) -> web.Response:
        return self._error(404, "not_found_error", f"Not Found: {request.method} {request.path}")

    def _render_block(self, block: AssistantBlock) -> JsonObject:
        if isinstance(block, Text):
            return {"type": "text", "text": block.text}
        if isinstance(block, Thinking):
            signature = block.signature or thinking_signature(block.thinking)
            return {"type": "thinking", "thinking": block.thinking, "signature": signature}
        tool_use_id = block.id or self._next_id("toolu")
        if tool_use_id in self._served_tool_use_ids:
            raise ValueError(
                f"the script reuses tool_use id {tool_use_id!r}; the API never repeats one"
            )
        self._served_tool_use_ids.add(tool_use_id)
        return {
            "type": "tool_use",
            "id": tool_use_id,
            "name": block.name,
            "input": dict(block.input),
        }

    def _render(self, reply: Reply, body: JsonObject) -> JsonObject:
        content = [self._render_block(block) for block in reply.blocks]
        if reply.output_tokens is not None:
            output_tokens = reply.output_tokens
        elif reply.stop_reason == "max_tokens":
            output_tokens = body["max_tokens"]
        else:
            output_tokens = max(1, estimate_tokens(content))
        usage = self.cache.account(body, output_tokens)
        self.usages.append(usage)
        message: JsonObject = {
            "id": self._next_id("msg"),
            "type": "message",
            "role": "assistant",
            "model": body["model"],
            "content": content,
            "stop_reason": reply.stop_reason,
            "stop_sequence": None,
            "usage": usage.as_json(),
        }
        if reply.stop_reason == "refusal":
            message["stop_details"] = {
                "type": "refusal",
                "category": reply.refusal_category,
                "explanation": reply.refusal_explanation,
            }
        self.responses.append(message)
        return message

    async def _stream(self, request: web.Request, message: JsonObject) -> web.StreamResponse:
        response = web.StreamResponse(
            headers={
                "content-type": "text/event-stream",
                "cache-control": "no-cache",
                "request-id": self._next_id("req"),
            }
        )
        await response.prepare(request)
        for event in stream_events(message):
            data = canonical_json(event)
            await response.write(f"event: {event['type']}\ndata: {data}\n\n".encode())
        await response.write_eof()
        return response


def _chunks(text: str, size: int = 24) -> list[str]:
    return [text[start : start + size] for start in range(0, len(text), size)] or [""]


def stream_events(message: JsonObject) -> Iterator[JsonObject]:
    """The server-sent events that deliver `message` when the request asked for `stream`."""
    usage = message["usage"]
    yield {
        "type": "message_start",
        "message": {
            **message,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {**usage, "output_tokens": 1},
        },
    }
    yield {"type": "ping"}
    for index, block in enumerate(message["content"]):
        if block["type"] == "text":
            start: JsonObject = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": piece} for piece in _chunks(block["text"])]
        elif block["type"] == "thinking":
            start = {"type": "thinking", "thinking": "", "signature": ""}
            deltas = [
                *({"type": "thinking_delta", "thinking": p} for p in _chunks(block["thinking"])),
                {"type": "signature_delta", "signature": block["signature"]},
            ]
        else:
            start = {**block, "input": {}}
            deltas = [
                {"type": "input_json_delta", "partial_json": piece}
                for piece in _chunks(json.dumps(block["input"]))
            ]
        yield {"type": "content_block_start", "index": index, "content_block": start}
        for delta in deltas:
            yield {"type": "content_block_delta", "index": index, "delta": delta}
        yield {"type": "content_block_stop", "index": index}
    yield {
        "type": "message_delta",
        "delta": {
            "stop_reason": message["stop_reason"],
            "stop_sequence": None,
            "stop_details": message.get("stop_details"),
        },
        "usage": {"output_tokens": usage["output_tokens"]},
    }
    yield {"type": "message_stop"}


# --- several servers -------------------------------------------------------------------------


class FakeAnthropicServers:
    """Starts fake servers for one test and stops them all when it ends."""

    def __init__(self) -> None:
        self._servers: list[FakeAnthropicServer] = []

    async def start(
        self,
        script: Script = (),
        *,
        api_key: str | None = None,
        min_cacheable_tokens: int = 0,
        cache_lookback_blocks: int = 20,
    ) -> FakeAnthropicServer:
        server = FakeAnthropicServer(
            script,
            api_key=api_key,
            min_cacheable_tokens=min_cacheable_tokens,
            cache_lookback_blocks=cache_lookback_blocks,
        )
        self._servers.append(server)
        return await server.start()

    async def stop_all(self) -> None:
        servers, self._servers = self._servers, []
        for server in reversed(servers):
            await server.stop()
