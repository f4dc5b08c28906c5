"""The fake's prompt cache lives as long as the real one: five minutes from its last use,
or an hour for a breakpoint marked ``ttl: "1h"``."""

from __future__ import annotations

from typing import Any

from tests.fakes.anthropic_server import FakeAnthropicServer, text_turn
from tests.fakes.bodies import EPHEMERAL, SYSTEM, cached_body, text, usage_of


class ManualClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def reads(server: FakeAnthropicServer, body: dict[str, Any]) -> int:
    return usage_of(await server.client().messages.create(**body))[2]


async def test_the_cache_expires_five_minutes_after_its_last_use() -> None:
    clock = ManualClock()
    async with FakeAnthropicServer([text_turn("x")] * 4, cache_clock=clock) as server:
        assert await reads(server, cached_body()) == 0
        clock.now += 299
        assert await reads(server, cached_body()) > 0
        clock.now += 299  # the read above refreshed it
        assert await reads(server, cached_body()) > 0
        clock.now += 301
        assert await reads(server, cached_body()) == 0


async def test_a_one_hour_breakpoint_outlives_five_minutes() -> None:
    clock = ManualClock()
    body = cached_body()
    body["system"] = [text(SYSTEM * 4, cache_control={**EPHEMERAL, "ttl": "1h"})]
    async with FakeAnthropicServer([text_turn("x")] * 3, cache_clock=clock) as server:
        assert await reads(server, body) == 0
        clock.now += 3000
        assert await reads(server, body) > 0
        clock.now += 3601
        assert await reads(server, body) == 0
