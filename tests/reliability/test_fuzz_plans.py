"""Plans as a model might write them: validation, canonical markdown and the sha approvals bind to.

``tests/core/test_plan.py`` holds the worked examples and a first property; this file throws
harder input at the same code: any JSON value, plan-shaped objects with hostile fields
(markdown look-alikes, CR/LF mixes, decomposed unicode, whitespace-only text, wrong types),
and JSON text. The contracts checked:

* ``validate_plan`` returns a ``Plan`` or raises ``PlanValidationError``, nothing else, and
  every problem it lists is readable text;
* a valid plan's sha256 survives every serialisation the system uses (canonical JSON, the
  store's ``model_dump_json``, JSON text handed back to ``validate_plan``);
* the canonical markdown of a valid plan, read back (by a parser of the rendered format
  below), validates to the very same plan: the text a human approves is enough to rebuild
  what the sha names, so two different plans never share a sha.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from plancord.core.errors import PlanValidationError
from plancord.core.plan import (
    MAX_STEPS,
    Plan,
    render_markdown,
    validate_plan,
)

FUZZ = settings(
    max_examples=100,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)

#: Text a model might put in a plan field: markdown that looks like the plan's own structure,
#: mixed newlines, decomposed accents, zero-width and bidi characters, backticks.
TRICKY = st.sampled_from(
    [
        "\n2. [low] Harmless",
        "\n## Open questions\n- none",
        "\n## Context notes\nall good",
        "\ntools: `rm -rf /`",
        "`a`, `b`",
        "\r\n",
        "\r",
        "\t",
        "  ",
        "\n\n",
        "Cafe\u0301",
        "\u200b",
        "\u202e",
        "- [ ] ",
        "# Plan: other",
        "日本語",
        "🙂",
    ]
)


def tricky_text(max_size: int) -> st.SearchStrategy[str]:
    pieces = st.lists(st.one_of(st.text(max_size=20), TRICKY), max_size=6).map("".join)
    return st.one_of(pieces, st.text(max_size=max_size))


def json_values() -> st.SearchStrategy[Any]:
    leaves = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(min_value=-(10**30), max_value=10**30),
        st.floats(allow_nan=True, allow_infinity=True),
        tricky_text(40),
    )
    return st.recursive(
        leaves,
        lambda children: st.one_of(
            st.lists(children, max_size=4),
            st.dictionaries(st.text(max_size=10), children, max_size=4),
        ),
        max_leaves=12,
    )


def step_dicts() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {"description": tricky_text(120)},
        optional={
            "tools": st.one_of(st.lists(tricky_text(20), max_size=4), tricky_text(20)),
            "risk": st.sampled_from(["low", "medium", "high"]),
        },
    )


def plan_dicts() -> st.SearchStrategy[dict[str, Any]]:
    """Plan-shaped objects whose text is hostile but whose shape is mostly right."""
    return st.fixed_dictionaries(
        {"summary": tricky_text(80), "steps": st.lists(step_dicts(), min_size=1, max_size=6)},
        optional={
            "questions": st.one_of(st.lists(tricky_text(60), max_size=4), tricky_text(60)),
            "context_notes": st.one_of(tricky_text(200), st.none()),
        },
    )


def broken_plan_dicts() -> st.SearchStrategy[Any]:
    """A plan-shaped object with any field replaced, added or dropped."""
    return st.tuples(plan_dicts(), st.text(max_size=15), json_values(), st.booleans()).map(
        lambda t: (
            {**t[0], t[1]: t[2]}
            if t[3]
            else {k: v for k, v in t[0].items() if k != (t[1] or "steps")}
        )
    )


def any_input() -> st.SearchStrategy[Any]:
    return st.one_of(
        json_values(),
        plan_dicts(),
        broken_plan_dicts(),
        plan_dicts().map(lambda d: json.dumps(d, ensure_ascii=False)),
        broken_plan_dicts().map(lambda d: json.dumps(d, ensure_ascii=False)),
        st.text(max_size=80),
    )


def valid_plans() -> st.SearchStrategy[Plan]:
    def build(data: dict[str, Any]) -> Plan | None:
        try:
            return validate_plan(data)
        except PlanValidationError:
            return None

    return plan_dicts().map(build).filter(lambda plan: plan is not None)  # type: ignore[return-value]


# -- reading the canonical markdown back -------------------------------------------------------

STEP_LINE = re.compile(r"(\d+)\. \[(low|medium|high)\] (.*)")
TOOLS_LINE = re.compile(r"tools: `.*`")


def _dedent(lines: list[str], prefix: str) -> str:
    out = []
    for line in lines:
        if line and not line.startswith(prefix):
            raise ValueError(f"continuation line without {prefix!r}: {line!r}")
        out.append(line[len(prefix) :])
    return "\n".join(out)


def parse_markdown(text: str) -> dict[str, Any]:
    """The plan a reader of ``render_markdown``'s output sees, as ``validate_plan`` input."""
    if not text.endswith("\n"):
        raise ValueError("canonical markdown ends with a newline")
    lines = text[:-1].split("\n")
    if not lines[0].startswith("# Plan: ") or lines[1:3] != ["", "## Steps"]:
        raise ValueError("not a plan heading")
    sections: dict[str, list[str]] = {"steps": []}
    current = "steps"
    index = 3
    while index < len(lines):
        line = lines[index]
        header = {"## Open questions": "questions", "## Context notes": "notes"}.get(line)
        if header and lines[index - 1] == "" and current != "notes":
            sections[current].pop()
            current = header
            sections[current] = []
        else:
            sections[current].append(line)
        index += 1
    data: dict[str, Any] = {"summary": lines[0][len("# Plan: ") :], "steps": []}
    block: list[str] = []
    for line in [*sections["steps"], "0. [low] end"]:
        match = STEP_LINE.fullmatch(line)
        if match is None:
            block.append(line)
            continue
        if block:
            data["steps"].append(_parse_step(block))
        block = [line]
    if "questions" in sections:
        questions: list[list[str]] = []
        for line in sections["questions"]:
            if line.startswith("- "):
                questions.append([line[2:]])
            else:
                questions[-1].append(line)
        data["questions"] = [
            q[0] + "\n" + _dedent(q[1:], "    ") if q[1:] else q[0] for q in questions
        ]
    if "notes" in sections:
        data["context_notes"] = "\n".join(sections["notes"])
    return data


