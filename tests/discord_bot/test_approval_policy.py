"""The approval policy on every decision path: four-eyes refuses the requester (button, slash
command, permission Allow) and accepts another approver; ``approvals: 2`` executes only after
the second distinct approver, and the same person clicking twice counts once."""

from __future__ import annotations

from typing import Any

import discord

from plancord.core.planning import Phase
from tests.discord_bot.plan_card.answering import refusal
from tests.discord_bot.plans import PLAN, submitted_plan
from tests.fakes.anthropic_server import ToolCall, text_turn, tool_turn
from tests.world import PlanScene

FOUR_EYES = {"approval": "approver"}


def _admin(scene: PlanScene, name: str) -> Any:
    role = scene.guild.create_role(
        f"{name}-admins", permissions=discord.Permissions(administrator=True)
    )
    return scene.guild.add_member(scene.env.create_user(name), roles=[role])


async def test_four_eyes_refuses_the_requester_on_every_path(plan_scene: Any) -> None:
    scene = await submitted_plan(plan_scene, PLAN, text_turn("On it."), plan_mode=FOUR_EYES)
    message = scene.plan_message(1)
    audit = await scene.audit()

    for label in ("Approve", "Approve, fresh context", "Approve, confirm each edit"):
        refused = await scene.ana.click(message, label=label)
        assert refused.ephemeral
        assert "four-eyes rule" in refused.response.content
    by_command = await scene.ana.slash(scene.channel, "plan approve")
    assert "four-eyes rule" in by_command.response.content
    assert [e for e in await scene.audit() if e[0] != "decision-refused"] == audit
    assert (await scene.state()).phase is Phase.SUBMITTED

    approved = await scene.boss.click(message, label="Approve")
    assert approved.response.content.startswith("Approved plan v1")
    assert (await scene.state()).approved_by_name == "boss"


async def test_four_eyes_still_lets_the_requester_send_back_or_reject(plan_scene: Any) -> None:
    scene = await submitted_plan(plan_scene, PLAN, text_turn("On it."), plan_mode=FOUR_EYES)
    rejected = await scene.ana.slash(scene.channel, "plan reject", reason="not now")
    assert rejected.response.content.startswith("Rejected plan v1")


async def test_four_eyes_on_a_permission_request(plan_scene: Any) -> None:
    scene = await plan_scene(
        [tool_turn(ToolCall("bash_execute", {"command": "touch made"})), text_turn("done")],
        plan_mode=FOUR_EYES,
    )
    await scene.app.store.update_agent(
        (await scene.app.store.get_agent("ada")).model_copy(
            update={"permission_profile": {"preset": "standard"}}
        )
    )
    await scene.ana.send(scene.channel, "make a file")
    request = scene.channel.last_message
    refused = await scene.ana.click(request, label="Allow")
    assert "four-eyes rule" in refusal(refused)
    workspace = scene.app.manager.workspace_of("ada")
    assert not (workspace / "made").exists()
    await scene.boss.click(request, label="Allow")
    assert (workspace / "made").exists()


async def test_two_approvals_execute_only_after_the_second_distinct_approver(
    plan_scene: Any,
) -> None:
    scene = await submitted_plan(plan_scene, PLAN, text_turn("On it."), plan_mode={"approvals": 2})
    cara = _admin(scene, "cara")
    message = scene.plan_message(1)
    assert "Approvals 0 of 2" in (message.embeds[0].description or "")

    first = await scene.boss.click(message, label="Approve")
    assert "recorded: 1 of 2 (boss)" in first.response.content
    again = await scene.boss.click(scene.plan_message(1), label="Approve")
    assert "recorded: 1 of 2 (boss)" in again.response.content
    assert (await scene.state()).phase is Phase.SUBMITTED
    assert "Approvals 1 of 2**: boss" in (scene.plan_message(1).embeds[0].description or "")

    second = await cara.click(scene.plan_message(1), label="Approve")
    assert second.response.content.startswith("Approved plan v1")
    state = await scene.state()
    assert state.phase is Phase.EXECUTING
    assert state.approved_by_name == "cara"
    votes = [a for a, _ in await scene.audit() if a == "approval-vote"]
    assert len(votes) == 2
