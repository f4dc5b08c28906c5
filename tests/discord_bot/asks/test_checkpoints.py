"""Checkpoints on high-risk steps: with ``confirm_high_risk_steps``, starting a 🔴 step waits
for an approver's Continue; Stop ends execution with the steps so far kept."""

from __future__ import annotations

from typing import Any

from plancord.core.planning import Phase, StepStatus
from tests.discord_bot.plans import submitted_plan
from tests.fakes.anthropic_server import ToolCall, text_turn, tool_turn
from tests.world import buttons

PLAN = {
    "summary": "Migrate the database",
    "steps": [
        {"description": "Write the migration", "tools": ["create_file"]},
        {"description": "Drop the old table", "tools": ["bash_execute"], "risk": "high"},
    ],
}


def _step(number: int, status: str) -> Any:
    return tool_turn(ToolCall("update_plan_step", {"step": number, "status": status}))


async def _executing(plan_scene: Any, *after: Any) -> Any:
    scene = await submitted_plan(
        plan_scene,
        PLAN,
        _step(1, "in_progress"),
        _step(1, "done"),
        _step(2, "in_progress"),
        *after,
        plan_mode={"confirm_high_risk_steps": True},
    )
    await scene.ana.click(scene.plan_message(1), label="Approve")
    return scene


async def test_stop_at_a_high_risk_step_ends_execution_with_the_steps_kept(
    plan_scene: Any,
) -> None:
    scene = await _executing(plan_scene, text_turn("stopped"))
    card = scene.channel.last_message
    assert set(buttons(card)) == {"Continue", "Stop"}
    assert "step 2" in str(card.embeds[0].to_dict())
    assert (await scene.state()).phase is Phase.EXECUTING

    await scene.ana.click(card, label="Stop")

    assert (await scene.state()).phase is Phase.INACTIVE
    completed = [a for a in await scene.app.store.list_audit("ada") if a.action == "completed"]
    assert completed[-1].detail["steps"] == [StepStatus.DONE.value, StepStatus.PENDING.value]
    last = scene.world.server.requests[-1]["messages"][-1]["content"]
    result = next(b for b in last if b.get("type") == "tool_result")
    assert result["is_error"] is True
    assert "do not continue" in str(result["content"])


async def test_continue_lets_the_step_start(plan_scene: Any) -> None:
    scene = await _executing(plan_scene, _step(2, "done"), text_turn("done"))
    await scene.ana.click(scene.channel.last_message, label="Continue")
    await scene.app.runtime.wait_idle("ada")
    state = await scene.state()
    assert [s.status for s in state.steps] == [StepStatus.DONE, StepStatus.DONE]
