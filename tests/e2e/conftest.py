"""The demo's world for end-to-end tests: the real bot under SimCord over ``tmp_path``, the
agent ``ada`` in ``#ada`` with a seeded git workspace, ana who asks and bob who may not
decide, and the model playing a script built from the demo's turns. The world and its
checks come from ``tests.world``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from plancord.demo import AGENT, host_plan_mode, seed_workspace
from plancord.testing.anthropic_server import Script
from tests.world import PlanScene, Worlds, plan_scene_in


@pytest.fixture
def story(worlds: Worlds) -> Callable[..., Any]:
    """``scene = await story(script, plan_mode={...})``; the world is torn down afterwards."""

    async def make(script: Script, *, plan_mode: dict[str, Any] | None = None) -> PlanScene:
        world = await worlds.start(script, plan_mode=host_plan_mode(**(plan_mode or {})))
        scene = await plan_scene_in(world, guild="plancord demo", agent=AGENT)
        await seed_workspace(scene.app.manager.workspace_of(AGENT))
        return scene

    return make
