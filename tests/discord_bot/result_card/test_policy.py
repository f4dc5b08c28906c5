"""Every completion-card control obeys the plan's approver policy, fails closed and is
audited: the four-eyes rule and ``approvals: 2`` apply to Merge, a bystander's click changes
nothing, a double click merges once, a click on an older card is refused, and the buttons
work after a restart (dynamic items)."""

from __future__ import annotations

import asyncio
from typing import Any

import discord
import pytest

from plancord.core.execution import ResultState
from plancord.core.planning import Actor, Phase
from plancord.core.results import StaleResult
from tests.discord_bot.result_card.completed import (
    PLAN,
    WORK,
    completed,
    git,
    menu,
    record,
    reply,
    result_card,
)
from tests.fakes.anthropic_server import ToolCall, text_turn, tool_turn
from tests.world import PlanScene, buttons


def _admin(scene: PlanScene, name: str) -> Any:
    role = scene.guild.create_role(
        f"{name}-admins", permissions=discord.Permissions(administrator=True)
    )
    return scene.guild.add_member(scene.env.create_user(name), roles=[role])


async def test_a_bystander_cannot_touch_the_result(plan_scene: Any) -> None:
    scene, workspace = await completed(plan_scene)
    head = git(workspace, "rev-parse", "HEAD", "main")

    for label in ("Merge", "Discard"):
        answer = await scene.bob.click(result_card(scene), label=label)
        assert answer.ephemeral or answer.followups[-1].ephemeral
        assert "can " in reply(answer) and "this result" in reply(answer)

    assert git(workspace, "rev-parse", "HEAD", "main") == head
    assert (await record(scene)).result is ResultState.WAITING
    refused = [a for a in await scene.app.store.list_audit("ada") if a.action == "result-refused"]
    assert [a.actor for a in refused] == [f"user:{scene.bob.id}(bob)"] * 2


async def test_four_eyes_the_requester_cannot_merge_their_own_work(plan_scene: Any) -> None:
    scene, workspace = await completed(
        plan_scene, approver="boss", plan_mode={"approval": "approver"}
    )
    main = git(workspace, "rev-parse", "main")

    refused = await scene.ana.click(result_card(scene), label="Merge")

    assert "four-eyes" in reply(refused)
    assert git(workspace, "rev-parse", "main") == main
    merged = await scene.boss.click(result_card(scene), label="Merge")
    assert "Merged" in reply(merged)
    assert (await record(scene)).decided_by_name == "boss"


async def test_two_approvals_are_needed_to_merge_and_a_double_vote_counts_once(
    plan_scene: Any,
) -> None:
    scene: PlanScene = await plan_scene(
        [tool_turn(ToolCall("submit_plan", {"plan": PLAN})), *WORK], plan_mode={"approvals": 2}
    )
    cara = _admin(scene, "cara")
    workspace = scene.app.manager.workspace_of("ada")
    await scene.ana.slash(scene.channel, "plan start", task="add a greeting module")
    await scene.boss.click(scene.plan_message(1), label="Approve")
    await cara.click(scene.plan_message(1), label="Approve")
    await scene.app.runtime.wait_idle("ada")
    main = git(workspace, "rev-parse", "main")

    first = await scene.boss.click(result_card(scene), label="Merge")
    again = await scene.boss.click(result_card(scene), label="Merge")

    assert "recorded: 1 of 2 (boss)" in reply(first)
    assert "recorded: 1 of 2 (boss)" in reply(again)
    assert git(workspace, "rev-parse", "main") == main
    assert "Merge votes 1 of 2**: boss" in (result_card(scene).embeds[0].description or "")
    second = await cara.click(result_card(scene), label="Merge")
    assert "Merged" in reply(second)
    assert git(workspace, "rev-parse", "main") != main


async def test_a_double_click_merges_once(plan_scene: Any) -> None:
    scene, _ = await completed(plan_scene)
    found = await record(scene)
    ana = Actor.user(scene.ana.id, "ana")
    boss = Actor.user(scene.boss.id, "boss", is_admin=True)
    results = scene.app.runtime.results

    # Two clicks arriving together, before the card could turn its buttons off.
    answers = await asyncio.gather(
        results.merge(found.plan_id, found.result_version, ana),
        results.merge(found.plan_id, found.result_version, boss),
        return_exceptions=True,
    )

    merged, refused = answers
    assert isinstance(merged, str) and merged.startswith("Merged")
    assert isinstance(refused, StaleResult) and "already merged" in str(refused)
    actions = [a for a, _ in await scene.audit()]
    assert actions.count("result-merge") == 1
    await results.settled()
    assert buttons(result_card(scene)) == {"Merge": False, "Discard": False}


async def test_a_click_on_an_older_card_is_refused_after_a_roll_back(plan_scene: Any) -> None:
    scene, workspace = await completed(plan_scene)
    card = result_card(scene)
    before = await record(scene)
    old_merge = _button_id(scene, card, "merge")

    await scene.ana.select(card, ["2"], custom_id=menu(scene, card)["custom_id"])

    assert _button_id(scene, result_card(scene), "merge") != old_merge
    ana = Actor.user(scene.ana.id, "ana")
    with pytest.raises(StaleResult, match="out of date"):
        await scene.app.runtime.results.merge(before.plan_id, before.result_version, ana)
    assert (await record(scene)).result is ResultState.WAITING
    assert git(workspace, "rev-parse", "main").strip() == before.base_commit


async def test_the_buttons_work_after_a_restart(plan_scene: Any) -> None:
    scene, _ = await completed(plan_scene)
    await scene.restart()

    answer = await scene.ana.click(result_card(scene), label="Discard")

    assert "back at the reviewed state" in reply(answer)
    assert (await record(scene)).result is ResultState.DISCARDED


async def test_another_plan_is_not_approved_while_a_result_waits(plan_scene: Any) -> None:
    again = tool_turn(ToolCall("submit_plan", {"plan": {**PLAN, "summary": "Second plan"}}))
    scene, _ = await completed(plan_scene, after=(again, text_turn("never")))
    await scene.ana.slash(scene.channel, "plan start", task="more")
    assert (await scene.state()).phase is Phase.SUBMITTED

    clicked = await scene.ana.click(scene.plan_message(), label="Approve")
    typed = await scene.ana.slash(scene.channel, "plan approve")

    for answer in (clicked, typed):
        assert "waits for a decision" in reply(answer)
    assert (await scene.state()).phase is Phase.SUBMITTED
    status = await scene.ana.slash(scene.channel, "plan status")
    [embed] = (status.followups[-1] if status.followups else status.response).embeds
    [field] = [f for f in embed.fields if f.name == "Result waiting for a decision"]
    assert "Merge or Discard" in (field.value or "")


def _button_id(scene: PlanScene, message: discord.Message, action: str) -> str:
    stored = scene.env.backend.messages[message.channel.id][message.id]
    for row in stored.components:
        for item in row["components"]:
            if str(item.get("custom_id", "")).startswith(f"result:{action}:"):
                return str(item["custom_id"])
    raise AssertionError(f"no {action} button")
