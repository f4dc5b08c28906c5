"""A whole plan cycle at runtime level: every request goes through the real anthropic client
to the fake Messages API, which rejects anything the real API would."""

from __future__ import annotations

import json
import logging
import subprocess
from typing import Any

import pytest

from plancord.core.planning import Phase, PlanRef, StepStatus
from tests.fakes.anthropic_server import ToolCall, text_turn, tool_turn
from tests.runtime.conftest import ANA, Harness, last_user

PLAN = {
    "summary": "Add a greeting module",
    "steps": [
        {"description": "Create greet.py with hello()", "tools": ["create_file"], "risk": "low"},
        {"description": "Commit it", "tools": ["git_commit"], "risk": "low"},
    ],
    "questions": [],
    "context_notes": "The workspace is empty apart from README.md.",
}


def git_log(harness: Harness) -> str:
    return subprocess.run(
        ["git", "log", "--format=%s"],
        cwd=harness.workspace,
        capture_output=True,
        text=True,
        check=True,
    ).stdout


async def test_the_whole_plan_cycle(make_harness: Any, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="plancord.plan_mode")
    harness: Harness = await make_harness(
        [
            tool_turn(ToolCall("enter_plan_mode", {"reason": "it adds a module"})),
            tool_turn(
                ToolCall("view", {"path": "README.md"}),
                ToolCall("grep", {"pattern": "hello"}),
                ToolCall("bash_execute", {"command": "ls -la && git log --oneline"}),
            ),
            tool_turn(ToolCall("create_file", {"path": "greet.py", "content": "x = 1\n"})),
            tool_turn(ToolCall("bash_execute", {"command": "echo x > f"})),
            tool_turn(ToolCall("submit_plan", {"plan": PLAN}), text="Here is my plan."),
            tool_turn(
                ToolCall("update_plan_step", {"step": 1, "status": "in_progress"}),
                ToolCall(
                    "create_file",
                    {"path": "greet.py", "content": "def hello():\n    return 'hi'\n"},
                ),
            ),
            tool_turn(
                ToolCall("update_plan_step", {"step": 1, "status": "done"}),
                ToolCall("git_commit", {"message": "Add greeting module"}),
                ToolCall("update_plan_step", {"step": 2, "status": "done"}),
            ),
            tool_turn(ToolCall("complete_plan", {"summary": "greet.py added and committed"})),
            text_turn("Done: greet.py is committed."),
        ]
    )
    (harness.workspace / "README.md").write_text("# demo\nsay hello\n")

    await harness.say("please add a greeting module")

    state = await harness.store.load_state("ada")
    assert state.phase is Phase.SUBMITTED
    assert (
        "I'd like to plan this out before proceeding. Reason: it adds a module"
        in harness.channel.said
    )
    assert "Here is my plan." in harness.channel.said
    assert not (harness.workspace / "greet.py").exists()
    assert not (harness.workspace / "f").exists()

    reads = harness.tool_results(2)
    assert [r.get("is_error", False) for r in reads] == [False, False, False]
    assert "say hello" in reads[0]["content"]
    refused = harness.tool_results(3)[0]
    assert refused["is_error"] is True
    refusal = json.loads(refused["content"])
    assert refusal["error"] == "plan_mode_refusal"
    assert refusal["tool_name"] == "create_file"
    assert refusal["tool_kind"] == "mutating"
    assert refusal["entered_reason"] == "it adds a module"
    assert refusal["entered_at"]
    shell_refusal = json.loads(harness.tool_results(4)[0]["content"])
    assert shell_refusal["tool_name"] == "bash_execute"
    assert "read-only" in shell_refusal["hint"]
    assert "Phase: plan mode — gathering" in harness.regime(2)
    assert "[plan-mode] refused tool=create_file kind=mutating agent=ada" in caplog.text
    assert "[plan-mode] refused tool=bash_execute kind=mutating agent=ada" in caplog.text
    assert len(harness.server.requests) == 5

    revision = await harness.service.current_revision("ada")
    assert revision is not None
    await harness.service.approve(
        PlanRef(agent="ada", plan_id=revision.plan_id, revision=revision.revision), ANA
    )
    await harness.runtime.wait_idle("ada")

    resumed = last_user(harness.server.requests[5])["content"]
    assert any(
        "Plan v1 approved by ana: you may now modify files." in b.get("text", "") for b in resumed
    )
    assert "Phase: executing the approved plan v1" in harness.regime(5)
    assert "1. [pending] Create greet.py" in harness.regime(5)
    assert "1. [done] Create greet.py" in harness.regime(7)
    assert (harness.workspace / "greet.py").read_text().startswith("def hello")
    # The plan ran on its own branch, authored by the host: one commit for the step that
    # changed something, under the agent's own message; none for the step that did not.
    subjects = git_log(harness).splitlines()
    assert subjects[0] == "Add greeting module", subjects
    assert subjects[1].startswith("plancord: reviewed state"), subjects
    final = await harness.store.load_state("ada")
    assert final.phase is Phase.INACTIVE
    audit = [a.action for a in await harness.store.list_audit("ada")]
    assert audit[-5:] == ["approved", "step-updated", "step-updated", "step-updated", "completed"]
    assert harness.channel.said[-1] == "Done: greet.py is committed."
    assert harness.server.rejections == []
    assert not harness.server.script_exhausted


