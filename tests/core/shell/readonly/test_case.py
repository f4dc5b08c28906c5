"""``case WORD in PATTERN) LIST ;; … esac``: the word as bash expands it (a substitution run
first as a stage), the first matching pattern's list run, every list judged read-only. The
judged script prints what bash prints for the original text; harmful variants are shown
doing harm unfiltered, then refused; fall-through and what is not matched exactly are
refused with a reason naming it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.core.shell.readonly.scratch import Listener, assert_runs_as_bash_would, harm
from tests.core.shell.readonly.test_substitution import staged

EVERYDAY = [
    'case "$(uname)" in Linux) echo linux;; Darwin) echo mac;; esac',
    "case x in a|b) ls;; x*) echo yes; head -1 notes.txt;; *) echo no;; esac",
    "case a in b) echo b;; esac && echo no-match-is-zero",
    'case "a b" in "a "?) echo m;; esac | wc -l',
    "case x in\n  (x) ls\n  ;;\nesac",
    "case notes.txt in *.txt) wc -l notes.txt;; *) echo other;; esac",
    "case src/main.py in *.py) echo py;; esac",
    "case '*' in x) echo x;; '*') echo star;; esac",
    'case "$(git rev-parse --abbrev-ref HEAD)" in main) git log -1 --format=%s;; esac',
    "case x in x) false;; esac || echo failed",
    "ls && case .x in ?x) echo dot;; esac",
]

HARMFUL = [
    ("case x in x) rm x;; esac", "writes"),
    ('case "$(uname)" in *) touch PWNED;; esac', "writes"),
    ("case x in y) ls;; *) cat notes.txt > out;; esac", "writes"),
    ("case a in a) ls;& b) touch PWNED;; esac", "writes"),
    ("case a in a) ls;;& *) touch PWNED;; esac", "writes"),
    ("case x in x) ls;; esac | xargs rm", "writes"),
]

REFUSED = [
    ("case x in y) rm x;; esac", "`rm` changes files"),
    ("case x in [xy]) ls;; esac", "holds `[` unquoted"),
    ("case a in a) ls;& b) ls;; esac", "`;&` falls through"),
    ("case a in a) ls;;& b) ls;; esac", "`;;&`"),
    ("for f in a; do case $f in a) ls;; esac; done", "`case` inside a loop"),
    ("case x in x) if true; then ls; fi;; esac", "inside"),
    ("ls;; ls", "`;;` ends a `case` list"),
    ("case x in x) ls;; ;; esac", "not a word"),
]


@pytest.mark.parametrize("command", EVERYDAY)
def test_case_runs_as_bash_would(command: str, scratch: Path) -> None:
    assert_runs_as_bash_would(command, staged(command, scratch), scratch)


@pytest.mark.parametrize(("command", "expected"), HARMFUL)
def test_harmful_case_does_harm_unfiltered_and_is_refused(
    command: str, expected: str, scratch: Path, listener: Listener
) -> None:
    verdict = staged(command, scratch)
    assert not verdict.allowed, f"{command!r} was allowed: {verdict.script}"
    assert harm(command, scratch, listener) == expected, f"{command!r} did no {expected}"


@pytest.mark.parametrize(("command", "reason"), REFUSED)
def test_case_refusals_name_what_is_not_evaluated(command: str, reason: str, scratch: Path) -> None:
    verdict = staged(command, scratch)
    assert not verdict.allowed, f"{command!r} was allowed: {verdict.script}"
    assert reason in verdict.reason
