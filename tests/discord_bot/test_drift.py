"""Execution held to the approved plan: a call outside what the steps declare is drift, which
asks (by default), is refused, or is only logged; every drift is audited and counted."""

from __future__ import annotations

from typing import Any

import pytest

from plancord.core.holding import StepDrift, hold_to_step
from plancord.core.plan import Plan, PlanStep
from plancord.core.planning import Phase
from tests.discord_bot.plans import submitted_plan
from tests.fakes.anthropic_server import ToolCall, text_turn, tool_turn
from tests.requests_seen import last_user

PLAN = {
    "summary": "Add a greeting module",
    "steps": [
        {"description": "Create greet.py", "tools": ["create_file"], "files": ["greet.py"]},
        {"description": "Commit it", "tools": ["git_commit"], "risk": "medium"},
    ],
}


def _create(path: str) -> Any:
    return tool_turn(ToolCall("create_file", {"path": path, "content": "x = 1\n"}))


async def _approved(plan_scene: Any, *after: Any, **options: Any) -> Any:
    return await submitted_plan(plan_scene, PLAN, *after, **options)


async def test_a_file_outside_the_plan_asks_and_a_deny_keeps_it_out(plan_scene: Any) -> None:
    scene = await _approved(plan_scene, _create("greet.py"), _create("evil.py"), text_turn("done"))
    await scene.ana.click(scene.plan_message(1), label="Approve")
    workspace = scene.app.manager.workspace_of("ada")
    assert (workspace / "greet.py").exists()
    request = scene.channel.last_message
    shown = request.content + "".join(str(e.to_dict()) for e in request.embeds)
    assert "not in the approved plan" in shown.lower()
    assert "evil.py" in shown
    await scene.ana.click(request, label="Deny")
    assert not (workspace / "evil.py").exists()
    drifts = [a for a in await scene.app.store.list_audit("ada") if a.action == "drift"]
    assert len(drifts) == 1
    assert drifts[0].detail["outcome"] == "ask"
    assert "evil.py" in drifts[0].detail["why"]


async def test_under_refuse_the_agent_is_told_and_nothing_is_written(plan_scene: Any) -> None:
    scene = await _approved(
        plan_scene,
        tool_turn(ToolCall("bash_execute", {"command": "touch made-by-shell"})),
        text_turn("done"),
        plan_mode={"drift": "refuse"},
    )
    await scene.ana.click(scene.plan_message(1), label="Approve")
    workspace = scene.app.manager.workspace_of("ada")
    assert not (workspace / "made-by-shell").exists()
    last = last_user(scene.world.server.requests[-1])["content"]
    result = next(b for b in last if b.get("type") == "tool_result")
    assert result["is_error"] is True
    assert "not in the approved plan" in str(result["content"])
    assert (await scene.state()).phase is Phase.EXECUTING


async def test_under_log_it_runs_and_the_progress_counts_it(plan_scene: Any) -> None:
    scene = await _approved(
        plan_scene,
        _create("notes.txt"),
        tool_turn(ToolCall("update_plan_step", {"step": 1, "status": "done"})),
        text_turn("done"),
        plan_mode={"drift": "log"},
    )
    await scene.ana.click(scene.plan_message(1), label="Approve")
    assert (scene.app.manager.workspace_of("ada") / "notes.txt").exists()
    progress = scene.channel.last_message
    footers = [e.footer.text or "" for m in scene.channel.history() for e in m.embeds]
    assert any("1 call outside the plan" in f for f in footers), footers
    assert progress is not None


def _step(tools: tuple[str, ...], files: tuple[str, ...] = ()) -> PlanStep:
    return PlanStep(description="d", tools=tools, files=files)


