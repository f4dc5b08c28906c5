"""Amendments: while executing, the agent submits an amended plan; execution pauses until a
human approves it (the message says so and diffs it against the approved revision), then
resumes on the amendment's steps with carried-over progress kept. Reject stops execution.
The approved revision and its approver stay in the audit."""

from __future__ import annotations

import asyncio
from typing import Any

from plancord.core.planning import Phase, StepStatus
from tests.discord_bot.plans import submitted_plan
from tests.fakes.anthropic_server import ToolCall, text_turn, tool_turn

PLAN = {
    "summary": "Add a greeting module",
    "steps": [
        {"description": "Create greet.py", "tools": ["create_file"], "files": ["greet.py"]},
        {"description": "Document it in README.md", "files": ["README.md"]},
    ],
}
AMENDED = {
    "summary": "Add a greeting module",
    "steps": [
        {"description": "Create greet.py", "tools": ["create_file"], "files": ["greet.py"]},
        {
            "description": "Add tests in test_greet.py",
            "tools": ["create_file"],
            "files": ["test_greet.py"],
        },
        {"description": "Document it in README.md", "files": ["README.md"]},
    ],
}


def _step(number: int, status: str) -> Any:
    return tool_turn(ToolCall("update_plan_step", {"step": number, "status": status}))


def _create(path: str) -> Any:
    return tool_turn(ToolCall("create_file", {"path": path, "content": "x = 1\n"}))


BEFORE_AMENDING = [
    _create("greet.py"),
    _step(1, "done"),
    tool_turn(ToolCall("submit_plan", {"plan": AMENDED})),
]


async def _amending(plan_scene: Any, *after: Any) -> Any:
    scene = await submitted_plan(plan_scene, PLAN, *BEFORE_AMENDING, *after)
    await scene.ana.click(scene.plan_message(1), label="Approve")
    await asyncio.wait_for(scene.app.runtime.wait_idle("ada"), 20)
    return scene


async def _last_result(scene: Any) -> dict[str, Any]:
    history = await scene.app.conversations.load("ada")
    result: dict[str, Any] = next(
        b for b in history[-1]["content"] if b.get("type") == "tool_result"
    )
    return result


async def test_an_amendment_pauses_execution_and_its_approval_resumes_it(
    plan_scene: Any,
) -> None:
    scene = await _amending(
        plan_scene,
        _create("test_greet.py"),
        _step(2, "done"),
        _step(3, "done"),
        tool_turn(ToolCall("complete_plan", {"summary": "Greeting, tests and docs."})),
        text_turn("Done."),
    )
    calls = len(scene.world.server.requests)

    state = await scene.state()
    assert state.phase is Phase.SUBMITTED
    assert (state.revision, state.amends) == (2, 1)
    assert "paused" in scene.plan_message(2).content
    assert "amend the approved plan v1" in scene.plan_message(2).content
    card = str(scene.plan_message(2).embeds[0].to_dict())
    assert "test_greet.py" in card and "added" in card.lower()
    assert "amendment to the approved v1" in str((await _last_result(scene))["content"])
    workspace = scene.app.manager.workspace_of("ada")
    assert not (workspace / "test_greet.py").exists()
    assert len(scene.world.server.requests) == calls  # paused: no model call while it waits

    await scene.boss.click(scene.plan_message(2), label="Approve")
    await asyncio.wait_for(scene.app.runtime.wait_idle("ada"), 20)

    assert (workspace / "test_greet.py").exists()
    audit = await scene.app.store.list_audit("ada")
    approvals = [
        (a.revision, a.actor, a.detail.get("amends")) for a in audit if a.action == "approved"
    ]
    assert approvals == [
        (1, f"user:{scene.ana.id}(ana)", None),
        (2, f"user:{scene.boss.id}(boss)", 1),
    ]
    submitted = [a for a in audit if a.action == "submitted"]
    assert submitted[-1].detail["amends"] == 1
    completed = [a for a in audit if a.action == "completed"]
    assert completed[-1].detail["steps"] == [StepStatus.DONE.value] * 3
    assert (await scene.state()).phase is Phase.INACTIVE


async def test_steps_carried_over_word_for_word_keep_their_progress(plan_scene: Any) -> None:
    scene = await _amending(plan_scene, text_turn("waiting"))

    await scene.ana.click(scene.plan_message(2), label="Approve")
    await asyncio.wait_for(scene.app.runtime.wait_idle("ada"), 20)

    state = await scene.state()
    assert state.phase is Phase.EXECUTING
    assert state.amends is None
    assert [s.status for s in state.steps] == [
        StepStatus.DONE,
        StepStatus.PENDING,
        StepStatus.PENDING,
    ]


async def test_rejecting_an_amendment_stops_execution(plan_scene: Any) -> None:
    scene = await _amending(plan_scene, text_turn("Understood, stopping."))

    shown = await scene.ana.click(scene.plan_message(2), label="Reject")
    await scene.ana.submit_modal(shown, {"reason": "Tests can wait"})
    await asyncio.wait_for(scene.app.runtime.wait_idle("ada"), 20)

    assert (await scene.state()).phase is Phase.INACTIVE
    assert not (scene.app.manager.workspace_of("ada") / "test_greet.py").exists()
    history = await scene.app.conversations.load("ada")
    assert "Plan v2 was rejected by ana: Tests can wait" in str(history[-1]["content"])
    assert "do not carry out the plan" in str(history[-1]["content"])
