"""The demo's world for end-to-end tests: the real bot under SimCord over ``tmp_path``, the
agent ``ada`` in ``#ada`` with a seeded git workspace, ana who asks and bob who may not
decide, and the model playing a script built from the demo's turns."""

from __future__ import annotations

import subprocess
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import discord
import pytest

from plancord.core.planning import Actor
from plancord.demo import AGENT, host_plan_mode, seed_workspace
from plancord.testing.anthropic_server import Script
from plancord.testing.sim import World, start_world
from tests.discord_bot.conftest import PlanScene


def git_subjects(workspace: Path) -> list[str]:
    return subprocess.run(
        ["git", "log", "--format=%s"], cwd=workspace, capture_output=True, text=True, check=True
    ).stdout.splitlines()


def workspace_of(scene: PlanScene) -> Path:
    return scene.app.manager.workspace_of(AGENT)


@pytest.fixture
async def story(tmp_path: Path) -> AsyncIterator[Callable[..., Any]]:
    """``scene = await story(script, plan_mode={...})``; the world is torn down afterwards."""
    worlds: list[World] = []

    async def make(script: Script, *, plan_mode: dict[str, Any] | None = None) -> PlanScene:
        world = await start_world(
            tmp_path / "data", script, plan_mode=host_plan_mode(**(plan_mode or {}))
        )
        worlds.append(world)
        env = world.env
        guild = env.create_guild("plancord demo")
        channel = guild.create_text_channel(AGENT)
        admins = guild.create_role("Admins", permissions=discord.Permissions(administrator=True))
        ana = guild.add_member(env.create_user("ana"))
        bob = guild.add_member(env.create_user("bob"))
        boss = guild.add_member(env.create_user("boss"), roles=[admins])
        app = world.bot.app
        await app.manager.create(
            AGENT,
            actor=Actor.user(ana.id, "ana"),
            channel_id=channel.id,
            guild_id=guild.id,
            profile="open",
        )
        await seed_workspace(app.manager.workspace_of(AGENT))
        return PlanScene(world, guild, channel, ana, bob, boss)

    yield make
    for world in reversed(worlds):
        await world.close()
    for world in worlds:
        world.env.raise_errors()
    for world in worlds:
        assert world.server.rejections == [], "the fake Messages API refused a request"
