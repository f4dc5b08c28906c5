"""A plan whose message Discord refuses is still shown: posted again as its markdown file
under the same buttons, so nobody approves (or waits on) a plan they cannot see."""

from __future__ import annotations

from typing import Any

import discord
import pytest

from plancord.discord_bot.plan_card import message as plan_message
from plancord.discord_bot.plan_card.embed import RenderedPlan
from tests.discord_bot.plans import ALL_BUTTONS, submitted
from tests.fakes.anthropic_server import text_turn
from tests.world import PlanScene, buttons


def refused_embed(rendered: RenderedPlan) -> dict[str, Any]:
    """An embed Discord refuses (its title is over 256 characters), standing in for any
    reason Discord may have to refuse the plan's card."""
    return {"embeds": [discord.Embed(title="x" * 300)]}


async def test_a_refused_plan_card_is_posted_as_a_file_with_its_buttons(
    plan_scene: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(plan_message, "_plan_payload", refused_embed)
    scene: PlanScene = await submitted(plan_scene)

    shown = [m for m in scene.bot_messages() if m.attachments and buttons(m)]
    assert len(shown) == 1, scene.bot_texts()
    message = shown[0]
    assert "could not be shown" in message.content
    assert message.attachments[0].filename == "plan-v1.md"
    assert buttons(message) == ALL_BUTTONS
    record = await scene.record((await scene.state()).plan_id or "", 1)
    assert record.message_id == message.id

    approved = await scene.ana.click(message, label="Approve")
    assert approved.response.content.startswith("Approved plan v1")


async def test_a_failed_edit_after_a_decision_is_said_and_settled_at_restart(
    plan_scene: Any,
) -> None:
    scene: PlanScene = await submitted(plan_scene, text_turn("On it."))
    message = scene.plan_message(1)
    scene.env.inject_error("PATCH", f"/channels/*/messages/{message.id}", status=500, times=None)

    approved = await scene.ana.click(message, label="Approve")

    assert approved.response.content.startswith("Approved plan v1")
    assert buttons(scene.plan_message(1)) == ALL_BUTTONS
    assert any(
        "could not be updated; its buttons no longer apply (the plan was approved by ana)" in t
        for t in scene.bot_texts()
    )

    scene.env.backend.faults.clear()
    await scene.restart()

    assert not any(buttons(scene.plan_message(1)).values())
