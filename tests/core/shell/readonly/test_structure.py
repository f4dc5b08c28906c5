"""``if``, ``while read``, ``[[ … ]]``, ``test``, literal arithmetic, ``( … )`` subshells and
backquotes: judged as parts of the structure, run as the structure re-rendered.

As in the corpus test, each harmful variant is first run unfiltered in the scratch
repository (it does its harm) and then judged; each everyday variant (written from bash's
manual, as an agent types it) is judged with its stages run by bash and its final script run
and compared with what bash does with the original text. A property test checks that the
lines a ``while read`` loop is unrolled over give each command the words bash builds.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from plancord.core.shell.readonly import classify
from plancord.core.shell.readonly.arithmetic import evaluate
from plancord.core.shell.readonly.loops import MAX_LOOP_VALUES
from plancord.core.shell.readonly.structure import quote
from tests.core.shell.readonly.scratch import Listener, harm, run
from tests.core.shell.readonly.test_bash_agreement import WORD
from tests.core.shell.readonly.test_substitution import staged

HARMFUL = [
    ("if true; then rm x; fi", "writes"),
    ("if grep -q alpha notes.txt; then touch PWNED; fi", "writes"),
    ("if false; then :; else rm x; fi", "writes"),
    ("if true; then cat notes.txt > out; fi", "writes"),
    ("printf 'x\\n' > list; while read f; do rm \"$f\"; done < list", "writes"),
    ('echo x | while read -r f; do rm "$f"; done', "writes"),
    ('git ls-files | while read -r f; do sed -i s/a/b/ "$f"; done', "writes"),
    ('while read -r f; do cat "$f"; done < paths.txt', "secret"),
    ("[[ -v a[$(touch PWNED)] ]]", "writes"),
    ('[[ -v "a[$(touch PWNED)]" ]]', "writes"),
    ("(( a[$(touch PWNED)] ))", "writes"),
    ("echo $(( a[$(touch PWNED)] ))", "writes"),
    ("echo `touch PWNED`", "writes"),
    ('echo "`rm x`"', "writes"),
    ("(cd .. && touch repo/PWNED)", "writes"),
    ("(cd src && rm ../x)", "writes"),
    ("[[ -f notes.txt ]] && rm x", "writes"),
    ("test -f notes.txt && touch PWNED", "writes"),
    ("( cat notes.txt > out )", "writes"),
]

EVERYDAY = [
    "if [ -f package.json ]; then cat package.json; fi",
    "if grep -q TODO src/main.py; then echo has-todo; else echo clean; fi",
    "if [[ -d src ]]; then ls src; elif [[ -d lib ]]; then ls lib; else echo none; fi",
    "if git diff --quiet; then echo clean; else git diff --stat; fi",
    'git ls-files | while read -r f; do wc -l "$f"; done',
    'git ls-files src | while IFS= read -r f; do echo "== $f"; head -1 "$f"; done',
    'while read -r line; do echo "got $line"; done < notes.txt',
    'find src -name "*.py" | while read -r f; do grep -c print "$f"; done',
    "[[ -f notes.txt ]] && head -1 notes.txt",
    '[[ "$(git rev-parse --abbrev-ref HEAD)" == main ]] && echo on-main',
    "[[ notes.txt == *.txt ]] && echo text",
    '[[ "$(git describe --tags)" =~ ^v[0-9]+$ ]] && echo tagged',
    "[ -d src ] && ls src",
    "test -s notes.txt && echo non-empty",
    "[[ 3 -gt 2 && 1 -le 1 ]] || echo odd",
    "echo $(( 6 * 7 )) $(( -2 ** 2 )) $(( 7 / -2 )) $(( 7 % -2 ))",
    "(( 1 < 3 )) && echo yes",
    "(cd src && ls) | wc -l",
    "(cd src && git log --oneline -1 -- main.py)",
    "cd src && ls && cat main.py",
    "echo `git rev-parse --abbrev-ref HEAD`",
    'echo "head: `git rev-parse --short HEAD`"',
    'for f in src/*; do [[ -x "$f" ]] || echo "$f not executable"; done',
    'for f in src/*; do if grep -q print "$f"; then echo "$f"; else echo "no $f"; fi; done',
    'if [ -d src ]; then for f in src/*.py; do head -1 "$f"; done; fi',
    # loop values that would be syntax if rendered bare stay one pattern word
    "for f in ']]' '!' 'x'; do [[ x == $f ]] && echo y || echo n; done",
]

REASONS = [
    ("while read f; do echo $f; done", "needs its input"),
    ("while read a a; do echo; done < notes.txt", "only `while read"),
    ("ls | while true; do ls; done", "a pipe into a `while` loop"),
    ("if true; then if true; then ls; fi; fi", "inside an `if`"),
    ("if true; then cd src && ls; fi", "`cd`"),
    ("echo $(( x + 1 ))", "literal numbers"),
    ("echo $(( 1 / 0 ))", "division by zero"),
    ("echo $(( 010 ))", "octal"),
    ("(( i++ ))", "literal numbers"),
    ("echo $(( 1 = 2 ))", "assignment"),
    ("[[ -v x ]]", "evaluates its array subscript"),
    ("[[ 3 -gt 2 && -n x ]]", "integer literals"),
    ('[[ "$(cat notes.txt)" -eq 1 ]]', "integer literals"),
    ("[[ -f /proc/self/environ ]]", "/proc"),
    ("[[ x == a$b ]]", "variable"),
    ("echo `ls \\`pwd\\``", "backslash inside backquotes"),
    ('echo "`echo "a"`"', "ambiguous"),
    ("(ls", "`)` is missing"),
    ("(ls) foo", "only a pipe or a connector"),
]


@pytest.mark.parametrize(("command", "expected"), HARMFUL)
def test_harmful_structures_do_harm_unfiltered_and_are_refused(
    command: str, expected: str, scratch: Path, listener: Listener
) -> None:
    verdict = staged(command, scratch)
    assert not verdict.allowed, f"{command!r} was allowed: {verdict.script}"
    assert harm(command, scratch, listener) == expected, f"{command!r} did no {expected}"


@pytest.mark.parametrize("command", EVERYDAY)
def test_everyday_structures_run_as_judged(command: str, scratch: Path) -> None:
    verdict = staged(command, scratch)
    assert verdict.allowed, f"{command!r}: {verdict.reason}"
    assert verdict.script is not None
    final = run(verdict.script, scratch)
    original = run(command, scratch)
    assert final.harm is None
    assert final.returncode == original.returncode, final.output
    assert final.output == original.output


@pytest.mark.parametrize(("command", "expected"), REASONS)
def test_structures_that_are_not_evaluated_say_why(
    command: str, expected: str, scratch: Path
) -> None:
    verdict = staged(command, scratch)
    assert not verdict.allowed, verdict.script
    assert expected in verdict.reason


def test_a_while_loop_is_bounded(scratch: Path) -> None:
    (scratch / "many").write_text("a\n" * (MAX_LOOP_VALUES + 1))
    verdict = staged('while read -r f; do echo "$f"; done < many', scratch)
    assert f"more than {MAX_LOOP_VALUES} lines" in verdict.reason


@pytest.mark.parametrize(
    "expression",
    ["1 + 2 * 3", "-2 ** 2", "2 ** 63", "7 / -2", "-7 % 3", "1 << 62 << 1", "(1, 2) ? 3 : 4",
     "!0 && ~5 || 0", "9223372036854775807 + 1", "1 < 2 == 1", "6 & 3 ^ 1 | 8"],
)  # fmt: skip
def test_arithmetic_is_evaluated_as_bash_evaluates_it(expression: str) -> None:
    expected = subprocess.run(
        ["bash", "-c", f"echo $(( {expression} ))"], capture_output=True, check=True, text=True
    ).stdout.strip()
    assert str(evaluate(expression)) == expected


LINE = st.text(alphabet=st.sampled_from([*"ab *?[]", "\t", "'", '"', "$", "-", "\\"]), max_size=6)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(lines=st.lists(LINE, min_size=0, max_size=4), keep=st.booleans(), last=st.booleans())
def test_the_unrolled_while_loop_gives_bash_the_words_bash_builds(
    lines: list[str], keep: bool, last: bool, tmp_path: Path
) -> None:
    text = "\n".join(lines) + ("\n" if last else "")
    (tmp_path / "input").write_text(text)
    (tmp_path / "a.txt").write_text("")
    read = "IFS= read -r" if keep else "read -r"
    command = f'while {read} v; do printf \'<%s>\' "$v" "${{v}}x"; echo; done < input'
    verdict = staged(command, tmp_path)
    assert verdict.allowed, verdict.reason
    assert verdict.script is not None
    env = {"PATH": os.environ["PATH"], "LC_ALL": "C"}
    expected = subprocess.run(
        ["bash", "-c", command], cwd=tmp_path, capture_output=True, check=True, env=env
    ).stdout
    got = subprocess.run(
        ["bash", "-c", verdict.script], cwd=tmp_path, capture_output=True, check=True, env=env
    ).stdout
    assert got == expected


def _check_bash(*args: str, workspace: Path) -> list[dict[str, object]]:
    result = subprocess.run(
        [sys.executable, "-m", "plancord.command.main", "check-bash", "--json", "--explain", *args],
        input='git ls-files src | while read -r f; do head -1 "$f"; done\nif true; then rm x; fi\n',
        capture_output=True,
        text=True,
        check=False,
        cwd=workspace,
    )
    assert result.returncode == 1, result.stderr
    return [json.loads(line) for line in result.stdout.splitlines()]


def test_check_bash_says_which_stage_runs_first_and_runs_it_when_asked(scratch: Path) -> None:
    loop, harmful = _check_bash(workspace=scratch)
    assert not loop["allowed"]
    assert loop["stage"] == "'git' 'ls-files' 'src'"
    assert loop["stages_run"] == []
    assert harmful["decided_by"] == ["rm: the list of refused commands"]
    loop, harmful = _check_bash("--stages", workspace=scratch)
    assert loop["allowed"], loop["reason"]
    assert loop["stages_run"] == ["'git' 'ls-files' 'src'"]
    assert loop["runs"] == "'head' '-1' 'src/main.py'; 'head' '-1' 'src/run.sh'"
    assert (
        loop["decided_by"]
        == ["head [text tools]: option table from head(1), GNU coreutils 9.1"] * 2
    )
    assert not harmful["allowed"]


@settings(
    max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(pattern=WORD, operator=st.sampled_from(["==", "!=", "=~"]))
def test_a_rendered_conditional_matches_what_bash_matches(
    pattern: str, operator: str, tmp_path: Path
) -> None:
    subjects = ["a.txt", "ab", "x]y", "sp ace", "a*", "", "\\", "é"]
    command = "; ".join(
        f"[[ {quote(s)} {operator} {pattern} ]] && echo y{i} || echo n{i}"
        for i, s in enumerate(subjects)
    )
    verdict = classify(command, tmp_path)
    assume(verdict.allowed)
    assert verdict.script is not None
    env = {"PATH": os.environ["PATH"], "LC_ALL": "C"}
    expected = subprocess.run(
        ["bash", "-c", command], cwd=tmp_path, capture_output=True, check=False, env=env
    )
    got = subprocess.run(
        ["bash", "-c", verdict.script], cwd=tmp_path, capture_output=True, check=False, env=env
    )
    assert (got.stdout, got.returncode) == (expected.stdout, expected.returncode)
