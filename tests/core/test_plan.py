from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plancord.core.errors import PlanValidationError
from plancord.core.plan import (
    MAX_STEPS,
    Plan,
    plan_sha256,
    render_markdown,
    validate_plan,
)


def plan_data(**overrides: object) -> dict[str, object]:
    data: dict[str, object] = {
        "summary": "Add a health endpoint",
        "steps": [
            {"description": "Read the router", "tools": ["view"], "risk": "low"},
            {"description": "Add /health", "tools": ["str_replace"], "risk": "medium"},
        ],
        "questions": ["Should it report the DB?"],
        "context_notes": "The router lives in app/routes.py",
    }
    data.update(overrides)
    return data


def problems_of(data: object, **kwargs: int) -> list[str]:
    with pytest.raises(PlanValidationError) as info:
        validate_plan(data, **kwargs)
    return info.value.problems


def test_valid_plan_round_trips_through_json() -> None:
    plan = validate_plan(plan_data())
    assert validate_plan(json.loads(plan.canonical_json())) == plan
    assert validate_plan(plan.canonical_json()) == plan


def test_markdown_is_canonical_and_hash_covers_it() -> None:
    plan = validate_plan(plan_data())
    text = render_markdown(plan)
    assert text.startswith("# Plan: Add a health endpoint\n")
    assert "1. [low] Read the router\n   tools: `view`" in text
    assert "## Open questions\n- Should it report the DB?" in text
    assert plan_sha256(plan) == plan.sha256()
    assert len(plan.sha256()) == 64


def test_whitespace_and_newline_variants_hash_equally() -> None:
    a = validate_plan(plan_data(summary="Add a  health\tendpoint "))
    b = validate_plan(plan_data(summary="Add a health endpoint"))
    assert a.sha256() == b.sha256()
    c = validate_plan(plan_data(context_notes="line one\r\nline two  "))
    d = validate_plan(plan_data(context_notes="line one\nline two"))
    assert c.sha256() == d.sha256()


def test_any_change_changes_the_hash() -> None:
    base = validate_plan(plan_data())
    steps = [dict(s) for s in plan_data()["steps"]]  # type: ignore[attr-defined]
    steps[1]["risk"] = "high"
    assert validate_plan(plan_data(steps=steps)).sha256() != base.sha256()


def test_a_description_cannot_forge_a_tools_line() -> None:
    forged = validate_plan(plan_data(steps=[{"description": "Clean up\ntools: `rm`"}]))
    honest = validate_plan(plan_data(steps=[{"description": "Clean up", "tools": ["rm"]}]))
    assert forged.sha256() != honest.sha256()


def test_a_description_cannot_forge_another_step() -> None:
    forged = validate_plan(
        plan_data(steps=[{"description": "Read\n2. [low] Harmless", "risk": "high"}])
    )
    honest = validate_plan(
        plan_data(
            steps=[
                {"description": "Read", "risk": "high"},
                {"description": "Harmless", "risk": "low"},
            ]
        )
    )
    assert forged.sha256() != honest.sha256()
    assert "\n    2. [low] Harmless" in forged.to_markdown()


def test_unicode_is_kept_and_normalised() -> None:
    composed = validate_plan(plan_data(summary="Caf\u00e9 ✨ 日本語"))
    decomposed = validate_plan(plan_data(summary="Cafe\u0301 ✨ 日本語"))
    assert composed.summary == "Café ✨ 日本語"
    assert composed.sha256() == decomposed.sha256()


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (plan_data(summary=""), "summary: must not be empty"),
        (plan_data(summary="x" * 301), "summary: too long (301 characters, at most 300)"),
        (plan_data(steps=[]), "steps: give at least 1 step"),
        (plan_data(steps=[{"description": "   "}]), "steps[0].description: must not be empty"),
        (plan_data(steps=[{"description": "x" * 1001}]), "steps[0].description: too long"),
        (
            plan_data(steps=[{"description": "a", "risk": "severe"}]),
            "must be one of low, medium, high",
        ),
        (
            plan_data(steps=[{"description": "a"}] * (MAX_STEPS + 1)),
            "steps: too many items (at most 50)",
        ),
        (plan_data(steps="do it"), "steps: must be a list"),
        (plan_data(steps=["do it"]), "steps[0]: must be an object"),
        (plan_data(owner="me"), "owner: unknown field"),
        ({"steps": [{"description": "a"}]}, "summary: this field is required"),
        ([1, 2], "plan: must be an object"),
        ("{not json", "plan: not valid JSON"),
    ],
)
def test_invalid_plans_name_the_field_and_the_fix(data: object, expected: str) -> None:
    problems = problems_of(data)
    assert any(expected in p for p in problems), problems


def test_every_problem_is_reported_at_once() -> None:
    problems = problems_of({"summary": "", "steps": [{"description": "a", "risk": "nope"}]})
    assert len(problems) == 2
    assert "call submit_plan again" in str(PlanValidationError(problems))


def test_size_limit_counts_the_whole_plan() -> None:
    steps = [{"description": "d" * 900, "tools": ["view"]} for _ in range(10)]
    problems = problems_of(plan_data(steps=steps), max_plan_bytes=8192)
    assert "over the limit of 8192" in problems[0]
    assert validate_plan(plan_data(steps=steps), max_plan_bytes=20_000).size_bytes() > 8192


def test_the_size_limit_counts_bytes_not_characters() -> None:
    steps = [{"description": "日" * 400} for _ in range(7)]
    plan = validate_plan(plan_data(steps=steps), max_plan_bytes=100_000)
    assert plan.size_bytes() > 7 * 400 * 3
    assert problems_of(plan_data(steps=steps), max_plan_bytes=8192)


