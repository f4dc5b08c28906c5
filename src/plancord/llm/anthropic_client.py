"""The ``ModelClient`` port over the official ``anthropic`` SDK (``AsyncAnthropic``).

This is the only module that imports ``anthropic``. It speaks the Messages API's JSON shapes
both ways and turns what is left of an API failure into ``ModelCallFailed`` with a message a
user can read (``ContextTooLong`` when the prompt does not fit, so the runtime can compact).

Retries (rate limits, overload, 5xx, lost connections) are done here, one attempt at a time,
not by the SDK: the rate-limit slot (``max_concurrent_requests``) is held only while an
attempt is in flight and released while waiting to retry, so one agent backing off does not
hold a slot every other agent needs.
"""

from __future__ import annotations

import asyncio
import random
from typing import Any

import anthropic
import pydantic

from plancord.core.errors import ContextTooLong, ModelCallFailed, RequestTooLarge
from plancord.core.ports import ModelReply, ModelRequest, ModelUsage

RETRY_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504, 529})
BASE_DELAY_SECONDS = 0.5
MAX_DELAY_SECONDS = 30.0


class AnthropicModelClient:
    def __init__(
        self,
        *,
        api_key: str,
        base_url: str | None = None,
        max_retries: int = 2,
        timeout_seconds: float = 600.0,
        max_concurrent_requests: int = 16,
    ) -> None:
        # One bot, one API key: the requests of every agent share these slots, first come
        # first served. Bounding them bounds the event loop's work (each reply is parsed and
        # its tool calls run on it) and the connections the SDK's pool walks per request.
        self._slots = asyncio.Semaphore(max_concurrent_requests)
        self._max_retries = max_retries
        self._client = anthropic.AsyncAnthropic(
            api_key=api_key, base_url=base_url, max_retries=0, timeout=timeout_seconds
        )

    async def create(self, request: ModelRequest) -> ModelReply:
        kwargs: dict[str, Any] = {
            "model": request.model,
            "max_tokens": request.max_tokens,
            "messages": request.messages,
        }
        if request.system:
            kwargs["system"] = request.system
        if request.tools:
            kwargs["tools"] = request.tools
        if request.thinking is not None:
            kwargs["thinking"] = request.thinking
        if request.tool_choice is not None:
            kwargs["tool_choice"] = request.tool_choice
        if request.output_config is not None:
            kwargs["output_config"] = request.output_config
        attempt = 0
        while True:
            try:
                async with self._slots:
                    message = await self._client.messages.create(**kwargs)
                return _reply_of(message)
            except anthropic.APIStatusError as exc:
                if exc.status_code not in RETRY_STATUSES or attempt >= self._max_retries:
                    raise _status_failure(exc) from exc
                delay = _retry_after(exc) or _backoff(attempt)
            except (anthropic.APIConnectionError, anthropic.APITimeoutError) as exc:
                if attempt >= self._max_retries:
                    raise ModelCallFailed(f"Could not reach the model API: {exc}") from exc
                delay = _backoff(attempt)
            except (anthropic.APIResponseValidationError, pydantic.ValidationError) as exc:
                raise ModelCallFailed(
                    f"The model API sent a reply plancord could not read: {_first_line(exc)}"
                ) from exc
            except anthropic.APIError as exc:
                raise ModelCallFailed(f"The model API failed: {exc}") from exc
            attempt += 1
            await asyncio.sleep(delay)

    async def close(self) -> None:
        await self._client.close()


def _reply_of(message: Any) -> ModelReply:
    """The SDK's message as the port's reply; what the SDK let through but we cannot use is
    a readable failure, not an ``AttributeError`` later."""
    try:
        usage = message.usage
        content = [block.model_dump(mode="json", exclude_none=True) for block in message.content]
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


def _backoff(attempt: int) -> float:
    delay: float = min(MAX_DELAY_SECONDS, BASE_DELAY_SECONDS * 2**attempt)
    return delay * (0.75 + random.random() / 2)  # noqa: S311 - jitter, not a secret


def _retry_after(exc: anthropic.APIStatusError) -> float | None:
    headers = exc.response.headers
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        raw = headers.get(name)
        if raw is None:
            continue
        try:
            seconds = float(raw) / scale
        except ValueError:
            continue
        if 0 <= seconds <= 60:
            return max(seconds, 0.001)
    return None


def _status_failure(exc: anthropic.APIStatusError) -> ModelCallFailed:
    detail = ""
    body = exc.body
    if isinstance(body, dict):
        error = body.get("error")
        if isinstance(error, dict):
            detail = str(error.get("message") or "")
    detail = detail or str(exc)
    if exc.status_code == 400 and "prompt is too long" in detail.lower():
        return ContextTooLong(f"The conversation is too long for the model: {detail}")
    if exc.status_code == 413:
        return RequestTooLarge(f"The conversation is too large for the model API: {detail}")
    if exc.status_code == 401:
        return ModelCallFailed("The model API refused the key (ANTHROPIC_API_KEY): " + detail)
    if exc.status_code == 404:
        return ModelCallFailed(f"The model API does not know this model: {detail}")
    if exc.status_code == 429:
        return ModelCallFailed(
            "The model API is rate-limiting this bot; try again shortly. " + detail
        )
    if exc.status_code >= 500:
        return ModelCallFailed(
            f"The model API is unavailable ({exc.status_code}); try again shortly. " + detail
        )
    return ModelCallFailed(f"The model API rejected the request ({exc.status_code}): {detail}")