async def test_enter_plan_mode_takes_effect_inside_the_same_turn(make_harness: Any) -> None:
    harness: Harness = await make_harness(
        [
            tool_turn(
                ToolCall("enter_plan_mode", {"reason": "risky"}),
                ToolCall("create_file", {"path": "x.txt", "content": "x"}),
            ),
            text_turn("ok"),
        ]
    )
    await harness.say("do it")
    results = harness.tool_results(1)
    assert results[0].get("is_error") is None
    assert results[1]["is_error"] is True
    assert json.loads(results[1]["content"])["error"] == "plan_mode_refusal"
    assert not (harness.workspace / "x.txt").exists()


async def test_a_restart_in_gathering_resumes_read_only(make_harness: Any) -> None:
    first: Harness = await make_harness(
        [tool_turn(ToolCall("enter_plan_mode", {"reason": "explore first"})), text_turn("ok")]
    )
    await first.say("look around")
    assert (await first.store.load_state("ada")).phase is Phase.GATHERING
    await first.runtime.shutdown()

    from plancord.llm.anthropic_client import AnthropicModelClient
    from plancord.storage.db import Database
    from tests.fakes.anthropic_server import FakeAnthropicServer
    from tests.runtime.builders import build_runtime, plain_core

    async with FakeAnthropicServer(
        [tool_turn(ToolCall("create_file", {"path": "y.txt", "content": "y"})), text_turn("ok")]
    ) as server:
        db = await Database.open(first.data_dir / "plancord.db")
        model = AnthropicModelClient(api_key="k", base_url=server.url, max_retries=0)
        runtime = build_runtime(
            plain_core(db, first.clock, first.data_dir / "agents"),
            notifier=first.channel,
            model=model,
            clock=first.clock,
        )
        try:
            await runtime.handle_message("ada", "now write y.txt", ANA)
            await runtime.wait_idle("ada")
        finally:
            await runtime.shutdown()
            await model.close()
            await db.close()
        history = server.requests[0]["messages"]
        assert any("look around" in json.dumps(m) for m in history)
        result = last_user(server.requests[1])["content"][0]
        assert result["is_error"] is True
        assert "plan_mode_refusal" in result["content"]
    assert not (first.workspace / "y.txt").exists()


async def test_edit_then_approve_revision_two(make_harness: Any) -> None:
    plan_v2 = {**PLAN, "summary": "Add a greeting module with tests"}
    harness: Harness = await make_harness(
        [
            tool_turn(ToolCall("enter_plan_mode", {"reason": "module"})),
            tool_turn(ToolCall("submit_plan", {"plan": PLAN})),
            tool_turn(ToolCall("submit_plan", {"plan": plan_v2})),
            tool_turn(ToolCall("complete_plan", {"summary": "nothing to do"})),
            text_turn("finished"),
        ]
    )
    await harness.say("greeting please")
    v1 = await harness.service.current_revision("ada")
    assert v1 is not None
    ref = PlanRef(agent="ada", plan_id=v1.plan_id, revision=1)
    await harness.service.request_changes(ref, ANA, "add tests too", step=1)
    await harness.runtime.wait_idle("ada")
    feedback = last_user(harness.server.requests[2])["content"]
    assert any(
        "ana asked for changes to plan v1 (step 1): add tests too" in b.get("text", "")
        for b in feedback
    )
    assert "submit v2" in harness.regime(2)
    v2 = await harness.service.current_revision("ada")
    assert v2 is not None
    assert v2.revision == 2
    await harness.service.approve(PlanRef(agent="ada", plan_id=v2.plan_id, revision=2), ANA)
    await harness.runtime.wait_idle("ada")
    assert (await harness.store.load_state("ada")).phase is Phase.INACTIVE
    assert harness.server.rejections == []


async def test_fresh_context_approval_clears_the_conversation(make_harness: Any) -> None:
    from plancord.core.planning import ApprovalMode

    harness: Harness = await make_harness(
        [
            tool_turn(ToolCall("enter_plan_mode", {"reason": "long exploration"})),
            tool_turn(ToolCall("submit_plan", {"plan": PLAN})),
            text_turn("starting"),
        ]
    )
    await harness.say("a very long exploration")
    revision = await harness.service.current_revision("ada")
    assert revision is not None
    await harness.service.approve(
        PlanRef(agent="ada", plan_id=revision.plan_id, revision=1), ANA, ApprovalMode.FRESH_CONTEXT
    )
    await harness.runtime.wait_idle("ada")
    messages = harness.server.requests[2]["messages"]
    assert [m["role"] for m in messages] == ["user", "system"]  # the opening, the regime
    text = json.dumps(messages)
    assert "a very long exploration" not in text
    assert "Fresh context" in text
    assert "Create greet.py with hello()" in harness.regime(2)


async def test_step_updates_are_rejected_outside_execution(make_harness: Any) -> None:
    harness: Harness = await make_harness(
        [tool_turn(ToolCall("update_plan_step", {"step": 1, "status": "done"})), text_turn("ok")]
    )
    await harness.say("hi")
    result = harness.tool_results(1)[0]
    assert result["is_error"] is True
    assert "only be recorded while" in result["content"]
    assert StepStatus.DONE.value == "done"
