"""Approval votes under ``approvals: 2``, through the real bot: a vote survives a flood of
refused clicks (votes are records of their own, never counted from a window of the audit
log), a vote counts only if its voter may still approve when the quorum would be reached,
and a pick on the plan message after the first vote is refused (answers are frozen)."""

from __future__ import annotations

from typing import Any

import discord
import pytest

from plancord.core.errors import NotAuthorised
from plancord.core.planning import Actor, Phase, PlanRef
from plancord.storage.plan_answers import PlanAnswerStore
from tests.discord_bot.plan_card.answering import PLAN as ASKING_PLAN
from tests.discord_bot.plan_card.answering import menus, questions_field, refusal
from tests.discord_bot.plans import PLAN, submitted_plan
from tests.fakes.anthropic_server import text_turn
from tests.world import PlanScene

TWO = {"approvals": 2}
FLOOD = 1000


def _admin(scene: PlanScene, name: str) -> tuple[Any, Any]:
    role = scene.guild.create_role(
        f"{name}-admins", permissions=discord.Permissions(administrator=True)
    )
    return scene.guild.add_member(scene.env.create_user(name), roles=[role]), role


async def _ref(scene: PlanScene) -> PlanRef:
    state = await scene.state()
    return PlanRef(agent="ada", plan_id=state.plan_id or "", revision=state.revision)


async def test_a_vote_survives_a_flood_of_refused_clicks(plan_scene: Any) -> None:
    scene = await submitted_plan(plan_scene, PLAN, text_turn("On it."), plan_mode=TWO)
    cara, _ = _admin(scene, "cara")
    first = await scene.boss.click(scene.plan_message(1), label="Approve")
    assert "recorded: 1 of 2 (boss)" in first.response.content

    refused = await scene.bob.click(scene.plan_message(1), label="Approve")
    assert refused.ephemeral and "can approve this plan" in refused.response.content
    ref = await _ref(scene)
    bob = Actor.user(scene.bob.id, "bob")
    for _ in range(FLOOD):
        with pytest.raises(NotAuthorised):
            await scene.app.planning.approve(ref, bob)
    audit = await scene.app.store.list_audit("ada", limit=10 * FLOOD)
    refusals = [a for a in audit if a.action == "decision-refused"]
    assert len(refusals) == FLOOD + 1
    assert await scene.app.planning.approvals(ref) == ["boss"]

    second = await cara.click(scene.plan_message(1), label="Approve")

    assert second.response.content.startswith("Approved plan v1")
    state = await scene.state()
    assert state.phase is Phase.EXECUTING
    assert state.approved_by_name == "cara"
    votes = await scene.app.store.list_votes(ref.plan_id, 1, state.plan_sha or "")
    assert [v.voter_name for v in votes] == ["boss", "cara"]


async def test_a_voter_who_lost_the_role_or_left_does_not_count(plan_scene: Any) -> None:
    scene = await submitted_plan(plan_scene, PLAN, text_turn("On it."), plan_mode=TWO)
    rita, ritas_role = _admin(scene, "rita")
    lena, _ = _admin(scene, "lena")
    cara, _ = _admin(scene, "cara")
    await rita.click(scene.plan_message(1), label="Approve")
    scene.env.backend.remove_member_role(scene.guild.id, rita.id, ritas_role.id)

    second = await scene.boss.click(scene.plan_message(1), label="Approve")

    assert "recorded: 1 of 2 (boss)" in second.response.content
    assert (await scene.state()).phase is Phase.SUBMITTED
    assert "Approvals 1 of 2**: boss" in (scene.plan_message(1).embeds[0].description or "")

    scene.guild.remove_member(scene.boss)
    third = await lena.click(scene.plan_message(1), label="Approve")
    assert "recorded: 1 of 2 (lena)" in third.response.content
    assert (await scene.state()).phase is Phase.SUBMITTED

    fourth = await cara.click(scene.plan_message(1), label="Approve")
    assert fourth.response.content.startswith("Approved plan v1")
    state = await scene.state()
    assert state.phase is Phase.EXECUTING and state.approved_by_name == "cara"


async def test_a_pick_after_the_first_vote_is_refused(plan_scene: Any) -> None:
    scene = await submitted_plan(
        plan_scene, ASKING_PLAN, text_turn("Plan submitted."), text_turn("Going."), plan_mode=TWO
    )
    message = scene.plan_message(1)
    [menu] = menus(scene, message)
    await scene.ana.select(message, ["0"], custom_id=menu["custom_id"])
    await scene.boss.click(scene.plan_message(1), label="Approve")

    result = await scene.ana.select(scene.plan_message(1), ["1"], custom_id=menu["custom_id"])

    assert "answers are frozen" in refusal(result)
    state = await scene.state()
    answers = await PlanAnswerStore(scene.app.db).for_revision(state.plan_id or "", 1)
    assert answers[1].answer == "staging"
    assert "✅ **staging** — ana" in questions_field(scene.plan_message(1))
    assert state.phase is Phase.SUBMITTED
