"""Fixtures of the Discord edge's tests: the real bot (cogs, views, runtime, SQLite in
tmp_path, git workspaces) driven through SimCord, with the model played by the fake Messages
API server. The worlds come from ``tests.world``; the scenes are a plan-mode channel
(``plan_scene``) and a server with a lobby to create agents from (``scene_factory``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from plancord.testing.sim import World
from tests.discord_bot.agent_scene import (
    MANAGE_CHANNELS,
    Scene,
    SceneFactory,
    collect_after_opening,
)
from tests.fakes.anthropic_server import Script
from tests.world import PlanScene, Worlds, plan_scene_in


@pytest.fixture
def world_factory(worlds: Worlds) -> Callable[..., Any]:
    """``world = await world_factory(script, plan_mode={...})``; torn down after the test."""
    return worlds.start


@pytest.fixture
async def plan_scene(worlds: Worlds) -> Callable[..., Any]:
    """``scene = await plan_scene(script, plan_mode={...})``."""

    async def make(script: Script = (), **options: Any) -> PlanScene:
        return await plan_scene_in(await worlds.start(script, **options))

    return make


@pytest.fixture
def scene_factory(worlds: Worlds, monkeypatch: pytest.MonkeyPatch) -> SceneFactory:
    """``scene = await scene_factory(script, plan_mode={...})``."""
    collect_after_opening(monkeypatch)

    async def make(script: Script = (), *, plan_mode: dict[str, Any] | None = None) -> Scene:
        world: World = await worlds.start(script, plan_mode=plan_mode)
        env = world.env
        guild = env.create_guild()
        category = guild.create_category("agents")
        lobby = guild.create_text_channel("lobby", category=category)
        maintainers = guild.create_role("Maintainers", permissions=MANAGE_CHANNELS)
        ana = guild.add_member(env.create_user("ana"), roles=[maintainers])
        bob = guild.add_member(env.create_user("bob"))
        return Scene(world, guild, category, lobby, ana, bob)

    return make
