"""``AnthropicModelClient`` on the wire: the real SDK over HTTP against a tiny local server
that records what arrives and answers with the service's documented shapes and headers
(``x-should-retry``, ``retry-after``, the prefix-check 400, a refusal with ``stop_details``,
``input_transformations``), which the scripted fake does not make."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field, replace
from typing import Any

import pytest
from aiohttp import web

from plancord.core.errors import ModelCallFailed, ThinkingPrefixMismatch
from plancord.core.ports import ModelRequest
from plancord.llm.anthropic_client import AnthropicModelClient
from plancord.llm.api_version import API_VERSION, check_api_version

MODEL = "claude-sonnet-5-5"

PREFIX_MISMATCH_MESSAGE = (
    "messages.1.content.0: Invalid `signature` in `thinking` block. The block is bound to a "
    "different conversation. Remove the block, or set "
    '`thinking.block_binding.prefix_mismatch_behavior` to "drop_block".'
)


def message(content: list[dict[str, Any]], stop_reason: str = "end_turn", **extra: Any) -> Any:
    return {
        "id": "msg_01",
        "type": "message",
        "role": "assistant",
        "model": MODEL,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 5},
        **extra,
    }


def error(status: int, kind: str, text: str, **headers: str) -> web.Response:
    body = {"type": "error", "error": {"type": kind, "message": text}}
    return web.json_response(body, status=status, headers=headers)


Answer = Callable[[int], web.Response]


@dataclass
class Wire:
    """What arrived: each request's path (with query), headers and body."""

    answers: list[Answer]
    seen: list[tuple[str, dict[str, str], dict[str, Any]]] = field(default_factory=list)
    url: str = ""

    async def handle(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.seen.append((request.path_qs, dict(request.headers), body))
        answer = self.answers[min(len(self.seen), len(self.answers)) - 1]
        return answer(len(self.seen))


@pytest.fixture
async def wire() -> AsyncIterator[Callable[..., Any]]:
    runners: list[web.AppRunner] = []

    async def start(*answers: Answer) -> Wire:
        recorder = Wire(list(answers))
        app = web.Application()
        app.router.add_post("/v1/messages", recorder.handle)
        runner = web.AppRunner(app)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        host, port = runner.addresses[0][:2]
        recorder.url = f"http://{host}:{port}"
        runners.append(runner)
        return recorder

    yield start
    for runner in runners:
        await runner.cleanup()


def ok(content: list[dict[str, Any]] | None = None, **extra: Any) -> Answer:
    return lambda _: web.json_response(
        message(content or [{"type": "text", "text": "ok"}], **extra)
    )


def request(**changes: Any) -> ModelRequest:
    base = ModelRequest(
        model=MODEL,
        max_tokens=1024,
        system=[{"type": "text", "text": "You are terse."}],
        tools=[],
        messages=[{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
    )
    return replace(base, **changes)


async def call(recorder: Wire, req: ModelRequest, **client_options: Any) -> Any:
    client = AnthropicModelClient(api_key="k", base_url=recorder.url, **client_options)
    try:
        return await client.create(req)
    finally:
        await client.close()


async def test_every_request_says_the_api_version_plancord_speaks(wire: Any) -> None:
    recorder = await wire(ok())
    await call(recorder, request())
    _, headers, _ = recorder.seen[0]
    assert headers["anthropic-version"] == API_VERSION == "2026-10-21"


def test_an_sdk_sending_another_version_is_a_clear_error() -> None:
    with pytest.raises(ModelCallFailed, match=r"anthropic-version '2023-06-01'.*2026-10-21"):
        check_api_version({"anthropic-version": "2023-06-01"})


async def test_output_config_cache_control_and_betas_go_through(wire: Any) -> None:
    dropped = {
        "type": "thinking_dropped",
        "path": "messages.1.content.0",
        "reason": "prefix_binding_mismatch",
    }
    recorder = await wire(ok(input_transformations=[dropped]))
    thinking = {
        "type": "adaptive",
        "display": "updates",
        "block_binding": {"prefix_mismatch_behavior": "drop_block"},
    }
    reply = await call(
        recorder,
        request(
            thinking=thinking,
            output_config={"effort": "medium"},
            cache_control={"type": "ephemeral"},
            betas=("thinking-display-updates-2026-08-18", "thinking-binding-controls-2026-08-01"),
        ),
    )
    path, headers, body = recorder.seen[0]
    assert path == "/v1/messages"
    assert headers["anthropic-beta"] == (
        "thinking-display-updates-2026-08-18,thinking-binding-controls-2026-08-01"
    )
    assert body["thinking"] == thinking
    assert body["output_config"] == {"effort": "medium"}
    assert body["cache_control"] == {"type": "ephemeral"}
    assert not {"temperature", "top_p", "top_k"} & body.keys()
    assert reply.input_transformations == (dropped,)


async def test_a_request_without_betas_sends_no_beta_header(wire: Any) -> None:
    recorder = await wire(ok())
    await call(recorder, request(output_config={"effort": "low"}))
    _, headers, body = recorder.seen[0]
    assert "anthropic-beta" not in {name.lower() for name in headers}
    assert body["output_config"] == {"effort": "low"}
    assert "thinking" not in body and "cache_control" not in body


async def test_a_refusal_keeps_its_stop_details(wire: Any) -> None:
    details = {"type": "refusal", "category": "cyber", "explanation": "Exploit development."}
    recorder = await wire(ok([], stop_reason="refusal", stop_details=details))
    reply = await call(recorder, request())
    assert reply.stop_reason == "refusal"
    assert reply.stop_details == details


async def test_the_prefix_check_400_is_named(wire: Any) -> None:
    recorder = await wire(lambda _: error(400, "invalid_request_error", PREFIX_MISMATCH_MESSAGE))
    with pytest.raises(ThinkingPrefixMismatch, match="bound to a different conversation"):
        await call(recorder, request())
    assert len(recorder.seen) == 1


async def test_another_signature_400_is_not_taken_for_a_prefix_mismatch(wire: Any) -> None:
    text = "messages.1.content.0: Invalid `signature` in `thinking` block"
    recorder = await wire(lambda _: error(400, "invalid_request_error", text))
    with pytest.raises(ModelCallFailed) as raised:
        await call(recorder, request())
    assert not isinstance(raised.value, ThinkingPrefixMismatch)
    assert "rejected the request (400)" in str(raised.value)


async def test_x_should_retry_false_wins_over_the_status_table(wire: Any) -> None:
    recorder = await wire(
        lambda _: error(529, "overloaded_error", "Overloaded", **{"x-should-retry": "false"})
    )
    with pytest.raises(ModelCallFailed, match=r"unavailable \(529\)"):
        await call(recorder, request(), max_retries=3)
    assert len(recorder.seen) == 1


async def test_x_should_retry_true_retries_what_the_table_would_not(wire: Any) -> None:
    first = lambda _: error(  # noqa: E731 - one scripted answer
        400,
        "invalid_request_error",
        "try me again",
        **{"x-should-retry": "true", "retry-after-ms": "5"},
    )
    recorder = await wire(first, ok())
    reply = await call(recorder, request(), max_retries=1)
    assert reply.content == [{"type": "text", "text": "ok"}]
    assert len(recorder.seen) == 2


async def test_retry_after_ms_is_honoured(wire: Any) -> None:
    limited = lambda _: error(  # noqa: E731 - one scripted answer
        429, "rate_limit_error", "slow down", **{"retry-after-ms": "300"}
    )
    recorder = await wire(limited, ok())
    started = time.monotonic()
    await call(recorder, request(), max_retries=1)
    assert time.monotonic() - started >= 0.3
    assert len(recorder.seen) == 2


async def test_a_wait_past_the_bound_is_a_failure_naming_when_to_retry(wire: Any) -> None:
    limited = lambda _: error(  # noqa: E731 - one scripted answer
        429, "rate_limit_error", "slow down", **{"retry-after": "900"}
    )
    recorder = await wire(limited, ok())
    started = time.monotonic()
    with pytest.raises(
        ModelCallFailed, match=r"wait 900 s .*try again after \d{4}-\d\d-\d\d \d\d:\d\d UTC"
    ):
        await asyncio.wait_for(call(recorder, request(), max_retries=3), timeout=5)
    assert time.monotonic() - started < 5
    assert len(recorder.seen) == 1


async def test_the_monthly_spend_limit_is_not_retried(wire: Any) -> None:
    def capped(_: int) -> web.Response:
        body = {
            "type": "error",
            "error": {
                "type": "rate_limit_error",
                "message": "spend limit reached",
                "details": {"error_code": "enforced_spend_limit_reached"},
            },
        }
        return web.json_response(body, status=429)

    recorder = await wire(capped, ok())
    with pytest.raises(ModelCallFailed, match="monthly spend limit"):
        await call(recorder, request(), max_retries=3)
    assert len(recorder.seen) == 1


async def test_a_retired_model_is_refused_before_sending(wire: Any) -> None:
    recorder = await wire(ok())
    with pytest.raises(ModelCallFailed) as raised:
        await call(recorder, request(model="claude-3-7-sonnet-20250219"))
    assert str(raised.value) == (
        "claude-3-7-sonnet-20250219 was retired on February 19, 2026; use claude-sonnet-5-5 "
        "(set anthropic.model or agents.<name>.model)"
    )
    assert recorder.seen == []


async def test_a_forced_tool_choice_is_refused_before_sending_to_a_model_that_refuses_it(
    wire: Any,
) -> None:
    recorder = await wire(ok())
    tool = {"name": "report", "input_schema": {"type": "object"}}
    forced = request(tools=[tool], tool_choice={"type": "tool", "name": "report"})
    with pytest.raises(ModelCallFailed, match="claude-sonnet-5-5 refuses a forced tool_choice"):
        await call(recorder, forced)
    assert recorder.seen == []
    await call(recorder, replace(forced, model="claude-sonnet-5"))
    assert recorder.seen[0][2]["tool_choice"] == {"type": "tool", "name": "report"}
