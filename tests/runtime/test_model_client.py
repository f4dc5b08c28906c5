"""``AnthropicModelClient``: the real SDK over HTTP against the fake Messages API."""

from __future__ import annotations

import asyncio
from typing import Any

from plancord.core.ports import ModelRequest
from plancord.llm.anthropic_client import AnthropicModelClient
from tests.fakes.anthropic_server import FakeAnthropicServer, text_turn

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
