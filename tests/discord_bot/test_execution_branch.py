"""An approved plan executes on a branch of its own, started from the reviewed tree; a
workspace that cannot take a branch is refused at approval, with the reason, and nothing
executes."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from plancord.core.execution import StepOutcome
from plancord.core.planning import Phase
from plancord.storage.executions import ExecutionStore
from tests.fakes.anthropic_server import ToolCall, text_turn, tool_turn
from tests.world import PlanScene

PLAN = {
    "summary": "Add a greeting module",
    "steps": [
        {"description": "Write greet.py", "tools": ["create_file"], "files": ["greet.py"]},
        {"description": "Document it", "tools": ["create_file"], "files": ["docs/*"]},
    ],
}


def _git(workspace: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=workspace, check=True, capture_output=True, text=True
    ).stdout


async def _submitted(plan_scene: Any, *turns: Any) -> tuple[PlanScene, Path]:
    scene: PlanScene = await plan_scene(
        [tool_turn(ToolCall("submit_plan", {"plan": PLAN})), *turns]
    )
    return scene, scene.app.manager.workspace_of("ada")


async def _start(scene: PlanScene) -> None:
    await scene.ana.slash(scene.channel, "plan start", task="add a greeting module")
    assert (await scene.state()).phase is Phase.SUBMITTED


async def test_the_plan_executes_on_its_own_branch_from_the_reviewed_tree(
    plan_scene: Any,
) -> None:
    scene, workspace = await _submitted(
        plan_scene,
        tool_turn(ToolCall("create_file", {"path": "greet.py", "content": "x = 1\n"})),
        text_turn("done"),
    )
    (workspace / "draft.txt").write_text("reviewed but uncommitted\n")
    base_before = _git(workspace, "rev-parse", "main").strip()
    await _start(scene)

    await scene.ana.click(scene.plan_message(1), label="Approve")
    await scene.app.runtime.wait_idle("ada")

    record = await ExecutionStore(scene.app.db).latest("ada")
    assert record is not None
    assert (record.base, record.base_commit) == ("main", base_before)
    assert record.steps == (StepOutcome.CURRENT, StepOutcome.PENDING)
    assert _git(workspace, "symbolic-ref", "HEAD").strip() == f"refs/heads/{record.branch}"
    assert _git(workspace, "rev-parse", "main").strip() == base_before
    reviewed = _git(workspace, "show", f"{record.reviewed_commit}:draft.txt")
    assert reviewed == "reviewed but uncommitted\n"
    assert (workspace / "greet.py").exists()


async def test_approval_is_refused_on_a_detached_head(plan_scene: Any) -> None:
    scene, workspace = await _submitted(plan_scene, text_turn("never"))
    _git(workspace, "checkout", "--quiet", "--detach")
    await _start(scene)
    calls = len(scene.world.server.requests)

    answer = await scene.ana.click(scene.plan_message(1), label="Approve")

    assert "HEAD is detached" in str(answer.response.content if answer.response else answer)
    assert (await scene.state()).phase is Phase.SUBMITTED
    assert await ExecutionStore(scene.app.db).latest("ada") is None
    assert len(scene.world.server.requests) == calls
    refused = [a for a in await scene.app.store.list_audit("ada") if a.action == "decision-refused"]
    assert "detached" in refused[-1].detail["why"]
