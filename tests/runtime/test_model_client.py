"""``AnthropicModelClient``: the real SDK over HTTP against the fake Messages API."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

import pytest
from aiohttp import web

from plancord.core.errors import ContextTooLong, ModelCallFailed
from plancord.core.ports import ModelRequest
from plancord.llm.anthropic_client import AnthropicModelClient
from plancord.llm.models import ModelLimits
from tests.fakes.anthropic_server import FakeAnthropicServer, error_turn, text_turn

MODEL = "claude-fake-test-model"


def request(text: str) -> ModelRequest:
    return ModelRequest(
        model=MODEL,
        max_tokens=64,
        system=[],
        tools=[],
        messages=[{"role": "user", "content": [{"type": "text", "text": text}]}],
    )


async def test_requests_beyond_the_limit_wait_for_a_free_slot() -> None:
    in_flight = 0
    most = 0

    async def answer(body: dict[str, Any]) -> Any:
        nonlocal in_flight, most
        in_flight += 1
        most = max(most, in_flight)
        await asyncio.sleep(0.05)
        in_flight -= 1
        return text_turn("ok: " + body["messages"][0]["content"][0]["text"])

    server = await FakeAnthropicServer(answer).start()
    client = AnthropicModelClient(
        api_key="test-key", base_url=server.url, max_retries=0, max_concurrent_requests=2
    )
    try:
        replies = await asyncio.gather(*(client.create(request(f"n{n}")) for n in range(7)))
    finally:
        await client.close()
        await server.stop()
    assert [r.content[0]["text"] for r in replies] == [f"ok: n{n}" for n in range(7)]
    assert most == 2


async def test_a_cancelled_request_gives_its_slot_back() -> None:
    release = asyncio.Event()

    async def answer(body: dict[str, Any]) -> Any:
        if body["messages"][0]["content"][0]["text"] == "slow":
            await release.wait()
        return text_turn("ok")

    server = await FakeAnthropicServer(answer).start()
    client = AnthropicModelClient(
        api_key="test-key", base_url=server.url, max_retries=0, max_concurrent_requests=1
    )
    try:
        slow = asyncio.ensure_future(client.create(request("slow")))
        await asyncio.sleep(0.05)
        waiting = asyncio.ensure_future(client.create(request("next")))
        await asyncio.sleep(0.05)
        assert not waiting.done()
        slow.cancel()
        reply = await asyncio.wait_for(waiting, timeout=5)
        assert reply.content[0]["text"] == "ok"
    finally:
        release.set()
        await client.close()
        await server.stop()


async def test_the_slot_is_free_while_a_request_waits_to_retry() -> None:
    """One slot; agent A's request is rate-limited with a 1 s retry-after. While A waits,
    agent B's request gets the slot and is answered, long before A's retry."""
    served: list[str] = []

    async def answer(body: dict[str, Any]) -> Any:
        text = body["messages"][0]["content"][0]["text"]
        served.append(text)
        if text == "a" and served.count("a") == 1:
            return error_turn(429, retry_after=1.0)
        return text_turn("ok: " + text)

    server = await FakeAnthropicServer(answer).start()
    client = AnthropicModelClient(
        api_key="test-key", base_url=server.url, max_retries=2, max_concurrent_requests=1
    )
    try:
        first = asyncio.ensure_future(client.create(request("a")))
        await asyncio.sleep(0.2)
        second = await asyncio.wait_for(client.create(request("b")), timeout=0.5)
        assert second.content[0]["text"] == "ok: b"
        assert not first.done()
        assert (await first).content[0]["text"] == "ok: a"
    finally:
        await client.close()
        await server.stop()
    assert served == ["a", "b", "a"]


async def test_retries_give_up_with_a_readable_error() -> None:
    server = await FakeAnthropicServer([error_turn(529)] * 3).start()
    client = AnthropicModelClient(api_key="test-key", base_url=server.url, max_retries=2)
    try:
        with pytest.raises(ModelCallFailed, match=r"unavailable \(529\)"):
            await client.create(request("x"))
    finally:
        await client.close()
        await server.stop()
    assert len(server.requests) == 3


async def test_an_unknown_model_and_a_too_long_prompt_say_what_is_wrong() -> None:
    server = await FakeAnthropicServer(
        models={"claude-tiny": ModelLimits(max_output_tokens=64, context_window_tokens=200)}
    ).start()
    client = AnthropicModelClient(api_key="test-key", base_url=server.url, max_retries=0)
    try:
        with pytest.raises(ModelCallFailed, match="does not know this model"):
            await client.create(request("x"))
        long = replace(request("word " * 400), model="claude-tiny")
        with pytest.raises(ContextTooLong, match="too long"):
            await client.create(long)
    finally:
        await client.close()
        await server.stop()
    server.rejections.clear()


async def test_a_malformed_reply_says_what_was_wrong() -> None:
    async def garbage(request: web.Request) -> web.Response:
        return web.json_response({"type": "message", "content": "not a list"})

    app = web.Application()
    app.router.add_post("/v1/messages", garbage)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    host, port = runner.addresses[0][:2]
    client = AnthropicModelClient(api_key="k", base_url=f"http://{host}:{port}", max_retries=0)
    try:
        with pytest.raises(ModelCallFailed, match="could not read"):
            await client.create(request("x"))
    finally:
        await client.close()
        await runner.cleanup()
