"""Questions with choices: a tap answers, a select menu past five, "Other…" opens a form,
members who may not instruct the agent are refused, a restart expires the controls, a
second tap acts once, and malformed choices are refused to the model before anything posts."""

from __future__ import annotations

from typing import Any

import discord

from tests.discord_bot.agent_scene import Scene, SceneFactory
from tests.discord_bot.asks.asking import buttons, pending, tool_results
from tests.discord_bot.plan_card.answering import refusal
from tests.fakes.anthropic_server import ToolCall, text_turn, tool_turn

QUESTION = "Which branch should I deploy?"
FEW = ["main", "staging", "release"]
MANY = [f"release-{n}" for n in range(1, 8)]


def asks(choices: list[str]) -> list[Any]:
    return [
        tool_turn(ToolCall("ask_user", {"question": QUESTION, "choices": choices})),
        text_turn("Thanks."),
    ]


async def asking(
    scene_factory: SceneFactory, choices: list[str], **plan_mode: Any
) -> tuple[Scene, Any, discord.Message]:
    scene = await scene_factory(asks(choices), plan_mode=plan_mode or None)
    channel = await scene.create_agent("ada")
    await scene.ana.send(channel, "deploy it")
    question = channel.last_message
    assert QUESTION in question.content
    return scene, channel, question


async def test_a_tap_on_a_choice_answers_with_who_and_when(scene_factory: SceneFactory) -> None:
    scene, channel, question = await asking(scene_factory, FEW)
    shown = buttons(scene, question)
    assert [b["label"] for b in shown] == [*FEW, "Other…"]
    [row] = await pending(scene)
    assert shown[1]["custom_id"] == f"ask:choice:{row['id']}:1"
    assert "Tap a choice" in question.content

    tapped = await scene.ana.click(question, label="staging")

    assert not tapped.ephemeral
    [result] = tool_results(scene, 1)
    assert result["content"] == (
        "The user answered: staging\n(picked from your choices by ana at 2026-01-01 00:00 UTC)"
    )
    stored = scene.stored(question)
    assert f"<@{scene.ana.id}> chose **staging**" in stored.content
    after = buttons(scene, question)
    assert all(b.get("disabled") for b in after)
    assert [b["style"] for b in after] == [1, 3, 1, 2]  # the chosen one shows green
    assert scene.bot_texts(channel)[-1] == "Thanks."
    assert await pending(scene) == []


async def test_past_five_choices_are_a_select_menu(scene_factory: SceneFactory) -> None:
    scene, _, question = await asking(scene_factory, MANY)
    [menu] = [c for c in buttons(scene, question) if c["type"] == 3]
    assert [o["label"] for o in menu["options"]] == MANY

    await scene.ana.select(question, ["4"])

    [result] = tool_results(scene, 1)
    assert result["content"].startswith("The user answered: release-5\n(picked from")
    [menu] = [c for c in buttons(scene, question) if c["type"] == 3]
    assert menu.get("disabled")
    assert [o.get("default", False) for o in menu["options"]] == [n == 4 for n in range(len(MANY))]


async def test_other_opens_a_form_for_an_answer_in_their_own_words(
    scene_factory: SceneFactory,
) -> None:
    scene, _, question = await asking(scene_factory, FEW)

    shown = await scene.ana.click(question, label="Other…")

    assert shown.modal is not None
    assert await pending(scene) != []
    await scene.ana.submit_modal(shown, {"answer": "  a hotfix branch, please  "})

    [result] = tool_results(scene, 1)
    assert result["content"].startswith(
        "The user answered: a hotfix branch, please\n(answered by ana at"
    )
    stored = scene.stored(question)
    assert "answered “a hotfix branch, please”" in stored.content
    assert all(b.get("disabled") for b in buttons(scene, question))


