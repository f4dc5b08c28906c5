"""The ``ModelClient`` port over the official ``anthropic`` SDK (``AsyncAnthropic``).

This is the only module that imports ``anthropic``. It speaks the Messages API's JSON shapes
both ways, keeps the SDK's own retries (rate limits, overload, 5xx), and turns what is left of
an API failure into ``ModelCallFailed`` with a message a user can read.
"""

from __future__ import annotations

import asyncio
from typing import Any

import anthropic

from plancord.core.errors import ModelCallFailed
from plancord.core.ports import ModelReply, ModelRequest, ModelUsage


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
        self._client = anthropic.AsyncAnthropic(
            api_key=api_key,
            base_url=base_url,
            max_retries=max_retries,
            timeout=timeout_seconds,
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
        try:
            async with self._slots:
                message = await self._client.messages.create(**kwargs)
        except anthropic.APIStatusError as exc:
            raise ModelCallFailed(_status_message(exc)) from exc
        except anthropic.APIConnectionError as exc:
            raise ModelCallFailed(f"Could not reach the model API: {exc}") from exc
        except anthropic.APIError as exc:
            raise ModelCallFailed(f"The model API failed: {exc}") from exc
        usage = message.usage
        return ModelReply(
            content=[block.model_dump(mode="json", exclude_none=True) for block in message.content],
            stop_reason=message.stop_reason,
            usage=ModelUsage(
                input_tokens=usage.input_tokens,
                output_tokens=usage.output_tokens,
                cache_read_input_tokens=usage.cache_read_input_tokens or 0,
                cache_creation_input_tokens=usage.cache_creation_input_tokens or 0,
            ),
            model=message.model,
        )

    async def close(self) -> None:
        await self._client.close()


def _status_message(exc: anthropic.APIStatusError) -> str:
    detail = ""
    body = exc.body
    if isinstance(body, dict):
        error = body.get("error")
        if isinstance(error, dict):
            detail = str(error.get("message") or "")
    detail = detail or str(exc)
    if exc.status_code == 401:
        return "The model API refused the key (ANTHROPIC_API_KEY): " + detail
    if exc.status_code == 429:
        return "The model API is rate-limiting this bot; try again shortly. " + detail
    if exc.status_code >= 500:
        return f"The model API is unavailable ({exc.status_code}); try again shortly. " + detail
    return f"The model API rejected the request ({exc.status_code}): {detail}"
