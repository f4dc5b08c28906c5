"""The ``ModelClient`` port over the official ``anthropic`` SDK (``AsyncAnthropic``).

This is the only module that imports ``anthropic``. It speaks the Messages API's JSON shapes
both ways and turns what is left of an API failure into ``ModelCallFailed`` with a message a
user can read (``ContextTooLong`` when the prompt does not fit, so the runtime can compact;
``ThinkingPrefixMismatch`` when a thinking block failed the prefix check, so the runtime can
resend with ``drop_block``).

What the request carries goes through unchanged: ``thinking``, ``output_config``, the
top-level ``cache_control`` and ``betas`` (sent the SDK's way, as the ``anthropic-beta``
header of its beta Messages method, whose reply carries ``input_transformations``). What
would certainly be refused is refused here, before sending, with the reason: a retired model
id, a forced ``tool_choice`` to a model that refuses it.

Retries (``llm/retry_policy.py``) are done here, one attempt at a time, not by the SDK: the
rate-limit slot (``max_concurrent_requests``) is held only while an attempt is in flight and
released while waiting to retry, so one agent backing off does not hold a slot every other
agent needs.
"""

from __future__ import annotations

import asyncio
import functools
import ssl
from typing import Any

import anthropic
import httpx2
import pydantic

from plancord.core.errors import (
    ContextTooLong,
    ModelCallFailed,
    RequestTooLarge,
    ThinkingPrefixMismatch,
)
from plancord.core.ports import ModelReply, ModelRequest, ModelUsage
from plancord.llm.api_version import check_api_version
from plancord.llm.models import MODEL_CAPABILITIES, retired_model_message
from plancord.llm.retry_policy import (
    MAX_RETRY_AFTER_SECONDS,
    SPEND_LIMIT,
    backoff,
    error_code,
    retry_after_seconds,
    retry_at,
    should_retry,
)

PREFIX_MISMATCH = "The block is bound to a different conversation"
"""The prefix-check 400's own words (preserved-thinking/fix-bound-to-a-different-
conversation): "messages.N.content.M: Invalid `signature` in `thinking` block. The block is
bound to a different conversation. Remove the block, or set
`thinking.block_binding.prefix_mismatch_behavior` to "drop_block"."."""


@functools.cache
def tls_context() -> ssl.SSLContext:
    """The one TLS context every client of this process verifies the API with: the SDK's
    default (the system's trust store), made once. Reading the trust store costs tens of
    milliseconds of CPU, and a client made its own each time one was built."""
    return httpx2.create_ssl_context()


class AnthropicModelClient:
    def __init__(
        self,
        *,
        api_key: str,
        base_url: str | None = None,
        max_retries: int = 2,
        timeout_seconds: float = 600.0,
        max_concurrent_requests: int = 16,
        max_retry_after_seconds: float = MAX_RETRY_AFTER_SECONDS,
    ) -> None:
        # One bot, one API key: the requests of every agent share these slots, first come
        # first served. Bounding them bounds the event loop's work (each reply is parsed and
        # its tool calls run on it) and the connections the SDK's pool walks per request.
        self._slots = asyncio.Semaphore(max_concurrent_requests)
        self._max_retries = max_retries
        self._max_retry_after = max_retry_after_seconds
        self._client = anthropic.AsyncAnthropic(
            api_key=api_key,
            base_url=base_url,
            max_retries=0,
            timeout=timeout_seconds,
            http_client=anthropic.DefaultAsyncHttpxClient(
                verify=tls_context(), timeout=timeout_seconds
            ),
        )
        check_api_version(self._client.default_headers)

    async def create(self, request: ModelRequest) -> ModelReply:
        refusal = refused_before_sending(request)
        if refusal is not None:
            raise ModelCallFailed(refusal)
        kwargs = request_kwargs(request)
        attempt = 0
        while True:
            try:
                async with self._slots:
                    message = await self._send(kwargs, request.betas)
                return _reply_of(message)
            except anthropic.APIStatusError as exc:
                delay = self._delay_before_retry(exc, attempt)
            except (anthropic.APIConnectionError, anthropic.APITimeoutError) as exc:
                if attempt >= self._max_retries:
                    raise ModelCallFailed(f"Could not reach the model API: {exc}") from exc
                delay = backoff(attempt)
            except (anthropic.APIResponseValidationError, pydantic.ValidationError) as exc:
                raise ModelCallFailed(
                    f"The model API sent a reply plancord could not read: {_first_line(exc)}"
                ) from exc
            except anthropic.APIError as exc:
                raise ModelCallFailed(f"The model API failed: {exc}") from exc
            attempt += 1
            await asyncio.sleep(delay)

    async def _send(self, kwargs: dict[str, Any], betas: tuple[str, ...]) -> Any:
        if betas:
            return await self._client.beta.messages.create(**kwargs, betas=list(betas))
        return await self._client.messages.create(**kwargs)

    def _delay_before_retry(self, exc: anthropic.APIStatusError, attempt: int) -> float:
        """How long to wait before the next attempt; raises the failure when there is none."""
        headers = exc.response.headers
        if attempt >= self._max_retries or not should_retry(exc.status_code, headers, exc.body):
            raise _status_failure(exc) from exc
        wait = retry_after_seconds(headers)
        if wait is None:
            return backoff(attempt)
        if wait > self._max_retry_after:
            raise ModelCallFailed(
                f"The model API asks plancord to wait {wait:.0f} s before trying again "
                f"({exc.status_code}); try again after {retry_at(wait)}. {_detail(exc)}"
            ) from exc
        return max(wait, 0.001)

    async def close(self) -> None:
        await self._client.close()