async def test_a_member_who_may_not_instruct_the_agent_cannot_answer(
    scene_factory: SceneFactory,
) -> None:
    scene, _, question = await asking(scene_factory, FEW)

    refused = await scene.bob.click(question, label="main")
    form = await scene.bob.click(question, label="Other…")
    assert form.modal is not None  # a form opens before anything is read
    typed = await scene.bob.submit_modal(form, {"answer": "use main"})

    assert "may instruct **ada**" in refusal(refused)
    assert "may instruct **ada**" in refusal(typed)
    assert len(scene.server.requests) == 1  # the agent still waits
    assert not any(b.get("disabled") for b in buttons(scene, question))
    await scene.ana.click(question, label="main")
    [result] = tool_results(scene, 1)
    assert result["content"].startswith("The user answered: main\n")


async def test_anyone_in_the_access_list_may_tap(scene_factory: SceneFactory) -> None:
    scene, _, question = await asking(scene_factory, FEW)
    record = await scene.app.store.get_agent("ada")
    await scene.app.store.update_agent(
        record.model_copy(
            update={"plan_mode_overrides": {"access": {"users": [str(scene.bob.id)]}}}
        )
    )

    await scene.bob.click(question, label="release")

    [result] = tool_results(scene, 1)
    assert "(picked from your choices by bob at" in result["content"]


async def test_a_second_tap_acts_once(scene_factory: SceneFactory) -> None:
    scene, _, question = await asking(scene_factory, FEW)
    # The click's edit and the card's own edit refused: the card stays open (its marking is
    # owed, and tried again later).
    scene.env.inject_error("PATCH", "/webhooks/*/*/messages/@original")
    scene.env.inject_error("PATCH", f"/channels/*/messages/{question.id}")

    await scene.ana.click(question, label="main")
    again = await scene.ana.click(question, label="staging")

    assert again.ephemeral
    assert again.response.content.startswith("This question was already settled: ana chose main")
    [result] = tool_results(scene, 1)
    assert result["content"].startswith("The user answered: main\n")


async def test_after_a_restart_the_choices_expire(scene_factory: SceneFactory) -> None:
    scene, _, question = await asking(scene_factory, FEW)

    await scene.world.restart()

    stored = scene.stored(question)
    assert "This question expired" in stored.content
    assert QUESTION in stored.content
    assert all(b.get("disabled") for b in buttons(scene, question))
    assert await pending(scene) == []


async def test_a_tap_on_a_question_from_before_a_restart_is_refused(
    scene_factory: SceneFactory,
) -> None:
    scene, channel, question = await asking(scene_factory, FEW)
    scene.env.inject_error("PATCH", f"/channels/{channel.id}/messages/*")
    await scene.world.restart()

    late = await scene.ana.click(question, label="main")

    assert late.ephemeral and late.response.content.startswith("This question expired")
    assert len(scene.server.requests) == 1


async def test_an_unanswered_question_with_choices_times_out(scene_factory: SceneFactory) -> None:
    scene, _, question = await asking(scene_factory, FEW)

    await scene.env.advance_time(601)

    [result] = tool_results(scene, 1)
    assert result["content"].startswith("no answer")
    assert all(b.get("disabled") for b in buttons(scene, question))
    assert "No answer within 10 minutes" in scene.stored(question).content


async def test_malformed_choices_are_refused_before_anything_posts(
    scene_factory: SceneFactory,
) -> None:
    bad = [
        ["only one"],
        ["same", "SAME"],
        ["ok", "x" * 81],
        ["ok", "   "],
        [str(n) for n in range(26)],
    ]
    script = [tool_turn(ToolCall("ask_user", {"question": QUESTION, "choices": c})) for c in bad]
    scene = await scene_factory([*script, text_turn("I'll decide myself.")])
    channel = await scene.create_agent("ada")

    await scene.ana.send(channel, "deploy it")

    errors = [tool_results(scene, n)[0] for n in range(1, len(bad) + 1)]
    assert all(e["is_error"] for e in errors)
    assert "2 to 25 choices" in errors[0]["content"]
    assert "must differ" in errors[1]["content"]
    assert "at most 80 characters" in errors[2]["content"]
    assert "blank" in errors[3]["content"]
    assert "2 to 25 choices" in errors[4]["content"]
    assert not any(t.startswith("❓") for t in scene.bot_texts(channel))
    assert await pending(scene) == []
