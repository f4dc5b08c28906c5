"""An approval binds to the tree that was reviewed: a change to the workspace between
submission and approval (a push, another tool) refuses the approval until the plan is
looked at again."""

from __future__ import annotations

from typing import Any

from plancord.core.planning import Phase
from tests.discord_bot.plans import PLAN, PLAN_V2, submitted_plan
from tests.fakes.anthropic_server import ToolCall, text_turn, tool_turn


async def test_a_change_after_submission_refuses_the_approval(plan_scene: Any) -> None:
    scene = await submitted_plan(
        plan_scene,
        PLAN,
        tool_turn(ToolCall("submit_plan", {"plan": PLAN_V2})),
        text_turn("Working on it."),
    )
    revision = await scene.app.planning.current_revision("ada")
    assert revision is not None
    assert revision.tree is not None
    assert revision.tree.endswith("clean")
    workspace = scene.app.manager.workspace_of("ada")
    (workspace / "pushed.txt").write_text("someone else's change\n")

    refused = await scene.ana.click(scene.plan_message(1), label="Approve")

    assert "workspace changed since v1 was submitted" in refused.response.content
    assert "Take a fresh look" in refused.response.content
    assert (await scene.state()).phase is Phase.SUBMITTED
    refusals = [
        a for a in await scene.app.store.list_audit("ada") if a.action == "decision-refused"
    ]
    assert refusals[-1].detail["why"] == "the workspace changed since v1 was submitted"

    await scene.ana.slash(scene.channel, "plan edit", feedback="check again: a file appeared")
    second = await scene.app.planning.current_revision("ada")
    assert second is not None
    assert second.revision == 2
    assert second.tree is not None
    assert "dirty" in second.tree
    approved = await scene.ana.click(scene.plan_message(2), label="Approve")
    assert approved.response.content.startswith("Approved plan v2")