def refused_before_sending(request: ModelRequest) -> str | None:
    """Why the API would certainly refuse ``request``, or None: a retired model, a forced
    tool choice to a model the table says refuses it."""
    retired = retired_model_message(request.model)
    if retired is not None:
        return retired
    forced = request.tool_choice is not None and request.tool_choice.get("type") in (
        "any",
        "tool",
    )
    if not forced:
        return None
    caps = MODEL_CAPABILITIES.get(request.model)
    if caps is not None and not caps.forced_tool_choice:
        return f"{request.model} refuses a forced tool_choice; let the model choose (auto)."
    return None


def request_kwargs(request: ModelRequest) -> dict[str, Any]:
    """The SDK call's arguments: only what the request sets (never a sampling parameter)."""
    kwargs: dict[str, Any] = {
        "model": request.model,
        "max_tokens": request.max_tokens,
        "messages": request.messages,
    }
    optional = {
        "system": request.system or None,
        "tools": request.tools or None,
        "thinking": request.thinking,
        "tool_choice": request.tool_choice,
        "output_config": request.output_config,
        "cache_control": request.cache_control,
    }
    kwargs.update({name: value for name, value in optional.items() if value is not None})
    return kwargs


def _reply_of(message: Any) -> ModelReply:
    """The SDK's message as the port's reply; what the SDK let through but we cannot use is
    a readable failure, not an ``AttributeError`` later."""
    try:
        usage = message.usage
        content = [block.model_dump(mode="json", exclude_none=True) for block in message.content]
        details = getattr(message, "stop_details", None)
        transformations = getattr(message, "input_transformations", None) or []
        reply = ModelReply(
            content=content,
            stop_reason=message.stop_reason,
            usage=ModelUsage(
                input_tokens=usage.input_tokens,
                output_tokens=usage.output_tokens,
                cache_read_input_tokens=usage.cache_read_input_tokens or 0,
                cache_creation_input_tokens=usage.cache_creation_input_tokens or 0,
            ),
            model=message.model,
            stop_details=(
                details.model_dump(mode="json", exclude_none=True) if details is not None else None
            ),
            input_transformations=tuple(
                t.model_dump(mode="json", exclude_none=True) for t in transformations
            ),
        )
    except (AttributeError, TypeError, ValueError) as exc:
        raise ModelCallFailed(
            f"The model API sent a reply plancord could not read: {_first_line(exc)}"
        ) from exc
    for index, block in enumerate(reply.content):
        if not isinstance(block, dict) or not isinstance(block.get("type"), str):
            raise ModelCallFailed(
                f"The model API sent a reply plancord could not read: content block {index} "
                "has no type."
            )
    return reply


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def _error_field(exc: anthropic.APIStatusError, name: str) -> str | None:
    """``error.<name>`` of the API's error body, when it is a string."""
    body = exc.body
    error = body.get("error") if isinstance(body, dict) else None
    value = error.get(name) if isinstance(error, dict) else None
    return value if isinstance(value, str) else None


def _detail(exc: anthropic.APIStatusError) -> str:
    return _error_field(exc, "message") or str(exc)


def _status_failure(exc: anthropic.APIStatusError) -> ModelCallFailed:
    detail = _detail(exc)
    status = exc.status_code
    wait = retry_after_seconds(exc.response.headers)
    later = f" Try again after {retry_at(wait)}." if wait is not None else ""
    if (
        status == 400
        and _error_field(exc, "type") == "invalid_request_error"
        and PREFIX_MISMATCH in detail
    ):
        return ThinkingPrefixMismatch(
            "The model API refused a thinking block sent back because the conversation "
            f"before it changed: {detail}"
        )
    if status == 400 and "prompt is too long" in detail.lower():
        return ContextTooLong(f"The conversation is too long for the model: {detail}")
    if status == 413:
        return RequestTooLarge(f"The conversation is too large for the model API: {detail}")
    if status == 401:
        return ModelCallFailed("The model API refused the key (ANTHROPIC_API_KEY): " + detail)
    if status == 404:
        return ModelCallFailed(f"The model API does not know this model: {detail}")
    if status == 429 and error_code(exc.body) == SPEND_LIMIT:
        return ModelCallFailed(
            "The model API account reached its monthly spend limit; no request succeeds "
            f"until it resets or the limit is raised. {detail}"
        )
    if status == 429:
        return ModelCallFailed(
            f"The model API is rate-limiting this bot; try again shortly.{later} {detail}"
        )
    if status >= 500:
        return ModelCallFailed(
            f"The model API is unavailable ({status}); try again shortly.{later} {detail}"
        )
    return ModelCallFailed(f"The model API rejected the request ({status}): {detail}")
