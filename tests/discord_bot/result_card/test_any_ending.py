"""However execution ends, its result gets a completion card: Stop on a 🔴 step's
checkpoint, and a restart while the checkpoint waited, each show the step stopped and the
checkpoint's answer; a drift a human denied shows how it was decided."""

from __future__ import annotations

from typing import Any

from plancord.core.execution import ResultState
from tests.discord_bot.asks.checkpointing import DROP, PLAN, WRITE
from tests.discord_bot.plans import submitted_plan
from tests.discord_bot.result_card.completed import record, result_card
from tests.fakes.anthropic_server import text_turn
from tests.world import PlanScene, buttons


async def _at_checkpoint(plan_scene: Any) -> PlanScene:
    scene = await submitted_plan(
        plan_scene,
        PLAN,
        WRITE,
        DROP,
        text_turn("never"),
        plan_mode={"confirm_high_risk_steps": True},
    )
    await scene.ana.click(scene.plan_message(1), label="Approve")
    return scene


async def test_stop_on_a_checkpoint_posts_the_card(plan_scene: Any) -> None:
    scene = await _at_checkpoint(plan_scene)

    await scene.ana.click(scene.channel.last_message, label="Stop")
    await scene.app.runtime.wait_idle("ada")

    card = result_card(scene)
    first, second = card.embeds[0].fields
    assert "✅ done" in first.value and "`migration.sql` +1 −0" in first.value
    assert "⏹️ stopped" in second.value and "— Stop" in second.value
    assert (await record(scene)).result is ResultState.WAITING
    assert buttons(card) == {"Merge": True, "Discard": True}


async def test_a_restart_while_the_checkpoint_waits_posts_the_card(plan_scene: Any) -> None:
    scene = await _at_checkpoint(plan_scene)

    await scene.restart()
    await scene.app.runtime.wait_idle("ada")

    card = result_card(scene)
    assert "checkpoint of high-risk step 2 waited" in (card.embeds[0].description or "")
    assert "⏹️ stopped" in card.embeds[0].fields[1].value
