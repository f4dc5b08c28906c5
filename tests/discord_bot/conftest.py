"""The real bot (cogs, views, runtime, SQLite in tmp_path, git workspaces) driven through
SimCord, with the model played by the fake Messages API server.

The glue that runs the bot under SimCord lives in ``plancord.testing.sim`` (``plancord demo``
uses it too); this module turns it into fixtures and adds the plan-mode scenes.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import discord
import pytest

from plancord.app import App
from plancord.core.planning import Actor, PlanningState
from plancord.storage.plan_messages import PlanMessageRecord, PlanMessageStore
from plancord.testing.sim import (
    MODEL,
    PROGRESS_DEBOUNCE_SECONDS,
    SimClock,
    SimDeadlines,
    SimPlancordBot,
    World,
    make_bot,
    start_world,
)
from tests.fakes.anthropic_server import Script

__all__ = [
    "MODEL",
    "PROGRESS_DEBOUNCE_SECONDS",
    "PlanScene",
    "SimClock",
    "SimDeadlines",
    "SimPlancordBot",
    "World",
    "buttons",
    "make_bot",
    "plan_scene",
    "private_answer",
    "world_factory",
]


@pytest.fixture
async def world_factory(tmp_path: Path) -> AsyncIterator[Callable[..., Any]]:
    """``world = await world_factory(script, plan_mode={...})``; torn down after the test."""
    worlds: list[World] = []

    async def make(
        script: Script = (),
        *,
        plan_mode: dict[str, Any] | None = None,
        config: dict[str, Any] | None = None,
    ) -> World:
        world = await start_world(tmp_path / "data", script, plan_mode=plan_mode, config=config)
        worlds.append(world)
        return world

    yield make
    for world in reversed(worlds):
        await world.close()
    for world in worlds:
        world.env.raise_errors()
    for world in worlds:
        # A test that means the fake to refuse something clears ``rejections`` after checking.
        assert world.server.rejections == [], "the fake Messages API refused a request"


# -- plan-mode scenes ----------------------------------------------------------------------


@dataclass
class PlanScene:
    """A guild with the agent ``ada`` bound to ``#ada``; ana asks for plans, bob is a
    bystander, and ``boss`` is a server administrator."""

    world: World
    guild: Any
    channel: Any
    ana: Any
    bob: Any
    boss: Any

    @property
    def env(self) -> Any:
        return self.world.env

    @property
    def app(self) -> App:
        return self.world.bot.app

    def bot_messages(self, channel: Any = None) -> list[discord.Message]:
        bot_id = self.env.bot.user.id
        return [m for m in (channel or self.channel).history() if m.author.id == bot_id]

    def bot_texts(self) -> list[str]:
        return [m.content for m in self.bot_messages() if m.content]

    def plan_messages(self) -> list[discord.Message]:
        return [
            m
            for m in self.bot_messages()
            if m.embeds and (m.embeds[0].title or "").startswith("Plan: ")
        ]

    def plan_message(self, revision: int | None = None) -> discord.Message:
        """The newest plan message (of ``revision`` when given), as the channel shows it now."""
        for message in reversed(self.plan_messages()):
            footer = message.embeds[-1].footer.text or ""
            if revision is None or footer.startswith(f"v{revision} "):
                return message
        raise AssertionError(f"no plan message for v{revision} in {self.bot_texts()}")

    def progress_message(self) -> discord.Message:
        found = [
            m
            for m in self.bot_messages()
            if m.embeds
            and re.match(
                r"(Executing plan|Plan v\d+ (complete|cancelled))", m.embeds[0].title or ""
            )
        ]
        assert found, f"no progress message in {self.bot_texts()}"
        return found[-1]

    async def record(self, plan_id: str, revision: int) -> PlanMessageRecord:
        found = await PlanMessageStore(self.app.db).get(plan_id, revision)
        assert found is not None, f"no plan message stored for {plan_id} v{revision}"
        return found

    def pinged(self, message: discord.Message) -> list[int]:
        """Who the simulated Discord actually notified for a message."""
        return list(self.env.backend.messages[message.channel.id][message.id].ping_user_ids)

    def patches(self, message_id: int) -> list[Any]:
        """The JSON of every edit the bot sent for one message, oldest first."""
        return [
            r.json
            for r in self.env.http_requests
            if r.method == "PATCH" and r.path.endswith(f"/messages/{message_id}")
        ]

    async def audit(self) -> list[tuple[str, str]]:
        return [(a.action, a.actor) for a in await self.app.store.list_audit("ada")]

    async def state(self) -> PlanningState:
        return await self.app.store.load_state("ada")

    async def restart(self) -> None:
        await self.world.restart()


def buttons(message: discord.Message) -> dict[str, bool]:
    """Label → enabled, for every button on a message."""
    found: dict[str, bool] = {}
    for row in message.components:
        for item in getattr(row, "children", ()):
            if isinstance(item, discord.Button) and item.label:
                found[item.label] = not item.disabled
    return found


def private_answer(result: Any) -> Any:
    """The answer to a publicly deferred command that only its invoker sees: the public
    placeholder is gone and the one followup is ephemeral."""
    assert result.response is None, f"the public placeholder is still there: {result.response}"
    [answer] = result.followups
    assert answer.ephemeral
    return answer


@pytest.fixture
async def plan_scene(world_factory: Callable[..., Any]) -> Callable[..., Any]:
    """``scene = await plan_scene(script, plan_mode={...})``."""

    async def make(script: Script = (), **options: Any) -> PlanScene:
        world: World = await world_factory(script, **options)
        env = world.env
        guild = env.create_guild("plancord")
        channel = guild.create_text_channel("ada")
        admins = guild.create_role("Admins", permissions=discord.Permissions(administrator=True))
        ana = guild.add_member(env.create_user("ana"))
        bob = guild.add_member(env.create_user("bob"))
        boss = guild.add_member(env.create_user("boss"), roles=[admins])
        await world.bot.app.manager.create(
            "ada",
            actor=Actor.user(ana.id, "ana"),
            channel_id=channel.id,
            guild_id=guild.id,
            profile="open",
        )
        return PlanScene(world, guild, channel, ana, bob, boss)

    return make
