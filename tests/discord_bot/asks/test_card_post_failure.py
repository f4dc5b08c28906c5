"""A checkpoint card Discord refuses to post is tried again; when no try shows it, execution
ends and the audit and the model are told the true reason, not "nobody answered in time"."""

from __future__ import annotations

from typing import Any

import discord
import pytest

from plancord.core.planning import Phase
from plancord.discord_bot.asks import permissions, posting
from plancord.discord_bot.asks.permissions import Permissions
from tests.discord_bot.agent_scene import SceneFactory
from tests.discord_bot.asks.asking import pending, tool_results
from tests.discord_bot.asks.checkpointing import DROP, PLAN, WRITE
from tests.discord_bot.plans import submitted_plan
from tests.fakes.anthropic_server import ToolCall, text_turn, tool_turn
from tests.world import buttons


async def executing(plan_scene: Any, box: list[Any], *after: Any) -> Any:
    """Approved; step 1's work done; the model uses 🔴 step 2's tool, so the host posts its
    checkpoint card before that call runs."""
    scene = await submitted_plan(
        plan_scene, PLAN, WRITE, DROP, *after, plan_mode={"confirm_high_risk_steps": True}
    )
    box.append(scene)
    await scene.ana.click(scene.plan_message(1), label="Approve")
    return scene


def refuse_sends(monkeypatch: pytest.MonkeyPatch, times: int | None) -> list[Any]:
    """Make SimCord fail the next ``times`` channel sends (every one when None) from the
    moment a checkpoint card is built, so the card's own post is what Discord refuses."""
    monkeypatch.setattr(posting, "RETRY_DELAYS", (0.01, 0.01, 0.01))
    built = Permissions.card
    scene_box: list[Any] = []

    def card(self: Permissions, ask_id: str, agent: str, payload: dict[str, Any]) -> Any:
        scene = scene_box[0]
        # What ``env.inject_error`` records, which bot-owned work may not call itself.
        scene.env.backend.faults.append(
            {
                "method": "POST",
                "path": "/channels/*/messages",
                "status": 503,
                "code": 0,
                "message": "Service Unavailable (injected by test)",
                "times": times,
            }
        )
        return built(self, ask_id, agent, payload)

    monkeypatch.setattr(Permissions, "card", card)
    return scene_box


async def test_a_refused_checkpoint_card_is_posted_again_and_answered(
    plan_scene: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    box = refuse_sends(monkeypatch, times=2)
    scene = await executing(plan_scene, box, text_turn("done"))

    card = scene.channel.last_message
    assert set(buttons(card)) == {"Continue", "Stop"}
    assert (await scene.state()).phase is Phase.EXECUTING
    await scene.ana.click(card, label="Continue")
    await scene.app.runtime.wait_idle("ada")

    assert (scene.app.manager.workspace_of("ada") / "dropped").exists()
    actions = [a.action for a in await scene.app.store.list_audit("ada")]
    assert "permission-allowed" in actions
    assert "permission-not-shown" not in actions


async def test_a_checkpoint_card_never_shown_ends_execution_with_the_reason(
    plan_scene: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    box = refuse_sends(monkeypatch, times=None)
    scene = await executing(plan_scene, box, text_turn("stopped"))
    scene.env.backend.faults.clear()

    assert (await scene.state()).phase is Phase.INACTIVE
    audit = await scene.app.store.list_audit("ada")
    refused = [a for a in audit if a.action == "permission-not-shown"]
    assert len(refused) == 1
    reason = refused[0].detail["reason"]
    assert reason.startswith("the checkpoint card could not be posted: Discord answered 503")
    completed = [a for a in audit if a.action == "completed"]
    assert reason in str(completed[-1].detail)
    assert "nobody answered" not in str(completed[-1].detail)
    assert not any(a.action == "permission-timed-out" for a in audit)

    # The turn ended with the stop (no further model call): the model reads the reason in
    # its conversation when it is next asked.
    history = await scene.app.conversations.load("ada")
    results = [
        block
        for message in history
        if isinstance(message["content"], list)
        for block in message["content"]
        if isinstance(block, dict) and block.get("type") == "tool_result"
    ]
    told = str(results[-1]["content"])
    assert results[-1]["is_error"] is True
    assert "the checkpoint card could not be posted: Discord answered 503" in told
    assert "nobody answered" not in told


async def test_a_deleted_checkpoint_card_is_posted_again_and_continue_works_there(
    plan_scene: Any,
) -> None:
    scene = await executing(plan_scene, [], text_turn("done"))
    card = scene.channel.last_message
    assert set(buttons(card)) == {"Continue", "Stop"}

    await scene.boss.delete(card)

    again = next(m for m in reversed(scene.bot_messages()) if buttons(m))
    assert again.id != card.id
    assert set(buttons(again)) == {"Continue", "Stop"}
    assert (
        "The checkpoint card of **ada** was deleted; it is posted again" in (scene.bot_texts()[-1])
    )
    await scene.ana.click(again, label="Continue")
    await scene.app.runtime.wait_idle("ada")
    assert (scene.app.manager.workspace_of("ada") / "dropped").exists()


async def test_a_checkpoint_card_whose_embed_discord_rejects_is_posted_as_text(
    plan_scene: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refused(agent: str, payload: dict[str, Any], **_: Any) -> discord.Embed:
        return discord.Embed(title="x" * 300)  # over Discord's 256: refused with a 400

    monkeypatch.setattr(permissions, "permission_embed", refused)
    scene = await executing(plan_scene, [], text_turn("done"))

    card = scene.channel.last_message
    assert not card.embeds
    assert set(buttons(card)) == {"Continue", "Stop"}
    assert "start 🔴 step 2" in card.content
    await scene.ana.click(card, label="Continue")
    await scene.app.runtime.wait_idle("ada")
    assert (scene.app.manager.workspace_of("ada") / "dropped").exists()


async def test_a_permission_card_never_shown_runs_nothing_and_says_why(
    scene_factory: SceneFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    box = refuse_sends(monkeypatch, times=None)
    touch = tool_turn(ToolCall("bash_execute", {"command": "touch made.txt"}))
    scene = await scene_factory([touch, text_turn("Could not.")])
    box.append(scene)
    channel = await scene.create_agent("ada", profile="standard")
    await scene.ana.send(channel, "make a file")
    scene.env.backend.faults.clear()

    assert not (scene.app.manager.workspace_of("ada") / "made.txt").exists()
    [result] = tool_results(scene, 1)
    assert result["is_error"] is True
    assert "the permission card could not be posted: Discord answered 503" in result["content"]
    audit = [a for a in await scene.app.store.list_audit("ada") if a.action.startswith("perm")]
    assert [a.action for a in audit] == ["permission-not-shown"]
    assert await pending(scene) == []
