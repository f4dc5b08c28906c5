"""Comments on a waiting plan: shown under their step on the plan message (a count and the
latest), listed by ``/plan comments``, told to the agent at its next turn (after a restart
too), said addressed by its next revision, resolved by their author or an approver, and,
under ``require_resolved_comments``, holding Approve back until every one is resolved. Who
may comment is who may instruct the agent."""

from __future__ import annotations

from typing import Any

from plancord.core.planning import Phase
from tests.discord_bot.plans import PLAN, PLAN_V2, submitted_plan
from tests.fakes.anthropic_server import ToolCall, text_turn, tool_turn
from tests.requests_seen import last_user
from tests.world import PlanScene


async def comment(scene: PlanScene, who: Any, step: str, text: str) -> Any:
    shown = await who.click(scene.plan_message(), label="Comment")
    assert shown.modal is not None and shown.modal["title"] == "Comment on plan v1"
    return await who.submit_modal(shown, {"step": step, "comment": text})


def step_field(scene: PlanScene, number: int) -> str:
    embed = scene.plan_message().embeds[0]
    [value] = [f.value for f in embed.fields if f.name and f" Step {number} " in f.name]
    return value or ""


async def test_comments_show_under_their_step_and_reach_the_agent_after_a_restart(
    plan_scene: Any,
) -> None:
    revised = tool_turn(
        ToolCall("submit_plan", {"plan": PLAN_V2, "addressed_comments": [1]}),
        text="Step 2 now says which file.",
    )
    scene = await submitted_plan(plan_scene, PLAN, revised, text_turn("Waiting."))

    kept = await comment(scene, scene.ana, "2", "Commit only greet.py, nothing else")
    assert kept.response.content.startswith("Comment #1 on step 2 of plan v1 kept")
    await comment(scene, scene.ana, "2", "And sign the commit")
    assert step_field(scene, 2).startswith(
        "💬 2 comments · latest #2 ana on step 2 of v1: And sign the commit\nCommit it"
    )
    refused = await comment(scene, scene.bob, "1", "I am not allowed to say this")
    assert "can comment on the plans of **ada**" in refused.response.content
    listed = await scene.ana.slash(scene.channel, "plan comments")
    assert "#1 ana on step 2 of v1: Commit only greet.py, nothing else" in (listed.response.content)

    await scene.restart()
    await scene.ana.slash(scene.channel, "plan edit", feedback="see the comments")

    told = last_user(scene.world.server.requests[1])["content"]
    text = "\n".join(b.get("text", "") for b in told)
    assert "New comments on your plan:\n- #1 ana on step 2 of v1: Commit only greet.py" in text
    assert "#2 ana on step 2 of v1: And sign the commit" in text
    state = await scene.state()
    assert (state.phase, state.revision) == (Phase.SUBMITTED, 2)
    listed = await scene.ana.slash(scene.channel, "plan comments")
    assert "Commit only greet.py, nothing else (addressed in v2)" in listed.response.content
    audit = [a for a, _ in await scene.audit()]
    assert audit.count("commented") == 2


async def test_require_resolved_comments_holds_approve_until_resolved(plan_scene: Any) -> None:
    scene = await submitted_plan(
        plan_scene, PLAN, text_turn("Working."), plan_mode={"require_resolved_comments": True}
    )
    await comment(scene, scene.ana, "", "Are the tests enough?")
    held = await scene.ana.click(scene.plan_message(1), label="Approve")
    assert "1 comment on the plan still open" in held.response.content
    assert (await scene.state()).phase is Phase.SUBMITTED
    refused = await scene.bob.slash(scene.channel, "plan resolve", comment=1)
    assert "Only its author (ana)" in refused.response.content

    resolved = await scene.ana.slash(scene.channel, "plan resolve", comment=1)
    assert resolved.response.content == "Resolved comment #1."
    approved = await scene.ana.click(scene.plan_message(1), label="Approve")
    assert approved.response.content.startswith("Approved plan v1")
    actions = [a for a, _ in await scene.audit()]
    assert "comment-resolved" in actions
