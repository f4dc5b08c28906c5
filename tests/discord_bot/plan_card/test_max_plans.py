"""Plans as large as a plan may be (fifty steps of a thousand characters naming twenty files
each, twenty questions of five hundred characters offering twenty-five choices each, the
longest summary and notes) post their plan card, measured as Discord counts it, through the
real bot; every question stays answerable from the card."""

from __future__ import annotations

from typing import Any

from plancord.core.choices import MAX_CHOICE_CHARS, MAX_CHOICES
from plancord.core.plan import (
    MAX_CONTEXT_NOTES_CHARS,
    MAX_DESCRIPTION_CHARS,
    MAX_FILE_PATTERN_CHARS,
    MAX_FILES_PER_STEP,
    MAX_QUESTION_CHARS,
    MAX_QUESTIONS,
    MAX_STEPS,
    MAX_SUMMARY_CHARS,
)
from plancord.discord_bot.shared.embed_basics import embeds_size
from plancord.discord_bot.shared.message_fit import misfits
from tests.discord_bot.plan_card.answering import menus, questions_field
from tests.discord_bot.plans import assert_within_limits, submitted_plan
from tests.fakes.anthropic_server import text_turn
from tests.world import PlanScene, buttons

LARGE = {"max_plan_bytes": 1_048_576}


def _text(head: str, length: int) -> str:
    return (head + " " + "lorem ipsum dolor sit amet " * 200)[: length - 1].rstrip() + "."


def _choices(question: int) -> list[str]:
    return [_text(f"q{question} choice {c}", MAX_CHOICE_CHARS) for c in range(MAX_CHOICES)]


def largest_plan(questions_with_choices: int = MAX_QUESTIONS) -> dict[str, Any]:
    steps = [
        {
            "description": _text(f"Step {i}: 🛠️ rework module_{i}", MAX_DESCRIPTION_CHARS),
            "tools": ["create_file", "str_replace"],
            "files": [
                (f"src/module_{i}/part_{f}/" + "d" * MAX_FILE_PATTERN_CHARS)[
                    : MAX_FILE_PATTERN_CHARS - 3
                ]
                + ".py"
                for f in range(MAX_FILES_PER_STEP)
            ],
            "risk": ["low", "medium", "high"][i % 3],
        }
        for i in range(1, MAX_STEPS + 1)
    ]
    questions: list[Any] = [
        {"question": _text(f"Question {q}?", MAX_QUESTION_CHARS), "choices": _choices(q)}
        if q < questions_with_choices
        else _text(f"Question {q}?", MAX_QUESTION_CHARS)
        for q in range(MAX_QUESTIONS)
    ]
    return {
        "summary": _text("The largest plan", MAX_SUMMARY_CHARS),
        "steps": steps,
        "questions": questions,
        "context_notes": _text("Notes", MAX_CONTEXT_NOTES_CHARS),
    }


def _stored(scene: PlanScene, message: Any) -> Any:
    return scene.env.backend.messages[message.channel.id][message.id]


async def test_the_largest_plan_posts_its_card_within_every_limit(plan_scene: Any) -> None:
    scene = await submitted_plan(
        plan_scene, largest_plan(), text_turn("Submitted."), plan_mode=LARGE
    )

    message = scene.plan_message(1)
    assert_within_limits(message.embeds)
    assert embeds_size(message.embeds) <= 6000
    assert "summary card could not be shown" not in message.content
    assert [a.filename for a in message.attachments] == ["plan-v1.md"]
    assert "The whole plan is attached" in (message.embeds[0].description or "")
    rows = _stored(scene, message).components
    assert len(rows) == 5
    assert len(menus(scene, message)) == 3
    assert buttons(message)["Answer 17 more questions…"] is True
    assert not misfits(embeds=message.embeds)


async def test_every_question_past_the_card_s_menus_is_answered_privately(
    plan_scene: Any,
) -> None:
    scene = await submitted_plan(
        plan_scene, largest_plan(), text_turn("Submitted."), plan_mode=LARGE
    )
    message = scene.plan_message(1)

    more = await scene.ana.click(message, label="Answer 17 more questions…")

    private = [more.response, *more.followups]  # the first replaces the deferral
    assert [len(_components(scene, m)) for m in private] == [5, 5, 5, 2]
    assert all(m.ephemeral for m in private)
    assert "**Q4.** Question 3?" in str(private[0].content)
    last = private[-1]
    [_, menu] = _components(scene, last)
    assert menu["placeholder"].startswith("Q20: Question 19?")
    await scene.ana.select(last, ["24"], custom_id=menu["custom_id"])

    answers = await scene.app.plan_answers.for_revision((await scene.state()).plan_id or "", 1)
    assert answers[19].answer.startswith("q19 choice 24")


def _components(scene: PlanScene, message: Any) -> list[dict[str, Any]]:
    return [c for row in message.components for c in row["components"]]


async def test_four_questions_with_choices_get_three_menus_and_the_button(
    plan_scene: Any,
) -> None:
    plan = {
        "summary": "Ask four things",
        "steps": [{"description": "Write it", "tools": ["create_file"]}],
        "questions": [{"question": f"Q {n}?", "choices": ["yes", "no"]} for n in range(4)],
    }
    scene = await submitted_plan(plan_scene, plan, text_turn("Submitted."))

    message = scene.plan_message(1)
    assert len(menus(scene, message)) == 3
    assert buttons(message)["Answer 1 more question…"] is True
    assert "4. Q 3?\n   ▸ yes · no (menu under “Answer … more questions”)" in questions_field(
        message
    )