def test_a_single_tool_string_becomes_a_list() -> None:
    plan = validate_plan(plan_data(steps=[{"description": "a", "tools": "view"}]))
    assert plan.steps[0].tools == ("view",)


def test_plans_are_immutable() -> None:
    plan = validate_plan(plan_data())
    with pytest.raises(Exception, match="frozen"):
        plan.summary = "other"  # type: ignore[misc]


step_strategy = st.fixed_dictionaries(
    {
        "description": st.text(min_size=0, max_size=60),
        "tools": st.lists(st.text(max_size=10), max_size=3),
        "risk": st.sampled_from(["low", "medium", "high", "bogus"]),
    }
)


@settings(max_examples=200, deadline=None)
@given(
    summary=st.text(max_size=80),
    steps=st.lists(step_strategy, max_size=6),
    questions=st.lists(st.text(max_size=30), max_size=3),
)
def test_validation_never_crashes_and_valid_plans_are_stable(
    summary: str, steps: list[dict[str, object]], questions: list[str]
) -> None:
    data = {"summary": summary, "steps": steps, "questions": questions}
    try:
        plan = validate_plan(data)
    except PlanValidationError as exc:
        problems = exc.problems
    else:
        problems = []
    if problems:
        assert all(isinstance(p, str) and p for p in problems)
        return
    again = validate_plan(json.loads(plan.canonical_json()))
    assert again.sha256() == plan.sha256()
    assert isinstance(Plan.model_validate_json(plan.model_dump_json()), Plan)


# -- questions with choices ------------------------------------------------------------------

REFERENCE = {
    "summary": "Add a health endpoint",
    "steps": [
        {"description": "Read the router", "tools": ["view"]},
        {"description": "Add /health", "risk": "medium", "files": ["app/*.py"]},
    ],
    "questions": ["Which port?", "Auth too?\nOr later?"],
    "context_notes": "Router in app/routes.py",
}
# What the release before questions could carry choices computed for REFERENCE: plans that
# offer no choices must keep their text, their JSON and so their sha (approvals bind to it).
REFERENCE_SHA = "4a3a57c6bfde9f2cad7b4f2812b2cb45182d64c617e7d577f4c4dd43b650b0fc"
REFERENCE_JSON = (
    '{"summary":"Add a health endpoint","steps":[{"description":"Read the router","tools":'
    '["view"],"risk":"low"},{"description":"Add /health","tools":[],"risk":"medium","files":'
    '["app/*.py"]}],"questions":["Which port?","Auth too?\\nOr later?"],"context_notes":'
    '"Router in app/routes.py"}'
)


def test_a_plan_without_choices_keeps_its_text_json_and_sha() -> None:
    plan = validate_plan(REFERENCE)
    assert plan.sha256() == REFERENCE_SHA
    assert plan.canonical_json() == REFERENCE_JSON
    stored = Plan.model_validate_json(REFERENCE_JSON)
    assert stored == plan and stored.question_choices == ()


def test_a_question_with_choices_is_an_object_and_its_choices_are_in_the_sha() -> None:
    data = {
        **REFERENCE,
        "questions": ["Which port?", {"question": "Auth?", "choices": ["now", "later"]}],
    }
    plan = validate_plan(data)
    assert plan.questions == ("Which port?", "Auth?")
    assert plan.question_choices == ((), ("now", "later"))
    assert plan.choices_for(1) == ("now", "later") and plan.choices_for(0) == ()
    assert "- Auth?\n   choice: `now`\n   choice: `later`\n" in plan.to_markdown()
    other = validate_plan(
        {**data, "questions": ["Which port?", {"question": "Auth?", "choices": ["now", "never"]}]}
    )
    assert other.sha256() != plan.sha256()
    again = Plan.model_validate_json(plan.model_dump_json())
    assert again == plan and again.sha256() == plan.sha256()
    assert validate_plan(json.loads(plan.canonical_json())).sha256() == plan.sha256()


def test_a_question_text_cannot_pass_for_a_choice_line() -> None:
    sneaky = validate_plan({**REFERENCE, "questions": ["Auth?\n   choice: `now`"]})
    honest = validate_plan(
        {**REFERENCE, "questions": [{"question": "Auth?", "choices": ["now", "x"]}]}
    )
    assert "\n    " in sneaky.to_markdown().split("## Open questions")[1]
    assert sneaky.sha256() != honest.sha256()


@pytest.mark.parametrize(
    ("choices", "problem"),
    [
        (["only"], "questions[0].choices: give 2 to 25 choices"),
        (["a", "A"], "questions[0].choices: the choices must differ"),
        (["a", " "], "questions[0].choices: a choice may not be blank"),
        (["a", "b" * 81], "questions[0].choices: each choice must be at most 80"),
        (["`a`", "b"], "questions[0].choices: a choice may not contain backquotes"),
        ("ab", "questions[0].choices: must be a list of text"),
    ],
)
def test_bad_choices_are_explained(choices: object, problem: str) -> None:
    with pytest.raises(PlanValidationError) as info:
        validate_plan({**REFERENCE, "questions": [{"question": "Q?", "choices": choices}]})
    assert any(p.startswith(problem) for p in info.value.problems), info.value.problems


def test_a_question_object_names_only_question_and_choices() -> None:
    with pytest.raises(PlanValidationError, match="a question is text, or an object"):
        validate_plan({**REFERENCE, "questions": [{"question": "Q?", "answer": "x"}]})
