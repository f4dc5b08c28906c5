"""Where is part of who, on every kind of card: a copy of a card's controls on a bot message
in another server (clicked by eve, an administrator only there) or in another channel of the
agent's own server (clicked by boss, an administrator here) decides nothing. The click is
refused with the reason, audited as every refusal is, and the copy is left as it was; the
card still waits in the agent's channel, where it is decided. A copy of an ask's controls in
the agent's own channel may decide it, but only the agent's card is redrawn."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import discord

from plancord.core.planning import Phase
from plancord.discord_bot.asks.permission_card import permission_view
from plancord.discord_bot.asks.question_card import question_view
from plancord.discord_bot.plan_card.buttons import plan_buttons
from plancord.discord_bot.result_card.buttons import result_view
from tests.discord_bot import test_drift
from tests.discord_bot.asks.checkpointing import DROP, WRITE
from tests.discord_bot.asks.checkpointing import PLAN as RISKY
from tests.discord_bot.elsewhere import (
    Elsewhere,
    another_server,
    ask_id_of,
    copy_of,
    followup_text,
    misplaced,
    unchanged,
)
from tests.discord_bot.plans import submitted, submitted_plan
from tests.discord_bot.result_card.completed import completed, record, result_card
from tests.fakes.anthropic_server import ToolCall, text_turn, tool_turn
from tests.requests_seen import last_user
from tests.world import PlanScene, buttons

TOUCH = [
    tool_turn(ToolCall("bash_execute", {"command": "touch made.txt"})),
    text_turn("Made it."),
]
CHOICES = ["main", "release"]
QUESTION = [
    tool_turn(ToolCall("ask_user", {"question": "Which branch?", "choices": CHOICES})),
    text_turn("Thanks."),
]


async def _pending(scene: PlanScene) -> int:
    return len(await scene.app.db.fetchall("SELECT id FROM pending_asks", ()))


async def _clicked_elsewhere(
    scene: PlanScene, view: discord.ui.View, label: str
) -> tuple[Elsewhere, list[discord.Message], list[str]]:
    """``view`` copied into another server and into another channel here; eve and boss
    click ``label`` on them. The copies and what each click was told."""
    there = another_server(scene.world)
    lobby = scene.guild.create_text_channel("lobby")
    far = await copy_of(scene.world, there.lounge, view)
    near = await copy_of(scene.world, lobby, view)
    told = [
        followup_text(await there.eve.click(far, label=label)),
        followup_text(await scene.boss.click(near, label=label)),
    ]
    return there, [far, near], told


async def _assert_refused_elsewhere(
    scene: PlanScene,
    there: Elsewhere,
    copies: list[discord.Message],
    told: list[str],
    *,
    action: str,
    subject: str,
    act: str,
) -> None:
    assert all("belongs to another channel" in text for text in told), told
    assert all(unchanged(scene.world, copy) for copy in copies)
    rows = await misplaced(scene.world)
    shown = [
        (r.action, r.detail["subject"], r.detail["act"], r.detail["place"]["guild"]) for r in rows
    ]
    assert sorted(shown) == sorted(
        [
            (action, subject, act, str(there.guild.id)),
            (action, subject, act, str(scene.guild.id)),
        ]
    )
    assert {r.actor for r in rows} == {
        f"user:{there.eve.id}(eve)",
        f"user:{scene.boss.id}(boss)",
    }


async def _standard_profile(scene: PlanScene) -> None:
    record_ = await scene.app.store.get_agent("ada")
    await scene.app.store.update_agent(
        record_.model_copy(update={"permission_profile": {"preset": "standard"}})
    )


def _workspace(scene: PlanScene) -> Path:
    return scene.app.manager.workspace_of("ada")


async def test_a_permission_request_is_decided_only_in_the_agents_channel(
    plan_scene: Any,
) -> None:
    scene: PlanScene = await plan_scene(TOUCH)
    await _standard_profile(scene)
    await scene.ana.send(scene.channel, "make a file")
    card = scene.channel.last_message
    assert card.embeds and buttons(card) == {
        "Allow": True,
        "Deny": True,
        "Allow always…": True,
        "Deny always…": True,
    }

    there, copies, told = await _clicked_elsewhere(scene, permission_view(ask_id_of(card)), "Allow")

    assert not (_workspace(scene) / "made.txt").exists()
    assert await _pending(scene) == 1
    await _assert_refused_elsewhere(
        scene, there, copies, told, action="ask-refused", subject="permission", act="allow"
    )
    await scene.ana.click(card, label="Allow")
    assert (_workspace(scene) / "made.txt").exists()


async def test_a_copy_in_the_agents_channel_decides_but_only_the_card_is_redrawn(
    plan_scene: Any,
) -> None:
    scene: PlanScene = await plan_scene(TOUCH)
    await _standard_profile(scene)
    await scene.ana.send(scene.channel, "make a file")
    card = scene.channel.last_message
    copy = await copy_of(scene.world, scene.channel, permission_view(ask_id_of(card)))

    await scene.ana.click(copy, label="Allow")

    assert (_workspace(scene) / "made.txt").exists()
    assert unchanged(scene.world, copy)
    stored = scene.env.backend.messages[scene.channel.id][card.id]
    fields = {f["name"]: f["value"] for f in stored.embeds[0]["fields"]}
    assert fields["Decision"] == f"Allowed by <@{scene.ana.id}>"


async def test_a_question_is_answered_only_in_the_agents_channel(plan_scene: Any) -> None:
    scene: PlanScene = await plan_scene(QUESTION)
    await scene.ana.send(scene.channel, "deploy it")
    card = scene.channel.last_message
    assert "Which branch?" in card.content

    there, copies, told = await _clicked_elsewhere(
        scene, question_view(ask_id_of(card), CHOICES), "main"
    )

    assert len(scene.world.server.requests) == 1  # the model still waits for its answer
    assert await _pending(scene) == 1
    await _assert_refused_elsewhere(
        scene, there, copies, told, action="ask-refused", subject="question", act="answer"
    )
    await scene.ana.click(card, label="release")
    [answer] = [
        block
        for block in last_user(scene.world.server.requests[1])["content"]
        if block.get("type") == "tool_result"
    ]
    assert "release\n(picked from your choices by ana" in str(answer["content"])


async def test_a_checkpoint_is_continued_only_in_the_agents_channel(plan_scene: Any) -> None:
    scene = await submitted_plan(
        plan_scene,
        RISKY,
        WRITE,
        DROP,
        text_turn("stopped"),
        plan_mode={"confirm_high_risk_steps": True},
    )
    await scene.ana.click(scene.plan_message(1), label="Approve")
    card = scene.channel.last_message
    assert buttons(card) == {"Continue": True, "Stop": True}
    view = permission_view(ask_id_of(card), labels=("Continue", "Stop"))

    there, copies, told = await _clicked_elsewhere(scene, view, "Continue")

    assert not (_workspace(scene) / "dropped").exists()
    await _assert_refused_elsewhere(
        scene, there, copies, told, action="ask-refused", subject="checkpoint", act="continue"
    )
    await scene.ana.click(card, label="Stop")
    await scene.app.runtime.wait_idle("ada")
    assert not (_workspace(scene) / "dropped").exists()


async def test_a_drift_is_allowed_only_in_the_agents_channel(plan_scene: Any) -> None:
    create = test_drift._create
    scene = await submitted_plan(
        plan_scene, test_drift.PLAN, create("greet.py"), create("evil.py"), text_turn("done")
    )
    await scene.ana.click(scene.plan_message(1), label="Approve")
    card = scene.channel.last_message
    assert "evil.py" in str(card.embeds[0].to_dict())

    there, copies, told = await _clicked_elsewhere(scene, permission_view(ask_id_of(card)), "Allow")

    assert not (_workspace(scene) / "evil.py").exists()
    await _assert_refused_elsewhere(
        scene, there, copies, told, action="ask-refused", subject="drift", act="allow"
    )
    await scene.ana.click(card, label="Deny")
    assert not (_workspace(scene) / "evil.py").exists()


async def test_a_plan_is_approved_only_in_the_agents_channel(plan_scene: Any) -> None:
    scene = await submitted(plan_scene)
    revision = await scene.app.planning.current_revision("ada")
    assert revision is not None

    there, copies, told = await _clicked_elsewhere(
        scene, plan_buttons(revision.plan_id, 1), "Approve"
    )

    assert (await scene.state()).phase is Phase.SUBMITTED
    await _assert_refused_elsewhere(
        scene, there, copies, told, action="decision-refused", subject="plan", act="approve"
    )


async def test_a_result_is_merged_only_in_the_agents_channel(plan_scene: Any) -> None:
    scene, _ = await completed(plan_scene)
    found = await record(scene)
    assert found.result_version is not None
    view = result_view(found.plan_id, found.result_version, (), waiting=True, can_push=False)
    card = result_card(scene)

    there, copies, told = await _clicked_elsewhere(scene, view, "Merge")

    assert (await record(scene)).waiting
    await _assert_refused_elsewhere(
        scene, there, copies, told, action="result-refused", subject="result", act="merge"
    )
    assert buttons(card)["Merge"]
