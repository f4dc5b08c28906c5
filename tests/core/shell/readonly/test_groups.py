"""``{ …; }`` groups, ``! PIPELINE``, and loops piped on or joined by ``&&``/``||`` (each
read as a group): the judged script prints what bash prints for the original text, and
harmful variants are shown doing harm unfiltered, then refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from plancord.core.shell.readonly import classify
from tests.core.shell.readonly.scratch import assert_runs_as_bash_would, harm

EVERYDAY = [
    "{ ls; echo x; } | wc -l",
    "{ head -1 notes.txt; tail -1 notes.txt; }",
    "ls | { wc -l; }",
    'for f in src/*; do wc -l "$f"; done | sort -n',
    'git status --short && for f in src/*; do echo "$f"; done',
    'for f in notes.txt data.txt; do head -1 "$f"; done && echo ok',
    'ls nothing 2>/dev/null || for f in src/*; do echo "$f"; done',
    "if [[ -d src ]]; then ls src; fi | wc -l",
    "ls && ( ls src )",
    "! grep -q nothing-here notes.txt",
    "! grep -q alpha notes.txt || echo found",
    "ls && ! ls nothing 2>/dev/null",
    "! grep -c a notes.txt | grep -q 9 && echo no-nine",
]

HARMFUL = [
    ("{ ls; touch PWNED; } | wc -l", "writes"),
    ('for f in x; do rm "$f"; done | wc -l', "writes"),
    ("{ cd src && touch ../PWNED; }", "writes"),
    ("find . -name x | { xargs rm; }", "writes"),
    ('ls && for f in x; do sed -i s/d/D/ "$f"; done', "writes"),
    ("! touch PWNED", "writes"),
    ("! find . -name x | xargs rm", "writes"),
]


@pytest.mark.parametrize("command", EVERYDAY)
def test_groups_run_as_bash_would(command: str, scratch: Path) -> None:
    verdict = classify(command, scratch)
    assert_runs_as_bash_would(command, verdict, scratch)


@pytest.mark.parametrize(("command", "expected"), HARMFUL)
def test_harmful_groups_do_harm_unfiltered_and_are_refused(
    command: str, expected: str, scratch: Path
) -> None:
    assert harm(command, scratch) == expected, f"{command!r} did no {expected}"
    verdict = classify(command, scratch)
    assert not verdict.allowed, f"{command!r} was allowed: {verdict.script}"


def test_groups_nest_only_so_deep(scratch: Path) -> None:
    verdict = classify("{ " * 3000 + "ls", scratch)
    assert not verdict.allowed
    assert "nest deeper" in verdict.reason
