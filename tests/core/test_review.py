"""The plan review as values: the reviewer's answer checked, the review rendered and defused."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from plancord.core.ports import ModelUsage
from plancord.core.review import (
    MAX_FINDING_CHARS,
    MAX_FINDINGS,
    ZERO_WIDTH_SPACE,
    Finding,
    PlanReview,
    ReviewAnswerInvalid,
    Severity,
    defuse,
    neutralise,
    one_line,
)
from plancord.core.review_answer import parse_review_answer

BLOCKER = Finding(severity=Severity.BLOCKER, step=2, text="Step 2 drops the users table.")
CONCERN = Finding(severity=Severity.CONCERN, step=3, text="No test covers the new parser.")
NOTE = Finding(severity=Severity.INFO, step=None, text="The summary could name the module.")


def answer(*findings: dict[str, object], resolved: list[object] | None = None) -> dict[str, object]:
    return {"findings": list(findings), "resolved": resolved or []}


def test_a_well_formed_answer_becomes_findings() -> None:
    kept = parse_review_answer(
        answer(
            {"severity": "blocker", "step": 2, "text": "  Step 2 drops\nthe users table. "},
            {"severity": "info", "step": None, "text": "The summary could name the module."},
        ),
        steps=3,
    )
    assert kept.findings == (BLOCKER, NOTE)
    assert kept.resolved == () and kept.dropped == () and kept.dropped_blockers == 0


def test_resolved_numbers_pick_the_previous_reviews_findings() -> None:
    previous = PlanReview(model="m", findings=(CONCERN, BLOCKER)).ordered()
    kept = parse_review_answer(answer(resolved=[1, 1, 2]), steps=3, previous=previous)
    assert kept.resolved == (BLOCKER, CONCERN)


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        (None, "must be an object"),
        ("findings", "must be an object"),
        ({"findings": "none"}, "findings: must be a list"),
    ],
)
def test_an_answer_without_a_findings_list_is_a_clear_error(data: object, problem: str) -> None:
    with pytest.raises(ReviewAnswerInvalid) as caught:
        parse_review_answer(data, steps=3)
    assert problem in str(caught.value)


VALID = {"severity": "blocker", "step": 2, "text": "Step 2 drops the users table."}


@pytest.mark.parametrize(
    ("bad", "named"),
    [
        ({"severity": "fatal", "step": 1, "text": "x"}, "severity must be info"),
        ({"severity": "concern", "step": 9, "text": "x"}, "the plan has no step 9"),
        ({"severity": "concern", "step": 0, "text": "x"}, "the plan has no step 0"),
        ({"severity": "concern", "step": True, "text": "x"}, "step must be a step"),
        ({"severity": "concern", "step": "2", "text": "x"}, "step must be a step"),
        ({"severity": "concern", "step": 1, "text": " \n "}, "text must be a sentence"),
        ({"severity": "concern", "step": 1, "text": 3}, "text must be a sentence"),
        ({"severity": "concern", "step": 1, "text": "x", "url": 1}, "unknown field"),
        ("not a finding", "not an object"),
    ],
)
def test_an_invalid_finding_is_dropped_and_named_and_the_valid_ones_kept(
    bad: object, named: str
) -> None:
    kept = parse_review_answer(answer(VALID, bad, VALID), steps=3)  # type: ignore[arg-type]
    assert kept.findings == (BLOCKER, BLOCKER)
    [dropped] = kept.dropped
    assert dropped.startswith("finding 2") and named in dropped
    assert kept.dropped_blockers == 0


def test_a_dropped_blocker_still_counts_as_a_blocker() -> None:
    bad = {"severity": "blocker", "step": 7, "text": "Step 7 deletes production."}
    kept = parse_review_answer(answer(bad), steps=3)
    assert kept.findings == () and kept.dropped_blockers == 1
    review = PlanReview(model="m", dropped=kept.dropped, dropped_blockers=1)
    assert review.blockers == 1 and review.acknowledgement() == "Approve despite 1 blocker"
    assert "(a blocker)" in kept.dropped[0]


def test_a_long_finding_is_cut_not_dropped() -> None:
    long = {"severity": "blocker", "step": 1, "text": "x" * (MAX_FINDING_CHARS + 50)}
    [finding] = parse_review_answer(answer(long), steps=3).findings
    assert finding.severity is Severity.BLOCKER and len(finding.text) == MAX_FINDING_CHARS


def test_past_the_limit_the_least_severe_are_dropped_and_counted() -> None:
    notes = [{"severity": "info", "step": None, "text": "x"}] * MAX_FINDINGS
    kept = parse_review_answer(answer(*notes, VALID), steps=3)
    assert len(kept.findings) == MAX_FINDINGS and kept.findings[0] == BLOCKER
    assert kept.dropped == (f"1 findings past the {MAX_FINDINGS} kept (the least severe)",)


@pytest.mark.parametrize(
    ("data", "named"),
    [
        ({"findings": [], "verdict": "approve"}, "unknown field(s) ignored: verdict"),
        (answer(resolved=[1]), "no earlier finding 1 (there was no earlier review)"),
        (answer(resolved=["1"]), "not a finding number"),
        ({"findings": [], "resolved": 1}, "resolved: not a list"),
    ],
)
def test_the_rest_of_an_answer_is_dropped_by_part(data: object, named: str) -> None:
    kept = parse_review_answer(data, steps=3)
    assert kept.findings == () and kept.resolved == ()
    assert any(named in d for d in kept.dropped), kept.dropped


@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(),
        lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner),
        max_leaves=30,
    )
)
def test_no_answer_crashes_the_parse(data: object) -> None:
    try:
        parse_review_answer({"findings": [data], "resolved": [data]}, steps=5)
        parse_review_answer(data, steps=5)
    except ReviewAnswerInvalid:
        pass


def test_a_review_with_dropped_parts_says_so_on_the_card_and_in_the_file() -> None:
    review = PlanReview(
        model="m", findings=(CONCERN,), dropped=("finding 2: the plan has no step 9",)
    )
    assert review.summary_line() == "Review: 1 concern · 1 invalid part dropped"
    assert "⚠️ Dropped as invalid: finding 2: the plan has no step 9" in review.findings_field()
    assert "### Dropped as invalid" in review.to_markdown(1)
    assert PlanReview.from_data(review.to_data()) == review


def test_the_summary_line_counts_by_severity() -> None:
    assert PlanReview(model="m", findings=(BLOCKER, CONCERN, CONCERN)).summary_line() == (
        "Review: 1 blocker, 2 concerns"
    )
    assert PlanReview(model="m").summary_line() == "Review: no findings"
    assert PlanReview(model="m", findings=(NOTE,)).summary_line() == "Review: 1 info"
    assert PlanReview.unavailable("timeout", model="m").summary_line() == "Review unavailable"
    resolved = PlanReview(model="m", resolved=(BLOCKER,))
    assert resolved.summary_line() == "Review: no findings · 1 earlier finding resolved"


def test_blockers_ask_for_an_acknowledgement() -> None:
    assert PlanReview(model="m", findings=(BLOCKER, CONCERN)).acknowledgement() == (
        "Approve despite 1 blocker"
    )
    assert PlanReview(model="m", findings=(CONCERN,)).acknowledgement() is None
    assert PlanReview.unavailable("down", model="m").acknowledgement() is None


def test_the_field_lists_blockers_first_and_links_steps() -> None:
    review = PlanReview(model="m", findings=(NOTE, CONCERN, BLOCKER))
    text = review.findings_field(step_link=lambda n: f"https://discord.com/channels/1/2/3#s{n}")
    lines = text.splitlines()
    assert lines[0].startswith("> ⛔ **[Step 2](https://discord.com/channels/1/2/3#s2)**")
    assert lines[1].startswith("> 🟠 **[Step 3]")
    assert lines[2].startswith("> 🔵 **Plan**")


def test_the_field_fits_its_budget_and_counts_the_rest() -> None:
    findings = tuple(
        Finding(severity=Severity.CONCERN, step=1, text="y" * MAX_FINDING_CHARS)
        for _ in range(MAX_FINDINGS)
    )
    text = PlanReview(model="m", findings=findings).findings_field(1024)
    assert len(text) <= 1024
    assert text.endswith("more in the attached review")


def test_an_unavailable_review_says_why_in_the_field_and_the_file() -> None:
    review = PlanReview.unavailable("the reviewer did not answer within 5 seconds", model="m")
    assert review.findings_field() == "> the reviewer did not answer within 5 seconds"
    assert "Review unavailable: the reviewer did not answer" in review.to_markdown(2)


def test_the_markdown_holds_every_finding_and_what_was_resolved() -> None:
    review = PlanReview(model="m", findings=(CONCERN, BLOCKER), resolved=(NOTE,))
    text = review.to_markdown(3)
    assert text.startswith("## Review of v3\n")
    assert text.index("drops the users table") < text.index("No test covers")
    assert "### Resolved since v2" in text
    assert "> ✅ **info** · Plan: The summary could name the module." in text


def test_findings_become_numbered_feedback_in_the_order_shown() -> None:
    review = PlanReview(model="m", findings=(NOTE, BLOCKER))
    text = review.as_feedback(2)
    assert text.splitlines() == [
        "The reviewer's findings on v2; address each one or say why not:",
        "1. [blocker] Step 2: Step 2 drops the users table.",
        "2. [info] Plan: The summary could name the module.",
    ]
    assert len(review.as_feedback(2, max_chars=80)) <= 80


def test_a_finding_that_mentions_everyone_pings_no_one() -> None:
    evil = Finding(
        severity=Severity.BLOCKER, step=1, text="@everyone <@123456789012345678> <@&42> @here"
    )
    review = PlanReview(model="m", findings=(evil,))
    for text in (review.findings_field(), review.to_markdown(1), review.as_feedback(1)):
        assert "@everyone" not in text
        assert "@here" not in text
        assert not re.search(r"<@[!&]?\d", text)


def test_a_finding_cannot_leave_its_quote() -> None:
    text = "fine\n\n# Approved by admin\n> ok\n```\n||spoiler|| [click](https://evil.example)"
    evil = Finding(severity=Severity.CONCERN, step=None, text=one_line(text))
    for rendered in (PlanReview(model="m", findings=(evil,)).findings_field(),):
        assert rendered.count("\n") == 0
        assert "```" not in rendered
        assert "[click](" not in rendered


# --- the renderer, for any text ------------------------------------------------------------

_ESCAPE = re.compile(r"\\(.)")


def _shown(neutralised: str) -> str:
    """What Discord displays: backslash escapes resolved, the zero-width spaces invisible."""
    return _ESCAPE.sub(r"\1", neutralised).replace(ZERO_WIDTH_SPACE, "")


@given(st.text())
def test_neutralise_shows_the_text_as_written_on_one_line(text: str) -> None:
    result = neutralise(text)
    assert "\n" not in result and "\r" not in result
    assert _shown(result) == one_line(text)


@given(st.text(alphabet=st.sampled_from(list("@everyonhr<>&!#0123456789 *_~`|[]()\\:\n"))))
def test_neutralise_leaves_no_mention_and_no_markup(text: str) -> None:
    result = neutralise(text)
    assert "@everyone" not in result and "@here" not in result
    assert not re.search(r"@[^\u200b]", result)
    unescaped = re.sub(r"\\.", "", result)
    assert not set(unescaped) & set("*_~`|<>[]#\\")


@given(st.lists(st.text(min_size=1, max_size=MAX_FINDING_CHARS), min_size=1, max_size=MAX_FINDINGS))
def test_every_rendering_of_any_findings_stays_within_its_quotes(texts: list[str]) -> None:
    findings = tuple(
        Finding(severity=Severity.CONCERN, step=1, text=one_line(t) or "x") for t in texts
    )
    review = PlanReview(model="m", findings=findings, usage=ModelUsage(1, 1))
    field = review.findings_field(1024)
    assert len(field) <= 1024
    for line in field.splitlines():
        assert line.startswith("> ") or line.startswith("… ")
    body = review.to_markdown(2).split("\n\n", 2)[2]
    for line in body.splitlines():
        assert line == "" or line.startswith("> ")
    assert "@everyone" not in review.as_feedback(1)


def test_defuse_only_touches_mentions() -> None:
    assert defuse("a\tb **c** @x") == f"a b **c** @{ZERO_WIDTH_SPACE}x"


def test_a_review_survives_the_store() -> None:
    review = PlanReview(
        model="m", usage=ModelUsage(10, 5, 2, 1), findings=(BLOCKER, NOTE), resolved=(CONCERN,)
    )
    assert PlanReview.from_data(review.to_data()) == review
    down = PlanReview.unavailable("outage", model="m", usage=ModelUsage(1, 0))
    assert PlanReview.from_data(down.to_data()) == down
    with pytest.raises(ValueError, match="not a stored plan review"):
        PlanReview.from_data({"findings": []})
    with pytest.raises(ValueError, match="not a stored plan review"):
        PlanReview.from_data({"model": "m", "usage": {"bogus": 1}})


def test_a_finding_is_always_one_clean_line() -> None:
    finding = Finding(severity=Severity.INFO, step=None, text="two\nlines\u202e\u200b here")
    assert finding.text == "two lines here"
