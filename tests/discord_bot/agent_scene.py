"""A server for the agent-side Discord tests: a category with a lobby channel, a maintainer
who may manage channels (ana), a member who may not (bob), and helpers to create an agent
through ``/agent create`` and read what the channels show and what the store holds. The
``scene_factory`` fixture (``conftest.py``) builds it."""

from __future__ import annotations

import gc
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import discord
import pytest

from plancord.app import App
from plancord.storage.db import Database
from plancord.testing.sim import World
from tests.fakes.anthropic_server import FakeAnthropicServer

MANAGE_CHANNELS = discord.Permissions(manage_channels=True)


@dataclass
class Scene:
    world: World
    guild: Any
    category: Any
    lobby: Any
    ana: Any
    bob: Any

    @property
    def env(self) -> Any:
        return self.world.env

    @property
    def server(self) -> FakeAnthropicServer:
        return self.world.server

    @property
    def app(self) -> App:
        return self.world.bot.app

    def channel(self, name: str) -> Any:
        return self.guild.channels[name]

    async def create_agent(self, name: str = "ada", **options: Any) -> Any:
        """``/agent create`` as ana; the agent's new channel."""
        result = await self.ana.slash(self.lobby, "agent create", name=name, **options)
        assert result.response is not None
        assert result.response.content.startswith("Created agent"), result.response.content
        return self.channel(name.lower())

    def bot_texts(self, channel: Any) -> list[str]:
        bot_id = self.env.bot.user.id
        return [m.content for m in channel.history() if m.author.id == bot_id]

    def stored(self, message: Any) -> Any:
        """The simulated server's record of a message (mention resolution, pings)."""
        return self.env.backend.messages[message.channel.id][message.id]

    async def rows(self, sql: str, *params: Any) -> list[Any]:
        return list(await self.app.db.fetchall(sql, params))


SceneFactory = Callable[..., Awaitable[Scene]]


def collect_after_opening(monkeypatch: pytest.MonkeyPatch) -> None:
    """``Database.open`` leaves its ``PRAGMA journal_mode`` cursor to reference counting;
    under SimCord it sits in a reference cycle until the cyclic collector runs, and a
    ``COMMIT`` before that (``restore`` writes right after the app opens) fails with "SQL
    statements in progress". Collect as soon as the database is open."""
    original = Database.open.__func__  # type: ignore[attr-defined]

    async def open_and_collect(cls: type[Database], /, path: Path, **options: Any) -> Database:
        db: Database = await original(cls, path, **options)
        gc.collect()
        return db

    monkeypatch.setattr(Database, "open", classmethod(open_and_collect))
