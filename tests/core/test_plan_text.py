"""The plan's file read back: every plan the schema takes reads back to the same plan (and
so the same sha), the review a downloaded file starts with is skipped, and what cannot be
read is named by its line."""

from __future__ import annotations

import pytest

from plancord.core.errors import PlanValidationError
from plancord.core.plan import render_markdown, validate_plan
from plancord.core.plan_text import COMMENTS_MARK, parse_plan_text

RICH = {
    "summary": "Move the cache",
    "steps": [
        {
            "description": "Read the cache\n\nthen its callers\n  - indented",
            "tools": ["view", "grep"],
            "files": ["src/cache.py", "docs/*.md"],
            "network": ["pypi.org"],
            "risk": "medium",
        },
        {"description": "Commit", "risk": "high"},
    ],
    "questions": [{"question": "Keep the old path?", "choices": ["yes", "no"]}, "Why\nnot?"],
    "context_notes": "## Steps\nnot a heading here\n\n1. [low] nor a step",
}


def test_a_plan_reads_back_to_the_same_sha() -> None:
    plan = validate_plan(RICH)
    text = "# Review\nsomething\n\n---\n\n" + render_markdown(plan) + f"\n{COMMENTS_MARK}\n- #1 x"
    again = validate_plan(parse_plan_text(text))
    assert again == plan
    assert again.sha256() == plan.sha256()


def test_what_cannot_be_read_names_its_line() -> None:
    with pytest.raises(PlanValidationError, match="line 4: a step starts with"):
        parse_plan_text("# Plan: x\n\n## Steps\n   tools: `a`\n")
    with pytest.raises(PlanValidationError, match="no '# Plan: <title>' line"):
        parse_plan_text("hello")
