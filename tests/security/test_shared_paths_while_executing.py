"""Directories shared with every agent (``sandbox.shared_paths``) are read-only while a plan
executes, unless the current step names them: an attacker-steered model executing an
approved step cannot plant a file in a shared cache or remote the plan never mentioned (a
write there is outside the workspace, so the host could not observe or undo it).

Each scenario runs through the real bot under SimCord with a scripted model: the plan is
submitted, approved and executed, and the step's ``bash_execute`` call writes into the
shared directory beside the step's own change.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.discord_bot.result_card.completed import completed
from tests.fakes.anthropic_server import ToolCall, text_turn, tool_turn
from tests.world import PlanScene, Worlds, plan_scene_in


@pytest.fixture
async def plan_scene(worlds: Worlds) -> Callable[..., Any]:
    async def make(script: Any = (), **options: Any) -> PlanScene:
        return await plan_scene_in(await worlds.start(script, **options))

    return make


def _plan(*files: str) -> dict[str, Any]:
    return {
        "summary": "Write the notes",
        "steps": [
            {"description": "Write notes.md", "tools": ["bash_execute"], "files": list(files)}
        ],
    }


def _work(command: str) -> tuple[Any, ...]:
    return (
        tool_turn(ToolCall("bash_execute", {"command": command})),
        tool_turn(ToolCall("complete_plan", {"summary": "written"})),
        text_turn("Done."),
    )


async def test_a_step_cannot_write_a_shared_path_it_does_not_name(
    plan_scene: Any, tmp_path: Path
) -> None:
    shared = tmp_path / "shared-cache"
    shared.mkdir()
    (shared / "tool.py").write_text("print('trusted')\n")
    command = f"echo one > notes.md; echo 'print(1)' > {shared}/tool.py; touch {shared}/planted"

    scene, workspace = await completed(
        plan_scene,
        plan=_plan("notes.md"),
        work=_work(command),
        config={"sandbox": {"shared_paths": [str(shared)]}},
    )

    assert (workspace / "notes.md").read_text() == "one\n"
    assert (shared / "tool.py").read_text() == "print('trusted')\n"
    assert not (shared / "planted").exists()
    told = str(scene.world.server.requests[-1]["messages"])
    assert "Read-only file system" in told


async def test_a_step_that_names_a_shared_path_may_write_it(
    plan_scene: Any, tmp_path: Path
) -> None:
    shared = tmp_path / "shared-cache"
    shared.mkdir()
    command = f"echo one > notes.md; echo built > {shared}/artifact"

    _, workspace = await completed(
        plan_scene,
        plan=_plan("notes.md", f"{shared}/artifact"),
        work=_work(command),
        config={"sandbox": {"shared_paths": [str(shared)]}},
    )

    assert (workspace / "notes.md").read_text() == "one\n"
    assert (shared / "artifact").read_text() == "built\n"
