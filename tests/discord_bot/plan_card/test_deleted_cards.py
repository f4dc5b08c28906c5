"""A card the store knows that a moderator deletes is posted again at once, with buttons that
work, and the channel hears who deleted it; a card of something no longer waiting is not."""

from __future__ import annotations

from typing import Any

import discord

from plancord.storage.plan_messages import PlanMessageStore
from tests.discord_bot.plans import ALL_BUTTONS, submitted
from tests.fakes.anthropic_server import ToolCall, text_turn, tool_turn
from tests.requests_seen import last_user
from tests.world import PlanScene, buttons

QUESTION = "Which branch should I deploy?"
CHOICES = ["main", "staging"]


def deleted_by(scene: PlanScene, moderator: Any) -> None:
    """The entry Discord writes to the server's audit log when a moderator deletes one of
    the bot's messages (SimCord's member actions do not write one themselves)."""
    scene.env.backend.record_audit_log(
        scene.guild.id,
        discord.AuditLogAction.message_delete.value,
        target_id=scene.env.bot.user.id,
        user_id=moderator.id,
        options={"channel_id": str(scene.channel.id), "count": "1"},
    )


async def test_a_deleted_plan_message_is_posted_again_with_working_buttons(
    plan_scene: Any,
) -> None:
    scene = await submitted(plan_scene, text_turn("On it."))
    old = scene.plan_message(1)
    plan_id = (await scene.state()).plan_id or ""

    deleted_by(scene, scene.boss)
    await scene.boss.delete(old)

    new = scene.plan_message(1)
    assert new.id != old.id
    assert buttons(new) == ALL_BUTTONS
    record = await scene.record(plan_id, 1)
    assert record.message_id == new.id
    store = PlanMessageStore(scene.app.db)
    assert await store.by_message(scene.channel.id, old.id) is None
    said = scene.bot_texts()[-1]
    assert "The plan v1 of **ada** was deleted by **boss**; it is posted again" in said
    assert ("card-reposted", "policy:discord") in await scene.audit()

    approved = await scene.ana.click(new, label="Approve")
    assert approved.response.content.startswith("Approved plan v1")


async def test_without_the_audit_log_the_channel_hears_only_that_it_was_deleted(
    plan_scene: Any,
) -> None:
    scene = await submitted(plan_scene)
    old = scene.plan_message(1)

    await scene.boss.delete(old)

    assert scene.plan_message(1).id != old.id
    said = scene.bot_texts()[-1]
    assert said.startswith("♻️ The plan v1 of **ada** was deleted; it is posted again")


async def test_a_bulk_delete_posts_again_the_waiting_question_but_not_the_decided_plan(
    plan_scene: Any,
) -> None:
    asks = tool_turn(ToolCall("ask_user", {"question": QUESTION, "choices": CHOICES}))
    scene = await submitted(plan_scene, asks, text_turn("Thanks."))
    await scene.ana.click(scene.plan_message(1), label="Approve")
    decided = scene.plan_message(1)
    question = scene.channel.last_message
    assert QUESTION in question.content
    plan_id = (await scene.state()).plan_id or ""

    backend = scene.env.backend
    backend.bulk_delete_messages(scene.channel.id, [decided.id, question.id])
    backend.record_audit_log(
        scene.guild.id,
        discord.AuditLogAction.message_bulk_delete.value,
        target_id=scene.channel.id,
        user_id=scene.boss.id,
        options={"count": "2"},
    )
    await scene.env.settle()

    assert not scene.plan_messages()
    assert (await scene.record(plan_id, 1)).message_id == decided.id
    [again] = [m for m in scene.bot_messages() if QUESTION in m.content]
    assert again.id != question.id
    said = [text for text in scene.bot_texts() if "posted again" in text]
    assert len(said) == 1
    assert "The question of **ada** was deleted by **boss**; it is posted again" in said[0]

    await scene.ana.click(again, label="main")
    assert scene.bot_texts()[-1] == "Thanks."


async def test_a_deleted_question_is_posted_again_and_answered_there(plan_scene: Any) -> None:
    scene: PlanScene = await plan_scene(
        [
            tool_turn(ToolCall("ask_user", {"question": QUESTION, "choices": CHOICES})),
            text_turn("Thanks."),
        ]
    )
    await scene.ana.send(scene.channel, "deploy it")
    old = scene.channel.last_message
    assert QUESTION in old.content

    await scene.boss.delete(old)

    [new] = [m for m in scene.bot_messages() if QUESTION in m.content]
    assert new.id != old.id
    assert "The question of **ada** was deleted; it is posted again" in scene.bot_texts()[-1]
    rows = await scene.app.db.fetchall("SELECT message_id FROM pending_asks")
    assert [row["message_id"] for row in rows] == [new.id]

    await scene.ana.click(new, label="staging")

    results = [
        block
        for request in scene.world.server.requests
        for block in last_user(request)["content"]
        if isinstance(block, dict) and block.get("type") == "tool_result"
    ]
    assert str(results[-1]["content"]).startswith("The user answered: staging")
    assert scene.bot_texts()[-1] == "Thanks."
