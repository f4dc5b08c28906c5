"""The real bot (cogs, views, runtime, SQLite in tmp_path, git workspaces) driven through
SimCord, with the model played by the fake Messages API server."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import simcord

from plancord.config import Config
from plancord.discord_bot.bot import PlancordBot
from plancord.llm.anthropic_client import AnthropicModelClient
from tests.fakes.anthropic_server import FakeAnthropicServer, Script

MODEL = "claude-fake-test-model"


class SimClock:
    """The bot's clock follows SimCord's virtual time once the env is running."""

    def __init__(self) -> None:
        self.env: Any = None

    def now(self) -> datetime:
        if self.env is None:
            return datetime.now(UTC)
        result: datetime = self.env.now()
        return result


@dataclass
class World:
    env: Any
    server: FakeAnthropicServer
    config: Config
    clock: SimClock
    data_dir: Path

    @property
    def bot(self) -> PlancordBot:
        bot: PlancordBot = self.env.bot
        return bot

    def new_bot(self) -> PlancordBot:
        return make_bot(self.config, self.server, self.clock)

    async def restart(self) -> PlancordBot:
        """Stop the bot and start a fresh one over the same database and workspaces."""
        fresh = self.new_bot()
        await self.env.restart_bot(fresh)
        return fresh


def make_bot(config: Config, server: FakeAnthropicServer, clock: SimClock) -> PlancordBot:
    return PlancordBot(
        config,
        model_factory=lambda: AnthropicModelClient(
            api_key="test-key", base_url=server.url, max_retries=0
        ),
        clock=clock,
    )


@pytest.fixture
async def world_factory(tmp_path: Path) -> AsyncIterator[Callable[..., Any]]:
    """``world = await world_factory(script, plan_mode={...})``; torn down after the test."""
    stack: list[Any] = []

    async def make(script: Script = (), *, plan_mode: dict[str, Any] | None = None) -> World:
        server = await FakeAnthropicServer(script).start()
        stack.append(server)
        config = Config.model_validate(
            {
                "data_dir": str(tmp_path / "data"),
                "anthropic": {"model": MODEL},
                "plan_mode": plan_mode or {},
            }
        )
        clock = SimClock()
        runner = simcord.run(make_bot(config, server, clock))
        env = await runner.__aenter__()
        stack.append(runner)
        clock.env = env
        return World(env, server, config, clock, tmp_path / "data")

    yield make
    for item in reversed(stack):
        if isinstance(item, FakeAnthropicServer):
            await item.stop()
        else:
            await item.__aexit__(None, None, None)