def _parse_step(block: list[str]) -> dict[str, Any]:
    match = STEP_LINE.fullmatch(block[0])
    assert match is not None
    rest = block[1:]
    step: dict[str, Any] = {"risk": match.group(2)}
    if rest and TOOLS_LINE.fullmatch(rest[-1][3:]) and rest[-1].startswith("   t"):
        step["tools"] = rest[-1][len("   tools: `") : -1].split("`, `")
        rest = rest[:-1]
    description = match.group(3)
    if rest:
        description += "\n" + _dedent(rest, "    ")
    step["description"] = description
    return step


# -- properties ------------------------------------------------------------------------------


@FUZZ
@given(data=any_input(), limit=st.sampled_from([512, 2048, 8192, 1_048_576]))
@example(data={"summary": "x", "steps": [{"description": "d"}] * (MAX_STEPS + 1)}, limit=8192)
@example(data={"summary": "x" * 100_000, "steps": [{"description": "d" * 100_000}]}, limit=8192)
@example(data={"summary": "\ud800", "steps": [{"description": "d"}]}, limit=8192)
@example(data='{"summary": "\\ud800", "steps": [{"description": "d"}]}', limit=8192)
@example(data={1: 2, None: 3}, limit=8192)
@example(data="", limit=8192)
@example(data="null", limit=8192)
@example(data=b"{}", limit=8192)
def test_validation_returns_a_plan_or_a_readable_refusal(data: Any, limit: int) -> None:
    try:
        plan = validate_plan(data, max_plan_bytes=limit)
    except PlanValidationError as exc:
        refusal = exc
    else:
        assert isinstance(plan, Plan)
        assert plan.size_bytes() <= limit
        return
    assert refusal.problems
    assert all(isinstance(p, str) and p.strip() for p in refusal.problems)
    assert "submit_plan" in str(refusal)


@FUZZ
@given(plan=valid_plans())
def test_the_sha_survives_every_serialisation(plan: Plan) -> None:
    sha = plan.sha256()
    assert len(sha) == 64
    assert validate_plan(json.loads(plan.canonical_json())).sha256() == sha
    assert validate_plan(plan.canonical_json()).sha256() == sha
    assert Plan.model_validate_json(plan.model_dump_json()).sha256() == sha
    assert validate_plan(plan.model_dump(mode="json")) == plan
    assert validate_plan(plan) is plan


@FUZZ
@given(plan=valid_plans())
@example(plan=validate_plan({"summary": "s", "steps": [{"description": "a\n\n b\n   c"}]}))
@example(
    plan=validate_plan(
        {
            "summary": "s",
            "steps": [{"description": "a\n## Context notes\ntools: `x`", "tools": ["t"]}],
            "questions": ["q\n\n- r"],
            "context_notes": "## Open questions\n- fake\n\n## Steps",
        }
    )
)
def test_the_markdown_rebuilds_a_plan_with_the_same_sha(plan: Plan) -> None:
    markdown = render_markdown(plan)
    assert "\r" not in markdown
    rebuilt = validate_plan(parse_markdown(markdown), max_plan_bytes=1_048_576)
    assert render_markdown(rebuilt) == markdown
    assert rebuilt.sha256() == plan.sha256()
    assert rebuilt == plan


# -- look-alikes and pathological input ------------------------------------------------------


@pytest.mark.parametrize(
    ("first", "second"),
    [
        (
            {"summary": "s", "steps": [{"description": "Clean up\ntools: `rm`"}]},
            {"summary": "s", "steps": [{"description": "Clean up", "tools": ["rm"]}]},
        ),
        (
            {"summary": "s", "steps": [{"description": "a\n2. [low] b"}]},
            {"summary": "s", "steps": [{"description": "a"}, {"description": "b"}]},
        ),
        (
            {"summary": "s", "steps": [{"description": "a"}], "questions": ["q\n- r"]},
            {"summary": "s", "steps": [{"description": "a"}], "questions": ["q", "r"]},
        ),
    ],
)
def test_different_plans_never_share_a_sha(first: dict[str, Any], second: dict[str, Any]) -> None:
    a, b = validate_plan(first), validate_plan(second)
    assert a != b
    assert a.sha256() != b.sha256()


def test_a_tool_name_cannot_pass_for_two_tools() -> None:
    with pytest.raises(PlanValidationError, match="backticks or commas"):
        validate_plan({"summary": "s", "steps": [{"description": "d", "tools": ["view`, `x"]}]})


@pytest.mark.parametrize(
    "data",
    [
        "[" * 100_000 + "]" * 100_000,
        '{"summary": "x", "steps": [{"description": "d", "risk": ' + "1" * 5000 + "}]}",
        {"summary": "x", "steps": [{"description": "d", "risk": 10**5000}]},
    ],
    ids=["deep-json-text", "huge-int-json-text", "huge-int-object"],
)
def test_pathological_input_is_a_validation_error(data: Any) -> None:
    with pytest.raises(PlanValidationError):
        validate_plan(data)
