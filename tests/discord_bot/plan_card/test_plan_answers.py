"""A plan's open questions with choices, answered from the plan message before approving:
a menu per question, a pick kept with its audit row and shown on the message, refused for
members who may not instruct the agent and on a revision no longer waiting, still working
after a restart, and handed to the agent with the approval."""

from __future__ import annotations

import asyncio
from typing import Any

from plancord.app import core_services
from plancord.core.planning import Actor, Phase, PlanRef
from plancord.storage.plan_answers import PlanAnswerStore
from tests.discord_bot.plan_card.answering import PLAN, PLAN_V2, menus, questions_field, refusal
from tests.discord_bot.plans import submitted_plan
from tests.fakes.anthropic_server import ToolCall, text_turn, tool_turn
from tests.requests_seen import last_user
from tests.world import PlanScene


async def asked(plan_scene: Any, *after: Any) -> PlanScene:
    return await submitted_plan(plan_scene, PLAN, text_turn("Plan submitted."), *after)


async def test_a_pick_is_shown_kept_audited_and_sent_with_the_approval(plan_scene: Any) -> None:
    scene = await asked(plan_scene, text_turn("Deploying to production first."))
    message = scene.plan_message(1)
    [menu] = menus(scene, message)
    assert menu["placeholder"] == "Q2: Which environment first?"
    assert [o["label"] for o in menu["options"]] == ["staging", "production"]
    assert "▸ staging · production" in questions_field(message)

    await scene.ana.select(message, ["1"], custom_id=menu["custom_id"])

    message = scene.plan_message(1)
    assert "✅ **production** — ana" in questions_field(message)
    [menu] = menus(scene, message)
    assert [o.get("default", False) for o in menu["options"]] == [False, True]
    state = await scene.state()
    answers = await PlanAnswerStore(scene.app.db).for_revision(state.plan_id or "", 1)
    assert answers[1].answer == "production" and answers[1].by_name == "ana"
    audit = [a for a in await scene.app.store.list_audit("ada") if a.action == "question-answered"]
    assert [(a.detail["question"], a.detail["answer"]) for a in audit] == [(2, "production")]
    assert audit[0].actor == f"user:{scene.ana.id}(ana)"

    await scene.ana.click(message, label="Approve")
    await asyncio.wait_for(scene.app.runtime.wait_idle("ada"), 20)

    sent = str(last_user(scene.world.server.requests[-1])["content"])
    assert "Answers to your open questions:" in sent
    assert "2. Which environment first? → production (picked by ana at " in sent
    assert "Anything else" not in sent.split("Answers to your open questions:")[1]
    assert all(m.get("disabled") for m in menus(scene, scene.plan_message(1)))


async def test_an_unanswered_question_is_said_to_be_unanswered(plan_scene: Any) -> None:
    scene = await asked(plan_scene, text_turn("Starting with staging."))
    await scene.ana.click(scene.plan_message(1), label="Approve")
    await asyncio.wait_for(scene.app.runtime.wait_idle("ada"), 20)
    sent = str(last_user(scene.world.server.requests[-1])["content"])
    assert "2. Which environment first? → no choice picked" in sent


async def test_someone_who_may_not_instruct_the_agent_is_refused(plan_scene: Any) -> None:
    scene = await asked(plan_scene)
    message = scene.plan_message(1)
    [menu] = menus(scene, message)

    result = await scene.bob.select(message, ["0"], custom_id=menu["custom_id"])

    assert refusal(result) == "Only members who may instruct **ada** can answer its questions."
    state = await scene.state()
    assert await PlanAnswerStore(scene.app.db).for_revision(state.plan_id or "", 1) == {}
    assert "✅" not in questions_field(scene.plan_message(1))


async def test_the_menu_works_after_a_restart_and_the_answer_is_still_shown(
    plan_scene: Any,
) -> None:
    scene = await asked(plan_scene)
    [menu] = menus(scene, scene.plan_message(1))
    await scene.ana.select(scene.plan_message(1), ["0"], custom_id=menu["custom_id"])

    await scene.world.restart()

    message = scene.plan_message(1)
    assert "✅ **staging** — ana" in questions_field(message)
    await scene.ana.select(message, ["1"], custom_id=menu["custom_id"])
    assert "✅ **production** — ana" in questions_field(scene.plan_message(1))
    state = await scene.state()
    answers = await PlanAnswerStore(scene.app.db).for_revision(state.plan_id or "", 1)
    assert answers[1].answer == "production"


async def test_a_superseded_revision_s_menu_is_turned_off(plan_scene: Any) -> None:
    scene = await submitted_plan(
        plan_scene, PLAN, tool_turn(ToolCall("submit_plan", {"plan": PLAN_V2})), text_turn("v2.")
    )
    shown = await scene.ana.click(scene.plan_message(1), label="Edit")
    await scene.ana.submit_modal(shown, {"feedback": "add a smoke test"})
    await asyncio.wait_for(scene.app.runtime.wait_idle("ada"), 20)

    assert (await scene.state()).revision == 2
    assert all(m.get("disabled") for m in menus(scene, scene.plan_message(1)))
    assert not any(m.get("disabled") for m in menus(scene, scene.plan_message(2)))


async def test_a_pick_on_a_plan_decided_elsewhere_changes_nothing(plan_scene: Any) -> None:
    """The operator CLI (or another process) approved while this message still offers its
    menus: the pick is checked against the shared state and refused."""
    scene = await asked(plan_scene, text_turn("Going."))
    message = scene.plan_message(1)
    [menu] = menus(scene, message)
    state = await scene.state()
    elsewhere = core_services(scene.app.config, scene.app.db, scene.app.clock).planning
    ref = PlanRef(agent="ada", plan_id=state.plan_id or "", revision=1)
    await elsewhere.approve(ref, Actor.operator())

    result = await scene.ana.select(message, ["0"], custom_id=menu["custom_id"])

    assert refusal(result) == (
        "Plan v1 is no longer waiting for a decision, so its questions are closed."
    )
    assert await PlanAnswerStore(scene.app.db).for_revision(state.plan_id or "", 1) == {}


async def test_malformed_choices_are_refused_to_the_model_and_nothing_is_posted(
    plan_scene: Any,
) -> None:
    bad = {
        **PLAN,
        "questions": [
            {"question": "One way only?", "choices": ["yes"]},
            {"question": "Which?", "choices": ["Staging", "staging"]},
            {"question": "Long?", "choices": ["ok", "x" * 81]},
        ],
    }
    scene = await plan_scene([tool_turn(ToolCall("submit_plan", {"plan": bad})), text_turn("Oh.")])
    await scene.ana.slash(scene.channel, "plan start", task="deploy")
    await asyncio.wait_for(scene.app.runtime.wait_idle("ada"), 20)

    [result] = [
        b
        for b in last_user(scene.world.server.requests[-1])["content"]
        if b.get("type") == "tool_result"
    ]
    assert result["is_error"] is True
    text = str(result["content"])
    assert "questions[0].choices: give 2 to 25 choices" in text
    assert "questions[1].choices: the choices must differ" in text
    assert (await scene.state()).phase is Phase.GATHERING
    assert scene.plan_messages() == []
