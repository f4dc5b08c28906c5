"""``until`` loops: ``until ! read [-r] NAME; do …; done`` is the ``while read`` loop bash
runs (``! read`` succeeds where ``read`` fails), judged and unrolled the same way; the
judged script prints what bash prints for the original text. Every other ``until`` repeats
its body with no bound plan mode can see and is refused, naming the construct; harmful
variants are shown doing harm unfiltered, then refused."""

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
]

HARMFUL = [
    ('echo x | until ! read -r f; do rm "$f"; done', "writes"),
    ('git ls-files | until ! read -r f; do sed -i s/a/b/ "$f"; done', "writes"),
    ('until ! read -r f; do cat "$f"; done < paths.txt', "secret"),
    ("until [ -e PWNED ]; do touch PWNED; done", "writes"),
]

REFUSED = [
    "until true; do ls; done",
    "until [ -e notes.txt ]; do sleep 1; done",
    "until read -r f; do ls; done < notes.txt",
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


@pytest.mark.parametrize("command", REFUSED)
def test_other_until_loops_are_refused_naming_the_construct(command: str, scratch: Path) -> None:
    verdict = staged(command, scratch)
    assert not verdict.allowed, f"{command!r} was allowed: {verdict.script}"
    assert "`until`" in verdict.reason
    assert "until ! read" in verdict.reason
