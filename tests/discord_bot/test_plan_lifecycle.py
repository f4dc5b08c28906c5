"""The planning listeners hear each change in the order ``plancord.app.PlanLifecycle``
states, played end to end through the real bot: a member's ``/plan cancel`` while ada's
execution waits at a checkpoint is shown in the channel first, then ends the execution
record, then opens its result from the ended record, whose completion card follows at once
(not at the next start); ada is told, and nothing of the plan runs after it."""

from __future__ import annotations

from typing import Any

import discord

from plancord.core.execution import ResultState, StepOutcome
from plancord.core.planning import Phase
from tests.discord_bot.asks.checkpointing import DROP, PLAN, WRITE
from tests.discord_bot.plans import submitted_plan
from tests.discord_bot.result_card.completed import record, result_cards
from tests.fakes.anthropic_server import text_turn
from tests.world import PlanScene, buttons

CANCEL_LINE = "Execution of the approved plan was cancelled by ana"


def _position(scene: PlanScene, message: discord.Message) -> int:
    return [m.id for m in scene.bot_messages()].index(message.id)


async def test_a_cancel_is_shown_then_ends_the_record_then_opens_its_result_and_card(
    plan_scene: Any,
) -> None:
    scene = await submitted_plan(
        plan_scene,
        PLAN,
        WRITE,
        DROP,
        text_turn("never"),
        plan_mode={"confirm_high_risk_steps": True},
    )
    await scene.ana.click(scene.plan_message(1), label="Approve")
    checkpoint = scene.channel.last_message
    assert set(buttons(checkpoint)) == {"Continue", "Stop"}

    cancelled = await scene.ana.slash(scene.channel, "plan cancel")

    assert cancelled.response.content == "Cancelled plan mode for **ada**."
    assert (await scene.state()).phase is Phase.INACTIVE
    # The step keeper ended the record before the results read it, so the result opened
    # within the cancel itself: a results listener ahead of it finds a running record and
    # opens nothing until the next start.
    ended = await record(scene)
    assert ended.ended_at is not None
    assert ended.steps == (StepOutcome.DONE, StepOutcome.STOPPED)
    assert ended.result is ResultState.WAITING
    [card] = result_cards(scene)
    # The front end heard the cancel before the results did: its line comes first.
    [line] = [m for m in scene.bot_messages() if CANCEL_LINE in m.content]
    assert _position(scene, line) < _position(scene, card)

    # ada is told that plan mode ended; the checkpoint's Continue after it starts nothing.
    await scene.ana.click(checkpoint, label="Continue")
    await scene.app.runtime.wait_idle("ada")
    history = await scene.app.conversations.load("ada")
    told = [
        block.get("text", "")
        for message in history
        for block in message["content"]
        if isinstance(block, dict)
    ]
    assert any("Planning was cancelled by ana" in text for text in told)
    assert not (scene.app.manager.workspace_of("ada") / "dropped").exists()
