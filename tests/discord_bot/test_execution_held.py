"""Execution held by what it does, attacked through the real bot: a scripted model plays an
agent steered to change more than the approved step allows, and the host holds what it
observes (not what the agent says) to the step it keeps as current."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from plancord.core.authority import Answer
from plancord.core.execution import DriftDecision, ExecutionEventKind, StepOutcome
from plancord.core.planning import Phase
from plancord.storage.executions import ExecutionStore
from tests.fakes.anthropic_server import ToolCall, text_turn, tool_turn
from tests.requests_seen import last_user
from tests.world import PlanScene, buttons

GREET = {
    "summary": "Add a greeting module",
    "steps": [
        {
            "description": "Write greet.py",
            "tools": ["bash_execute", "create_file", "git_commit", "git_checkout"],
            "files": ["greet.py"],
        },
        {"description": "Document it", "tools": ["create_file"], "files": ["docs/*"]},
    ],
}


def _bash(command: str) -> Any:
    return tool_turn(ToolCall("bash_execute", {"command": command}))


def _git(workspace: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=workspace, check=True, capture_output=True, text=True
    ).stdout


async def _approved(
    plan_scene: Any,
    plan: dict[str, Any],
    *turns: Any,
    prepare: Callable[[Path], None] | None = None,
    **plan_mode: Any,
) -> tuple[PlanScene, Path]:
    """The plan submitted (after ``prepare`` set up the workspace) and approved by ana."""
    scene: PlanScene = await plan_scene(
        [tool_turn(ToolCall("submit_plan", {"plan": plan})), *turns], plan_mode=plan_mode
    )
    workspace = scene.app.manager.workspace_of("ada")
    if prepare is not None:
        prepare(workspace)
    await scene.ana.slash(scene.channel, "plan start", task="add a greeting module")
    assert (await scene.state()).phase is Phase.SUBMITTED
    await scene.ana.click(scene.plan_message(1), label="Approve")
    return scene, workspace


async def _events(scene: PlanScene, kind: ExecutionEventKind | None = None) -> list[Any]:
    record = await ExecutionStore(scene.app.db).latest("ada")
    assert record is not None
    return await ExecutionStore(scene.app.db).events(record.plan_id, kind)


def _last_result(scene: PlanScene) -> dict[str, Any]:
    last = last_user(scene.world.server.requests[-1])["content"]
    return next(b for b in last if b.get("type") == "tool_result")


def _with_readme(workspace: Path) -> None:
    (workspace / "README.md").write_text("hello\n")


async def test_a_call_within_the_step_is_recorded_as_its_command(plan_scene: Any) -> None:
    scene, _ = await _approved(
        plan_scene, GREET, _bash("echo 'x = 1' > greet.py"), text_turn("done")
    )
    await scene.app.runtime.wait_idle("ada")
    [command] = await _events(scene, ExecutionEventKind.COMMAND)
    assert (command.paths, command.step, command.tool) == (("greet.py",), 1, "bash_execute")
    assert await _events(scene, ExecutionEventKind.DRIFT) == []


async def test_bash_outside_the_step_asks_and_deny_restores_exactly(plan_scene: Any) -> None:
    scene, workspace = await _approved(
        plan_scene,
        GREET,
        _bash("echo 'x = 1' > greet.py && echo pwned >> README.md && echo s > stolen.txt"),
        text_turn("done"),
        prepare=_with_readme,
    )
    readme = workspace / "README.md"
    card = scene.channel.last_message
    shown = str([e.to_dict() for e in card.embeds])
    assert "README.md" in shown and "stolen.txt" in shown and "pwned" in shown
    assert "pwned" in readme.read_text()  # held while the card waits

    await scene.ana.click(card, label="Deny")
    await scene.app.runtime.wait_idle("ada")

    assert readme.read_text() == "hello\n"
    assert not (workspace / "stolen.txt").exists()
    assert (workspace / "greet.py").read_text() == "x = 1\n"
    [drift] = await _events(scene, ExecutionEventKind.DRIFT)
    assert drift.decision is DriftDecision.DENIED
    assert set(drift.paths) == {"README.md", "stolen.txt"}
    assert "restored" in str(_last_result(scene)["content"])


async def test_bash_outside_the_step_under_refuse_is_undone_and_the_model_told(
    plan_scene: Any,
) -> None:
    scene, workspace = await _approved(
        plan_scene, GREET, _bash("echo s > stolen.txt"), text_turn("ok"), drift="refuse"
    )
    await scene.app.runtime.wait_idle("ada")
    assert not (workspace / "stolen.txt").exists()
    result = _last_result(scene)
    assert result["is_error"] is True
    assert "Refused and undone" in str(result["content"])
    [drift] = await _events(scene, ExecutionEventKind.DRIFT)
    assert drift.decision is DriftDecision.REFUSED
    assert (await scene.state()).phase is Phase.EXECUTING


async def test_bash_outside_the_step_under_log_is_kept_and_flagged(plan_scene: Any) -> None:
    scene, workspace = await _approved(
        plan_scene, GREET, _bash("echo s > notes.txt"), text_turn("ok"), drift="log"
    )
    await scene.app.runtime.wait_idle("ada")
    assert (workspace / "notes.txt").exists()
    [drift] = await _events(scene, ExecutionEventKind.DRIFT)
    assert drift.decision is DriftDecision.LOGGED and drift.paths == ("notes.txt",)
    drifts = [a for a in await scene.app.store.list_audit("ada") if a.action == "drift"]
    assert drifts and "notes.txt" in drifts[-1].detail["why"]


async def test_a_write_through_a_symlink_is_held_to_the_target(plan_scene: Any) -> None:
    def prepare(workspace: Path) -> None:
        (workspace / "settings.cfg").write_text("safe = true\n")
        (workspace / "docs").mkdir()
        os.symlink("../settings.cfg", workspace / "docs" / "notes.md")

    plan = {
        "summary": "Write the notes",
        "steps": [{"description": "Notes", "tools": ["bash_execute"], "files": ["docs/*"]}],
    }
    scene, workspace = await _approved(
        plan_scene,
        plan,
        _bash("echo 'safe = false' > docs/notes.md"),
        text_turn("ok"),
        prepare=prepare,
        drift="refuse",
    )
    await scene.app.runtime.wait_idle("ada")
    assert (workspace / "settings.cfg").read_text() == "safe = true\n"
    [drift] = await _events(scene, ExecutionEventKind.DRIFT)
    assert drift.paths == ("settings.cfg",)


async def test_git_commit_of_an_unlisted_path_is_held(plan_scene: Any) -> None:
    commit = tool_turn(ToolCall("git_commit", {"message": "notes", "paths": ["notes.txt"]}))
    scene, workspace = await _approved(
        plan_scene,
        GREET,
        tool_turn(ToolCall("create_file", {"path": "notes.txt", "content": "n\n"})),
        commit,
        text_turn("ok"),
    )
    await scene.ana.click(scene.channel.last_message, label="Allow")  # the file may stay
    card = scene.channel.last_message
    assert set(buttons(card)) == {"Allow", "Deny"}
    assert "notes.txt" in str([e.to_dict() for e in card.embeds])
    await scene.ana.click(card, label="Deny")
    await scene.app.runtime.wait_idle("ada")
    record = await ExecutionStore(scene.app.db).latest("ada")
    assert record is not None
    assert _git(workspace, "rev-parse", "HEAD").strip() == record.reviewed_commit
    assert "notes.txt" not in _git(workspace, "ls-files")
    assert (workspace / "notes.txt").exists()
    decisions = [e.decision for e in await _events(scene, ExecutionEventKind.DRIFT)]
    assert decisions == [DriftDecision.ALLOWED, DriftDecision.DENIED]


async def test_git_checkout_off_the_branch_is_undone(plan_scene: Any) -> None:
    scene, workspace = await _approved(
        plan_scene,
        GREET,
        tool_turn(ToolCall("git_checkout", {"ref": "main"})),
        text_turn("ok"),
        drift="refuse",
    )
    await scene.app.runtime.wait_idle("ada")
    record = await ExecutionStore(scene.app.db).latest("ada")
    assert record is not None
    assert _git(workspace, "symbolic-ref", "HEAD").strip() == f"refs/heads/{record.branch}"
    assert "HEAD off the execution branch" in str(_last_result(scene)["content"])


THREE_STEPS = {
    "summary": "Greet, test, document",
    "steps": [
        {"description": "Write greet.py", "tools": ["create_file"], "files": ["greet.py"]},
        {"description": "Test it", "tools": ["create_file"], "files": ["test_greet.py"]},
        {"description": "Document it", "tools": ["create_file"], "files": ["docs/*"]},
    ],
}


def _create(path: str) -> Any:
    return tool_turn(ToolCall("create_file", {"path": path, "content": f"{path}\n"}))


async def test_a_call_only_a_later_step_covers_moves_the_plan_on(plan_scene: Any) -> None:
    scene, workspace = await _approved(
        plan_scene,
        THREE_STEPS,
        _create("greet.py"),
        _create("docs/greet.md"),
        text_turn("done"),
    )
    await scene.app.runtime.wait_idle("ada")
    record = await ExecutionStore(scene.app.db).latest("ada")
    assert record is not None
    assert record.current_step == 2
    assert record.steps == (StepOutcome.DONE, StepOutcome.SKIPPED, StepOutcome.CURRENT)
    log = _git(workspace, "log", "--format=%s", record.branch)
    assert log.splitlines()[0] == "Write greet.py"
    assert "greet.py" in _git(workspace, "show", "--name-only", "--format=", record.branch)
    assert (workspace / "docs" / "greet.md").exists()
    assert "docs/greet.md" not in _git(workspace, "ls-files")  # the next step's, uncommitted
    assert await _events(scene, ExecutionEventKind.DRIFT) == []


async def test_a_first_step_at_high_risk_asks_before_its_first_call(plan_scene: Any) -> None:
    plan = {
        "summary": "Drop the table",
        "steps": [{"description": "Drop it", "tools": ["bash_execute"], "risk": "high"}],
    }
    scene, workspace = await _approved(
        plan_scene, plan, _bash("touch dropped"), text_turn("go on"), confirm_high_risk_steps=True
    )
    card = scene.channel.last_message
    assert set(buttons(card)) == {"Continue", "Stop"}
    assert not (workspace / "dropped").exists()
    calls = len(scene.world.server.requests)
    await scene.ana.click(card, label="Stop")
    await scene.app.runtime.wait_idle("ada")
    assert not (workspace / "dropped").exists()
    assert len(scene.world.server.requests) == calls
    record = await ExecutionStore(scene.app.db).latest("ada")
    assert record is not None and record.steps == (StepOutcome.STOPPED,)
    [answer] = await _events(scene, ExecutionEventKind.CHECKPOINT)
    assert answer.answer is Answer.DENIED


async def test_completing_marks_the_steps_and_commits_the_last(plan_scene: Any) -> None:
    scene, workspace = await _approved(
        plan_scene,
        THREE_STEPS,
        _create("greet.py"),
        tool_turn(ToolCall("complete_plan", {"summary": "greeted"})),
        text_turn("done"),
    )
    await scene.app.runtime.wait_idle("ada")
    record = await ExecutionStore(scene.app.db).latest("ada")
    assert record is not None and not record.running
    assert record.steps == (StepOutcome.DONE, StepOutcome.SKIPPED, StepOutcome.SKIPPED)
    assert _git(workspace, "log", "-1", "--format=%s %an", record.branch) == (
        "Write greet.py plancord\n"
    )
    assert _git(workspace, "status", "--porcelain") == ""


def _feature_branch(workspace: Path) -> None:
    """A branch ``feature`` beside main, holding ``feature.txt``."""
    env = {**os.environ, "GIT_INDEX_FILE": str(workspace.parent / "feature.index")}

    def run(*args: str, data: str | None = None) -> str:
        return subprocess.run(
            ["git", "-c", "user.name=p", "-c", "user.email=p@p", *args],
            cwd=workspace, env=env, input=data, check=True, capture_output=True, text=True,
        ).stdout.strip()  # fmt: skip

    run("read-tree", "main")
    blob = run("hash-object", "-w", "--stdin", data="from feature\n")
    run("update-index", "--add", "--cacheinfo", f"100644,{blob},feature.txt")
    commit = run("commit-tree", run("write-tree"), "-p", "main", "-m", "feature")
    run("update-ref", "refs/heads/feature", commit)
    (workspace.parent / "feature.index").unlink()


async def test_an_allowed_git_checkout_keeps_the_step_on_the_execution_branch(
    plan_scene: Any,
) -> None:
    scene, workspace = await _approved(
        plan_scene,
        GREET,
        tool_turn(ToolCall("git_checkout", {"ref": "feature"})),
        _create("greet.py"),
        _create("docs/greet.md"),
        tool_turn(ToolCall("complete_plan", {"summary": "greeted"})),
        text_turn("done"),
        prepare=_feature_branch,
    )
    asked = scene.channel.last_message
    assert set(buttons(asked)) == {"Allow", "Deny"}
    await scene.ana.click(asked, label="Allow")
    # What the switch brought that the step does not name is asked about as drift.
    files = scene.channel.last_message
    assert "`feature.txt` is not among the files step 1 names" in str(files.embeds[0].to_dict())
    await scene.ana.click(files, label="Allow")
    await scene.app.runtime.wait_idle("ada")

    record = await ExecutionStore(scene.app.db).latest("ada")
    assert record is not None and record.ended_at is not None
    assert _git(workspace, "symbolic-ref", "HEAD").strip() == f"refs/heads/{record.branch}"
    assert record.steps == (StepOutcome.DONE, StepOutcome.DONE)
    step_one = _git(workspace, "show", "--name-only", "--format=", f"{record.branch}~1")
    assert sorted(step_one.split()) == ["feature.txt", "greet.py"]
    assert _git(workspace, "rev-parse", "feature").strip() != record.result_commit