@pytest.mark.parametrize(
    ("steps", "tool", "paths", "inside"),
    [
        ((_step(("create_file",), ("src/*.py",)),), "create_file", ("src/a.py",), True),
        ((_step(("create_file",), ("src/*.py",)),), "create_file", ("src/x/a.py",), False),
        ((_step(("create_file",), ("src/**/*.py",)),), "create_file", ("src/x/a.py",), True),
        ((_step(("create_file",), ("docs/",)),), "str_replace", ("docs/a.md",), False),
        ((_step(("str_replace",), ("docs/",)),), "str_replace", ("docs/a/b.md",), True),
        ((_step(("str_replace",), ("docs/",)),), "str_replace", ("./docs/../x",), False),
        ((_step(("create_file",)),), "create_file", ("anything",), True),
        ((_step(("create_file",)),), "bash_execute", (), False),
        ((_step(()),), "bash_execute", (), True),  # a plan naming no tools limits none
    ],
)
def test_scope(
    steps: tuple[PlanStep, ...], tool: str, paths: tuple[str, ...], inside: bool
) -> None:
    plan = Plan(summary="s", steps=steps)
    assert (not isinstance(hold_to_step(plan, 0, tool, paths), StepDrift)) is inside


@pytest.mark.parametrize("pattern", ["../x", "a/../../b", "~/x", "/srv/../etc", "`x`", "*" * 9])
def test_file_patterns_stay_in_the_workspace(pattern: str) -> None:
    with pytest.raises(ValueError, match=r"files?|wildcards"):
        PlanStep(description="d", files=(pattern,))


def test_an_absolute_file_names_a_shared_directory_and_no_workspace_path() -> None:
    """An absolute path may name a directory shared with agents (``sandbox.shared_paths``);
    it covers no workspace path."""
    step = PlanStep(description="d", tools=("create_file",), files=("/etc/passwd",))
    plan = Plan(summary="s", steps=(step,))
    assert isinstance(hold_to_step(plan, 0, "create_file", ("etc/passwd",)), StepDrift)


@pytest.mark.parametrize("damage", ["deleted", "truncated"])
async def test_a_deny_whose_kept_copy_is_damaged_says_what_was_not_put_back(
    plan_scene: Any, damage: str
) -> None:
    """The host's copies a drift undo restores from are damaged between the call's write and
    the Deny: the card and the answer name the path that could not be put back, nothing
    claims the workspace is as it was, no restore's leftover lands in the workspace, and the
    execution ends instead of waiting."""
    step = {"description": "Write greet.py", "tools": ["bash_execute"], "files": ["greet.py"]}
    plan = tool_turn(ToolCall("submit_plan", {"plan": {"summary": "Greet", "steps": [step]}}))
    shell = tool_turn(ToolCall("bash_execute", {"command": "echo changed > notes.txt"}))
    scene = await plan_scene([plan, shell, text_turn("done")])
    workspace = scene.app.manager.workspace_of("ada")
    (workspace / "notes.txt").write_text("kept by the human\n")
    await scene.ana.slash(scene.channel, "plan start", task="add a greeting module")
    await scene.ana.click(scene.plan_message(1), label="Approve")
    assert (workspace / "notes.txt").read_text() == "changed\n"
    packs = [p for p in (workspace.parent / "observed").iterdir() if p.is_file()]
    assert packs
    for pack in packs:
        if damage == "deleted":
            pack.unlink()
        else:
            pack.write_bytes(b"")
    await scene.ana.click(scene.channel.last_message, label="Deny")
    shown = "".join(
        m.content + "".join(str(e.to_dict()) for e in m.embeds) for m in scene.channel.history()
    )
    assert "`notes.txt` could not be put back" in shown
    assert "restored as they were" not in shown
    assert sorted(p.name for p in workspace.iterdir()) == [".git", "notes.txt"]
    assert (await scene.state()).phase is not Phase.EXECUTING
    drifts = [a for a in await scene.app.store.list_audit("ada") if a.action == "drift"]
    assert [d.detail["decision"] for d in drifts] == ["stopped"]
