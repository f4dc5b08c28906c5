"""Every ending of an execution opens its result, and its card arrives: an operator's
``plancord plan cancel`` from a shell while a checkpoint waits, an amendment nobody decided
in time, a spent budget, a restart after plan mode ended where nobody listened; another plan
is not approved while a result is open; a card Discord refused is posted when Discord
answers again, without a restart."""

from __future__ import annotations

from typing import Any

import pytest

from plancord.app import core_services
from plancord.command.operator import open_services, plan_approve, plan_cancel
from plancord.core.execution import ResultState, StepOutcome
from plancord.core.planning import Actor, ApprovalMode, Phase
from plancord.discord_bot.result_card import owed
from plancord.discord_bot.result_card.cards import ResultCards
from tests.discord_bot.asks.checkpointing import DROP, PLAN, WRITE
from tests.discord_bot.plans import submitted_plan
from tests.discord_bot.result_card.completed import completed, record, reply, result_cards
from tests.fakes.anthropic_server import ToolCall, text_turn, tool_turn
from tests.world import PlanScene, buttons


async def _at_checkpoint(plan_scene: Any, *after: Any) -> PlanScene:
    scene = await submitted_plan(
        plan_scene,
        PLAN,
        WRITE,
        DROP,
        *(after or (text_turn("never"),)),
        plan_mode={"confirm_high_risk_steps": True},
    )
    await scene.ana.click(scene.plan_message(1), label="Approve")
    return scene


async def _owed_cards_paid(scene: PlanScene) -> None:
    cards: ResultCards = scene.world.bot.notifier.results
    await cards.owed.pay()


async def test_an_operator_cancel_while_a_checkpoint_waits_opens_the_result(
    plan_scene: Any,
) -> None:
    scene = await _at_checkpoint(plan_scene)
    checkpoint = scene.channel.last_message
    assert set(buttons(checkpoint)) == {"Continue", "Stop"}

    async with open_services(scene.app.config) as services:
        said = await plan_cancel(services, "ada", "not today")
    assert "was executing" in said

    ended = await record(scene)
    assert ended.ended_at is not None and ended.result is ResultState.WAITING
    assert ended.steps == (StepOutcome.DONE, StepOutcome.STOPPED)
    await _owed_cards_paid(scene)
    [card] = result_cards(scene)
    assert buttons(card) == {"Merge": True, "Discard": True}
    assert "`migration.sql` +1 −0" in card.embeds[0].fields[0].value

    # The checkpoint's Continue, given after the cancel, starts nothing.
    await scene.ana.click(checkpoint, label="Continue")
    await scene.app.runtime.wait_idle("ada")
    assert not (scene.app.manager.workspace_of("ada") / "dropped").exists()
    assert (await record(scene)).result is ResultState.WAITING


AMENDED = {
    "summary": "Migrate the database",
    "steps": [
        {"description": "Write the migration", "tools": ["create_file"]},
        {"description": "Check it", "tools": ["view"]},
    ],
}


async def test_an_amendment_nobody_decided_in_time_opens_the_result(plan_scene: Any) -> None:
    amend = tool_turn(ToolCall("submit_plan", {"plan": AMENDED}))
    scene = await submitted_plan(
        plan_scene,
        PLAN,
        WRITE,
        amend,
        text_turn("waiting for the amendment"),
        plan_mode={"approval_timeout": "10m"},
    )
    await scene.ana.click(scene.plan_message(1), label="Approve")
    await scene.app.runtime.wait_idle("ada")
    assert (await scene.state()).amends == 1

    await scene.env.advance_time(11 * 60)
    await scene.app.scheduler.run_once()
    await scene.app.runtime.results.settled()

    assert (await scene.state()).phase is Phase.INACTIVE
    ended = await record(scene)
    assert ended.ended_at is not None and ended.result is ResultState.WAITING
    [card] = result_cards(scene)
    assert "`migration.sql` +1 −0" in card.embeds[0].fields[0].value


