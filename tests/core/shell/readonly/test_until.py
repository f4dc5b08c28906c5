"""``until`` loops: ``until ! read [-r] NAME; do …; done`` is the ``while read`` loop bash
runs (``! read`` succeeds where ``read`` fails), judged and unrolled the same way; any other
``until LIST; do LIST; done`` (and ``while LIST``) has both lists judged read-only and runs
as written. The judged script prints what bash prints for the original text; harmful
variants (a write in the body or the condition) are shown doing harm unfiltered, then
refused; what would be read once but run each round is refused, naming the construct."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.core.shell.readonly.scratch import Listener, assert_runs_as_bash_would, harm
from tests.core.shell.readonly.test_substitution import staged

EVERYDAY = [
    'until ! read -r line; do echo "got $line"; done < notes.txt',
    'git ls-files | until ! read -r f; do wc -l "$f"; done',
    'git ls-files src | until ! IFS= read -r f; do echo "== $f"; head -1 "$f"; done',
    'until ! read -r f; do echo "$f"; done < notes.txt | wc -l',
    'ls && until ! read -r f; do echo "[$f]"; done < notes.txt',
    'printf "a b\\n  c" | until ! read -r f; do echo "[$f]"; done',
    "until true; do ls; done",
    "until [ -e notes.txt ]; do ls; done && echo found",
    "until git diff --quiet -- src; do git diff --stat -- src; done",
    "until grep -q alpha notes.txt; do echo none; done; echo after",
    "while false; do ls; done; echo never",
    "until ! grep -q nothing-here notes.txt; do echo no; done | wc -l",
    "if [ -d src ]; then until true; do ls src; done; fi",
]

HARMFUL = [
    ('echo x | until ! read -r f; do rm "$f"; done', "writes"),
    ('git ls-files | until ! read -r f; do sed -i s/a/b/ "$f"; done', "writes"),
    ('until ! read -r f; do cat "$f"; done < paths.txt', "secret"),
    ("until [ -e PWNED ]; do touch PWNED; done", "writes"),
    ("until rm x; do ls; done", "writes"),
    ("until true; do ls; done; touch PWNED", "writes"),
    ("until false; do cat /proc/self/environ; break; done", "secret"),
    ("while true; do sed -i s/a/b/ notes.txt; break; done", "writes"),
    ("until [ -s out ]; do ls > out; done", "writes"),
    ("until ls notes.txt | xargs rm; do ls; done", "writes"),
]

REFUSED = [
    ("ls | until true; do ls; done", "a pipe into an `until` loop"),
    ("until true; do ls; done > out", "a redirection of an `until` loop"),
    ('until [ "$(ls)" ]; do ls; done', "a substitution inside a loop"),
    ("for f in a; do until true; do ls; done; done", "inside a loop"),
    ("until read -r f; do ls; done < notes.txt", "a redirection of an `until` loop"),
    ("until [ -e notes.txt ]; do sleep 1; done", "`sleep` only waits"),
]


@pytest.mark.parametrize("command", EVERYDAY)
def test_until_read_loops_run_as_bash_would(command: str, scratch: Path) -> None:
    assert_runs_as_bash_would(command, staged(command, scratch), scratch)


@pytest.mark.parametrize(("command", "expected"), HARMFUL)
def test_harmful_until_loops_do_harm_unfiltered_and_are_refused(
    command: str, expected: str, scratch: Path, listener: Listener
) -> None:
    verdict = staged(command, scratch)
    assert not verdict.allowed, f"{command!r} was allowed: {verdict.script}"
    assert harm(command, scratch, listener) == expected, f"{command!r} did no {expected}"


@pytest.mark.parametrize(("command", "reason"), REFUSED)
def test_what_an_until_loop_cannot_run_is_refused_naming_it(
    command: str, reason: str, scratch: Path
) -> None:
    verdict = staged(command, scratch)
    assert not verdict.allowed, f"{command!r} was allowed: {verdict.script}"
    assert reason in verdict.reason
