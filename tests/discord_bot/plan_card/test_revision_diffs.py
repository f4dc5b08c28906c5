"""A revised plan opens with what changed: the reviewer sees exactly the changed steps, the
feedback it answers, and the full diff attached; ``/plan diff`` shows it on demand."""

from __future__ import annotations

from typing import Any

from plancord.core.plan import Plan, PlanStep, Risk, validate_plan
from plancord.core.plan_diff import StepChangeKind, diff_plans
from tests.discord_bot.plans import PLAN, submitted
from tests.fakes.anthropic_server import ToolCall, text_turn, tool_turn

PLAN_V2 = {
    **PLAN,
    "steps": [
        {
            "description": "Create greet.py with hello(name)",
            "tools": ["create_file"],
            "risk": "low",
        },
        {"description": "Add a test for hello", "tools": ["create_file"], "risk": "low"},
        {"description": "Commit it", "tools": ["git_commit"], "risk": "high"},
    ],
}


async def test_revision_two_opens_with_exactly_the_changed_steps(plan_scene: Any) -> None:
    scene = await submitted(
        plan_scene, tool_turn(ToolCall("submit_plan", {"plan": PLAN_V2})), text_turn("ok")
    )
    await scene.ana.slash(scene.channel, "plan edit", feedback="take a name, and test it")
    second = scene.plan_message(2)
    description = second.embeds[0].description or ""
    assert description.splitlines()[:5] == [
        "**Changes since v1:** 1 step reworded, 1 step added, 1 step changed",
        "> take a name, and test it",
        "• Step 1 reworded: Create greet.py with ~~hello()~~ **hello(name)**",
        "• Step 2 added: **Add a test for hello**",
        "• Step 2 → 3 risk medium → high",
    ]
    names = [a.filename for a in second.attachments]
    assert "changes-v1-v2.md" in names
    first = scene.plan_message(1)
    assert "Changes since" not in (first.embeds[0].description or "")


async def test_plan_diff_shows_the_changes_privately(plan_scene: Any) -> None:
    scene = await submitted(
        plan_scene, tool_turn(ToolCall("submit_plan", {"plan": PLAN_V2})), text_turn("ok")
    )
    early = await scene.ana.slash(scene.channel, "plan diff")
    assert early.ephemeral
    assert "no plan with two revisions" in early.response.content
    await scene.ana.slash(scene.channel, "plan edit", feedback="take a name")

    shown = await scene.ana.slash(scene.channel, "plan diff", first=1, second=2)

    assert shown.ephemeral
    assert shown.response.content.startswith("**Changes since v1:** 1 step reworded")
    backwards = await scene.ana.slash(scene.channel, "plan diff", first=2, second=1)
    assert "the older first" in backwards.response.content


def _plan(*steps: tuple[str, Risk]) -> Plan:
    return Plan(summary="s", steps=tuple(PlanStep(description=d, risk=r) for d, r in steps))


def test_steps_are_aligned_unchanged_reworded_added_removed() -> None:
    old = _plan(("read the config", Risk.LOW), ("write the parser", Risk.LOW), ("docs", Risk.LOW))
    new = _plan(
        ("read the config", Risk.LOW),
        ("write the parser with tests", Risk.LOW),
        ("add a benchmark", Risk.MEDIUM),
    )
    diff = diff_plans(old, new, 1, 2)
    kinds = [(c.kind, c.old_number, c.new_number) for c in diff.steps]
    assert kinds == [
        (StepChangeKind.CHANGED, 2, 2),
        (StepChangeKind.REMOVED, 3, None),
        (StepChangeKind.ADDED, None, 3),
    ]
    assert diff.unchanged_steps == 1
    assert diff.headline() == "1 step reworded, 1 step removed, 1 step added"


def test_identical_plans_have_no_changes() -> None:
    plan = _plan(("a", Risk.LOW))
    diff = diff_plans(plan, plan, 1, 2)
    assert diff.empty
    assert diff.headline() == "no changes"


def test_new_choices_on_a_question_are_a_change() -> None:
    steps = [{"description": "a"}]
    old = validate_plan({"summary": "s", "steps": steps, "questions": ["Where?"]})
    new = validate_plan(
        {
            "summary": "s",
            "steps": steps,
            "questions": [{"question": "Where?", "choices": ["staging", "production"]}],
        }
    )
    diff = diff_plans(old, new, 1, 2)
    assert diff.questions_removed == ("Where?",)
    assert diff.questions_added == ("Where? [staging / production]",)
    assert diff.headline() == "questions changed"


def test_the_discord_text_fits_its_budget_and_points_at_the_file() -> None:
    old = _plan(*((f"step {i} " + "word " * 30, Risk.LOW) for i in range(40)))
    new = _plan(*((f"step {i} " + "other " * 30, Risk.HIGH) for i in range(40)))
    text = diff_plans(old, new, 3, 4).to_discord(1200)
    assert len(text) <= 1200
    assert text.rstrip().endswith("more in the attached diff")


async def test_the_plan_message_shows_what_planning_cost(plan_scene: Any) -> None:
    prices = {"claude-sonnet-5-5": {"input": 3.0, "output": 15.0}}
    scene = await submitted(plan_scene, config={"anthropic": {"prices": prices}})
    description = scene.plan_message(1).embeds[0].description or ""
    [line] = [x for x in description.splitlines() if x.startswith("💰 Planning so far:")]
    assert "output tokens" in line
    assert "≈ $" in line
    record = await scene.record((await scene.state()).plan_id or "", 1)
    assert record.cost == line
