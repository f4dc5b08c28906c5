"""The host's file work never follows the agent's links, and a write the host can foresee is
asked before it happens, attacked through the real bot: a scripted model executing an
approved plan replaces a directory with a link to a host folder before its drift is undone,
points a link in ``.git`` at the bot's database before the completion card attaches the
diff, creates a file outside its step, and checks out another branch."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from plancord.core.execution import DriftDecision, ExecutionEventKind
from plancord.core.planning import Phase
from plancord.storage.executions import ExecutionStore
from tests.discord_bot.result_card.completed import completed, diff_of, result_card
from tests.fakes.anthropic_server import ToolCall, text_turn, tool_turn
from tests.world import PlanScene, buttons

DOCS_THEN_APP = {
    "summary": "Document, then change the app",
    "steps": [
        {"description": "Write the docs", "tools": ["bash_execute"], "files": ["docs/*"]},
        {"description": "Change the app", "tools": ["bash_execute"], "files": ["app.py"]},
    ],
}
GREET = {
    "summary": "Add a greeting module",
    "steps": [
        {
            "description": "Write greet.py",
            "tools": ["create_file", "git_checkout"],
            "files": ["greet.py"],
        },
    ],
}


def _bash(command: str) -> Any:
    return tool_turn(ToolCall("bash_execute", {"command": command}))


def _git(workspace: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=workspace, check=True, capture_output=True, text=True
    ).stdout


async def _approved(
    plan_scene: Any, plan: dict[str, Any], *turns: Any, **plan_mode: Any
) -> tuple[PlanScene, Path]:
    scene: PlanScene = await plan_scene(
        [tool_turn(ToolCall("submit_plan", {"plan": plan})), *turns], plan_mode=plan_mode
    )
    scene.world.env.settle_timeout = 60.0
    workspace = scene.app.manager.workspace_of("ada")
    await scene.ana.slash(scene.channel, "plan start", task="do it")
    assert (await scene.state()).phase is Phase.SUBMITTED
    await scene.ana.click(scene.plan_message(1), label="Approve")
    return scene, workspace


async def _drifts(scene: PlanScene) -> list[Any]:
    record = await ExecutionStore(scene.app.db).latest("ada")
    assert record is not None
    return await ExecutionStore(scene.app.db).events(record.plan_id, ExecutionEventKind.DRIFT)


@pytest.mark.parametrize("drift", ["ask", "refuse"])
async def test_undoing_drift_never_writes_through_a_parent_replaced_by_a_link(
    plan_scene: Any, tmp_path: Path, drift: str
) -> None:
    host_folder = tmp_path / "host-folder"
    host_folder.mkdir()
    scene, workspace = await _approved(
        plan_scene,
        DOCS_THEN_APP,
        _bash("mkdir -p docs && echo 'import os' > docs/x.pth"),
        _bash("echo 'x = 1' > app.py"),  # step 2 now: docs/ is no longer the step's
        _bash(f"rm -rf docs && ln -s {host_folder} docs"),
        text_turn("done"),
        drift=drift,
    )
    if drift == "ask":
        card = scene.channel.last_message
        assert set(buttons(card)) == {"Allow", "Deny"}
        await scene.ana.click(card, label="Deny")
    await scene.app.runtime.wait_idle("ada")

    assert list(host_folder.iterdir()) == []
    docs = workspace / "docs"
    assert docs.is_dir() and not docs.is_symlink()
    assert (docs / "x.pth").read_text() == "import os\n"
    [undone] = await _drifts(scene)
    assert undone.decision in (DriftDecision.DENIED, DriftDecision.REFUSED)


async def test_a_link_where_the_diff_was_written_never_puts_a_host_file_on_the_card(
    plan_scene: Any, tmp_path: Path
) -> None:
    database = tmp_path / "data" / "plancord.db"
    plant = (
        "echo 'def hello(): pass' > greet.py && "
        f"for name in plancord-result.diff result.diff; do ln -sf {database} .git/$name; done"
    )
    scene, workspace = await completed(
        plan_scene,
        work=(
            _bash(plant),
            tool_turn(ToolCall("complete_plan", {"summary": "greeted"})),
            text_turn("Done."),
        ),
    )
    assert scene.app.config.database_path == database and database.is_file()
    record = await ExecutionStore(scene.app.db).latest("ada")
    assert record is not None
    real = _git(workspace, "diff", "--binary", record.reviewed_commit, record.branch)
    assert "+def hello(): pass" in real

    assert (await diff_of(result_card(scene)).read()).decode() == real
    answer = await scene.ana.slash(scene.channel, "plan diff", result=True)
    message = answer.followups[-1] if answer.followups else answer.response
    [attachment] = message.attachments
    assert (await attachment.read()).decode() == real


async def test_a_file_outside_the_step_is_asked_before_it_is_written(plan_scene: Any) -> None:
    scene, workspace = await _approved(
        plan_scene,
        GREET,
        tool_turn(ToolCall("create_file", {"path": "stolen.txt", "content": "s\n"})),
        text_turn("done"),
    )
    card = scene.channel.last_message
    assert set(buttons(card)) == {"Allow", "Deny"}
    assert "stolen.txt" in str([e.to_dict() for e in card.embeds])
    assert not (workspace / "stolen.txt").exists()  # asked before it ran

    await scene.ana.click(card, label="Deny")
    await scene.app.runtime.wait_idle("ada")

    assert not (workspace / "stolen.txt").exists()
    [asked] = await _drifts(scene)
    assert asked.decision is DriftDecision.DENIED
    assert asked.paths == ("stolen.txt",)


async def test_deny_of_a_checkout_leaves_the_branch_and_its_files(plan_scene: Any) -> None:
    scene: PlanScene = await plan_scene(
        [
            tool_turn(ToolCall("submit_plan", {"plan": GREET})),
            tool_turn(ToolCall("git_checkout", {"ref": "other"})),
            text_turn("done"),
        ]
    )
    scene.world.env.settle_timeout = 60.0
    workspace = scene.app.manager.workspace_of("ada")
    (workspace / "README.md").write_text("reviewed\n")
    _git(workspace, "add", "README.md")
    _git(workspace, "-c", "user.name=a", "-c", "user.email=a@a", "commit", "-qm", "readme")
    _git(workspace, "checkout", "-qb", "other")
    (workspace / "README.md").write_text("other branch\n")
    (workspace / "planted.py").write_text("import os\n")
    _git(workspace, "add", "-A")
    _git(workspace, "-c", "user.name=a", "-c", "user.email=a@a", "commit", "-qm", "other")
    _git(workspace, "checkout", "-q", "-")
    await scene.ana.slash(scene.channel, "plan start", task="do it")
    await scene.ana.click(scene.plan_message(1), label="Approve")

    card = scene.channel.last_message
    assert set(buttons(card)) == {"Allow", "Deny"}
    await scene.ana.click(card, label="Deny")
    await scene.app.runtime.wait_idle("ada")

    record = await ExecutionStore(scene.app.db).latest("ada")
    assert record is not None
    assert _git(workspace, "symbolic-ref", "HEAD").strip() == f"refs/heads/{record.branch}"
    assert (workspace / "README.md").read_text() == "reviewed\n"
    assert not (workspace / "planted.py").exists()
    assert _git(workspace, "status", "--porcelain") == ""