async def test_a_spent_budget_opens_the_result(plan_scene: Any) -> None:
    scene = await submitted_plan(plan_scene, PLAN, WRITE, DROP, text_turn("never"))
    agent = await scene.app.store.get_agent("ada")
    usage = await scene.app.conversations.usage("ada")
    spent = int(sum(u.billed_input() + u.output_tokens for u in usage))
    overrides = {"budget_tokens": spent + 1}
    await scene.app.store.update_agent(agent.model_copy(update={"plan_mode_overrides": overrides}))

    await scene.ana.click(scene.plan_message(1), label="Approve")
    await scene.app.runtime.wait_idle("ada")

    ended = await record(scene)
    assert ended.ended_at is not None and ended.result is ResultState.WAITING
    assert result_cards(scene)


async def test_a_restart_ends_an_execution_plan_mode_no_longer_holds(plan_scene: Any) -> None:
    scene = await _at_checkpoint(plan_scene)
    # Plan mode ends where nobody listens (a process that died before its listeners ran).
    deaf = core_services(scene.app.config, scene.app.db, scene.app.clock)
    await deaf.planning.cancel("ada", Actor.operator(), "gone")
    assert (await record(scene)).ended_at is None

    await scene.restart()
    await scene.app.runtime.wait_idle("ada")

    ended = await record(scene)
    assert ended.ended_at is not None and ended.result is ResultState.WAITING
    assert "no longer held it" in (ended.end_reason or "")
    assert result_cards(scene)


async def test_another_plan_is_refused_while_an_execution_is_unended(plan_scene: Any) -> None:
    again = tool_turn(ToolCall("submit_plan", {"plan": {**PLAN, "summary": "Second plan"}}))
    scene = await _at_checkpoint(plan_scene, again, text_turn("never"))
    checkpoint = scene.channel.last_message
    async with open_services(scene.app.config) as services:
        await plan_cancel(services, "ada", "not today")
    await scene.ana.click(checkpoint, label="Stop")
    await scene.app.runtime.wait_idle("ada")
    await scene.ana.slash(scene.channel, "plan start", task="more")
    await scene.app.runtime.wait_idle("ada")
    assert (await scene.state()).phase is Phase.SUBMITTED

    clicked = await scene.ana.click(scene.plan_message(), label="Approve")
    typed = await scene.ana.slash(scene.channel, "plan approve")
    for answer in (clicked, typed):
        assert "waits for a decision" in reply(answer)
    async with open_services(scene.app.config) as services:
        with pytest.raises(Exception, match="waits for a decision"):
            await plan_approve(services, "ada", None, ApprovalMode.NORMAL)
    assert (await scene.state()).phase is Phase.SUBMITTED
    workspace = scene.app.manager.workspace_of("ada")
    first = await record(scene)
    assert first.branch in (workspace / ".git" / "HEAD").read_text()


async def test_a_card_discord_refused_is_posted_when_it_answers_again(
    plan_scene: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(owed, "FIRST_DELAY", 0.0)
    scenes: list[PlanScene] = []
    post = ResultCards.post

    async def refused_once(self: ResultCards, plan_id: str) -> Any:
        if len(scenes) == 1:
            # Discord refuses the card's own request, once (what ``env.inject_error`` records).
            scenes.append(scenes[0])
            scenes[0].env.backend.faults.append(
                {
                    "method": "POST",
                    "path": "/channels/*/messages",
                    "status": 503,
                    "code": 0,
                    "message": "Service Unavailable (injected by test)",
                    "times": 1,
                }
            )
        return await post(self, plan_id)

    async def scene_of(*args: Any, **options: Any) -> PlanScene:
        scene: PlanScene = await plan_scene(*args, **options)
        scenes.append(scene)
        return scene

    monkeypatch.setattr(ResultCards, "post", refused_once)
    scene, _ = await completed(scene_of)
    # The card's first post was refused (the fault is spent); the owed card was tried
    # again by the running bot, with no restart and no click.
    assert len(scenes) == 2 and scene.env.backend.faults == []
    await _owed_cards_paid(scene)

    [card] = result_cards(scene)
    assert buttons(card) == {"Merge": True, "Discard": True}
    assert scene.world.bot.notifier.results.owed.owed() == ()
    answer = await scene.ana.click(card, label="Discard")
    assert "Discarded" in reply(answer)
