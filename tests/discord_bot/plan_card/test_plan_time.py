"""Deadlines and restarts: an approval or gathering deadline passing in SimCord's virtual time
times planning out through the real deadline scheduler; after a restart the buttons still
work, and a plan message that was deleted meanwhile is posted again."""

from __future__ import annotations

from typing import Any

from plancord.command.operator import open_services, plan_reject
from plancord.core.planning import Phase
from plancord.storage.plan_messages import MessageStatus
from tests.discord_bot.plans import ALL_BUTTONS, PLAN, submitted
from tests.fakes.anthropic_server import text_turn
from tests.world import PlanScene, buttons


async def test_the_approval_deadline_times_planning_out(plan_scene: Any) -> None:
    scene = await submitted(plan_scene, plan_mode={"approval_timeout": "10m"})
    deadline = (await scene.state()).approval_deadline
    assert deadline is not None

    await scene.env.advance_time(9 * 60)
    assert (await scene.state()).phase is Phase.SUBMITTED
    await scene.env.advance_time(61)

    assert (await scene.state()).phase is Phase.INACTIVE
    message = scene.plan_message(1)
    assert not any(buttons(message).values())
    assert (message.embeds[0].description or "").startswith("⌛ **Timed out — planning cancelled**")
    assert "timed out — planning cancelled · " in (message.embeds[-1].footer.text or "")
    assert scene.bot_texts()[-1] == (
        "⌛ Plan v1 for **ada** got no decision in time — planning cancelled. Nothing was changed."
    )
    assert (await scene.audit())[-1] == ("timed-out", "scheduler")
    plan_id = (await scene.app.store.list_audit("ada"))[-1].plan_id
    assert plan_id is not None
    assert (await scene.record(plan_id, 1)).status is MessageStatus.TIMED_OUT

    late = await scene.ana.slash(scene.channel, "plan approve")
    assert late.response.content == "Cannot approve: the agent is not in plan mode."


async def test_an_idle_gathering_agent_times_out(plan_scene: Any) -> None:
    scene: PlanScene = await plan_scene(
        [text_turn("Let me think about it.")], plan_mode={"gathering_idle_timeout": "20m"}
    )
    await scene.ana.slash(scene.channel, "plan start", task="tidy up")
    assert (await scene.state()).phase is Phase.GATHERING

    await scene.env.advance_time(20 * 60 + 1)

    assert (await scene.state()).phase is Phase.INACTIVE
    assert scene.bot_texts()[-1] == (
        "⌛ **ada** spent too long in plan mode without submitting a plan — planning "
        "cancelled. Nothing was changed."
    )
    assert (await scene.audit())[-1] == ("timed-out", "scheduler")


async def test_after_a_restart_the_buttons_still_work(plan_scene: Any) -> None:
    scene = await submitted(plan_scene, text_turn("On it."))
    message = scene.plan_message(1)

    await scene.restart()

    assert [m.id for m in scene.plan_messages()] == [message.id]
    approved = await scene.ana.click(message, label="Approve")
    assert approved.response.content.startswith("Approved plan v1")
    assert (await scene.state()).phase is Phase.EXECUTING
    assert not any(buttons(scene.plan_message(1)).values())
    assert scene.progress_message().embeds[0].title == "Executing plan v1: Add a greeting module"


async def test_a_plan_message_deleted_while_the_bot_was_down_is_posted_again_at_start(
    plan_scene: Any,
) -> None:
    scene = await submitted(plan_scene, text_turn("On it."))
    deleted = scene.plan_message(1)
    await scene.world.bot.close()
    await scene.boss.delete(deleted)
    assert scene.plan_messages() == []

    await scene.restart()

    again = scene.plan_message(1)
    assert again.id != deleted.id
    assert buttons(again) == ALL_BUTTONS
    assert again.embeds[0].title == f"Plan: {PLAN['summary']}"
    revision = await scene.app.planning.current_revision("ada")
    assert revision is not None
    record = await scene.record(revision.plan_id, 1)
    assert (record.message_id, record.status) == (again.id, MessageStatus.PENDING)
    approved = await scene.ana.click(again, label="Approve")
    assert approved.response.content.startswith("Approved plan v1")


async def test_a_deadline_that_passed_while_the_bot_was_down_fires_on_start(
    plan_scene: Any,
) -> None:
    scene = await submitted(plan_scene, plan_mode={"approval_timeout": "10m"})
    message = scene.plan_message(1)
    await scene.world.bot.close()
    await scene.env.advance_time(11 * 60)
    await scene.restart()

    assert (await scene.state()).phase is Phase.INACTIVE
    assert [m.id for m in scene.plan_messages()] == [message.id]
    assert not any(buttons(scene.plan_message(1)).values())
    assert (await scene.audit())[-1] == ("timed-out", "scheduler")


async def test_a_deleted_progress_message_is_posted_again_after_a_restart(
    plan_scene: Any,
) -> None:
    scene = await submitted(plan_scene, text_turn("On it."))
    await scene.ana.click(scene.plan_message(1), label="Approve")
    deleted = scene.progress_message()
    await scene.boss.delete(deleted)

    await scene.restart()

    again = scene.progress_message()
    assert again.id != deleted.id
    assert again.embeds[0].title == "Executing plan v1: Add a greeting module"
    plan_id = (await scene.state()).plan_id
    assert plan_id is not None
    assert (await scene.record(plan_id, 1)).progress_message_id == again.id


async def test_a_decision_made_while_the_bot_was_down_settles_its_message_on_start(
    plan_scene: Any,
) -> None:
    """The operator rejects from the command line while the bot is stopped (the same holds
    for a decision committed just before a crash): nothing could edit the plan message then,
    so the restarted bot turns its buttons off and shows the outcome."""
    scene = await submitted(plan_scene)
    message = scene.plan_message(1)
    assert buttons(message) == ALL_BUTTONS
    await scene.world.bot.close()
    async with open_services(scene.world.config) as services:
        await plan_reject(services, "ada", None, "wrong approach")
    await scene.restart()

    settled = scene.plan_message(1)
    assert settled.id == message.id
    assert not any(buttons(settled).values())
    shown = " ".join(
        [settled.embeds[0].description or ""] + [e.footer.text or "" for e in settled.embeds]
    )
    assert "wrong approach" in shown
    assert "the operator" in shown
    revision = (await scene.app.store.list_audit("ada"))[-1]
    assert revision.plan_id is not None
    record = await scene.record(revision.plan_id, 1)
    assert (record.status, record.outcome, record.outcome_by) == (
        MessageStatus.DECIDED,
        "rejected",
        "the operator",
    )
    assert record.outcome_note == "wrong approach"


async def test_a_waiting_plan_is_left_waiting_by_the_settling_on_start(plan_scene: Any) -> None:
    scene = await submitted(plan_scene)
    await scene.restart()
    assert buttons(scene.plan_message(1)) == ALL_BUTTONS
    approved = await scene.ana.click(scene.plan_message(1), label="Approve")
    assert approved.response.content.startswith("Approved plan v1")
