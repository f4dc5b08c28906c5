"""A settled ask's card is marked even when Discord refused the click's edit.

ada reaches a 🔴 step; ana clicks Continue, and Discord answers the click's edit with a
503, and the card's own edit too. The step runs (the ask is settled); the card must not go
on showing live Continue/Stop: marking it is owed (``agent.owed``) and tried again until
Discord takes the edit."""

from __future__ import annotations

from typing import Any

from tests.discord_bot.asks.test_checkpoints import _executing
from tests.fakes.anthropic_server import text_turn
from tests.world import buttons


async def test_a_settled_checkpoint_card_is_marked_after_discord_refused_the_click_once(
    plan_scene: Any,
) -> None:
    scene, workspace = await _executing(plan_scene, text_turn("done"))
    card = scene.channel.last_message
    assert set(buttons(card)) == {"Continue", "Stop"}
    # The click's edit refused, then the card's own edit too: marking it is owed.
    scene.env.inject_error("PATCH", "/webhooks/*/*/messages/@original", status=503, code=0, times=1)
    scene.env.inject_error("PATCH", f"/channels/*/messages/{card.id}", status=503, code=0, times=1)

    await scene.ana.click(card, label="Continue")
    await scene.app.runtime.wait_idle("ada")
    assert (workspace / "dropped").exists(), "the ask was settled: the step ran"

    await scene.env.advance_time(5)
    await scene.env.settle()

    stored = scene.env.backend.messages[card.channel.id][card.id]
    live = [
        item for row in stored.components for item in row["components"] if not item.get("disabled")
    ]
    assert live == [], f"the settled card still shows live controls: {live}"
    assert "Continue — chosen by" in str(stored.embeds), stored.embeds
    assert [name.split()[0] for name in scene.app.owed.landed] == ["mark-ask-card"]
