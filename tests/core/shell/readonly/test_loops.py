"""``for`` loops over a literal or glob list, unrolled: judged per iteration, run as the
unrolled structure, and built into the same words bash builds from the loop.

Harmful loops run unfiltered in the scratch repository do their harm and are refused;
everyday loops are allowed and their rendered script runs; a property test checks, for
generated list words, that the unrolled script gives each command exactly the argv bash
gives it when it runs the original loop.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from plancord.core.shell.readonly import classify
from plancord.core.shell.readonly.loops import MAX_LOOP_VALUES
from tests.core.shell.readonly.scratch import Listener, harm, run
from tests.core.shell.readonly.test_bash_agreement import WORD

HARMFUL = [
    ("for f in -i; do sed s/a/b/ notes.txt $f; done", "writes"),
    ('for f in /proc/self/environ; do cat "$f"; done', "secret"),
    ('for f in notes.txt; do sort "$f" -o out; done', "writes"),
    ("for o in -delete; do find . -name x $o; done", "writes"),
    ('for f in x; do rm "$f"; done', "writes"),
    ('for f in out; do cat notes.txt > "$f"; done', "writes"),
    ('for f in notes.txt; do xxd "$f" out; done', "writes"),
]

EVERYDAY = [
    'for f in src/*.py; do head -3 "$f"; done',
    "for f in *.txt; do wc -l $f; done",
    'for f in notes.txt data.txt; do echo "== $f"; head -1 "$f"; done',
    'for d in src vendor; do ls "$d"; done; echo done',
    'for f in *.txt\ndo\n  grep -c a "$f" || true\ndone',
    'for f in notes.txt; do git log --oneline -1 -- "${f}"; done',
]

REASONS = [
    ("for f in a; do for g in b; do echo; done; done", "inside a loop"),
    ('for f in "a b"; do echo $f; done', "split or globbed"),
    ("for f in a; do echo $g; done", "`$g`"),
    ("for f in; do echo; done", "no words"),
    ("for f in $(ls); do echo; done", "command substitution"),
    ("for f; do echo $f; done", "only `for NAME in WORDS"),
    ("for f in a b; do cd src && ls; done", "`cd DIR && …`"),
    ("for f in a; echo $f", "no `do`"),
    ("for f in a; do echo $f", "`done` is missing"),
]


@pytest.mark.parametrize(("command", "expected"), HARMFUL)
def test_harmful_loops_do_harm_unfiltered_and_are_refused(
    command: str, expected: str, scratch: Path, listener: Listener
) -> None:
    verdict = classify(command, scratch)
    assert harm(command, scratch, listener) == expected, f"{command!r} did no {expected}"
    assert not verdict.allowed, f"{command!r} was allowed: {verdict.reason}"


@pytest.mark.parametrize("command", EVERYDAY)
def test_everyday_loops_are_unrolled_and_run(command: str, scratch: Path) -> None:
    verdict = classify(command, scratch)
    assert verdict.allowed, f"{command!r}: {verdict.reason}"
    assert verdict.script is not None
    assert "for" not in verdict.script.split("'")[0::2]  # bash never sees a loop
    unrolled = run(verdict.script, scratch)
    original = run(command, scratch)
    assert unrolled.harm is None
    assert unrolled.returncode == original.returncode == 0, unrolled.output
    assert unrolled.output == original.output


@pytest.mark.parametrize(("command", "expected"), REASONS)
def test_loops_that_are_not_unrolled_say_why(command: str, expected: str, scratch: Path) -> None:
    verdict = classify(command, scratch)
    assert not verdict.allowed
    assert expected in verdict.reason


def test_a_loop_is_bounded(scratch: Path) -> None:
    words = " ".join(["a"] * (MAX_LOOP_VALUES + 1))
    verdict = classify(f"for f in {words}; do echo $f; done", scratch)
    assert f"more than {MAX_LOOP_VALUES} words" in verdict.reason
    verdict = classify(f"for f in {' '.join(['a'] * 100)}; do echo $f; echo x; done", scratch)
    assert "more than 128 commands" in verdict.reason


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("loops")
    for name in ("a.txt", "b.txt", "c.md", "x]y", ".hidden", "ab", "B.md", "sp ace.txt"):
        (root / name).write_text("")
    (root / "dir").mkdir()
    (root / "dir" / "inner.txt").write_text("")
    return root


def _output(script: str, cwd: Path) -> bytes:
    return subprocess.run(
        ["bash", "-c", script],
        cwd=cwd,
        capture_output=True,
        check=True,
        env={"PATH": os.environ["PATH"], "LC_ALL": "C"},
    ).stdout


@settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(words=st.lists(WORD, min_size=1, max_size=4), unquoted=st.booleans())
def test_the_unrolled_loop_gives_bash_the_words_bash_builds(
    words: list[str], unquoted: bool, files: Path
) -> None:
    use = "x$f" if unquoted else '"<$f>"'
    text = f'for f in {" ".join(words)}; do printf \'%s\\0\' "$f" {use} "${{f}}"; done'
    verdict = classify(text, files)
    assume("outside the workspace" not in verdict.reason)
    assume("split or globbed" not in verdict.reason)
    assert verdict.allowed, verdict.reason
    assert verdict.script is not None
    assert _output(verdict.script, files) == _output(text, files)
