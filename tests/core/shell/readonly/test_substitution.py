"""Command and process substitution judged in stages: the pure classifier asks for the
inner command to run first, then judges (and renders) the structure with its output as data.

Here the caller's part is played by bash in the scratch repository: each stage script the
verdict names is run, its output handed back, and the final script run and compared with
what bash does with the original text. A property test checks that, for generated words,
the words the staged script gives a command are the words bash builds from the original.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings

from plancord.core.shell.readonly import Verdict, classify
from plancord.core.shell.readonly.substitution import MAX_SUBSTITUTIONS
from tests.core.shell.readonly.scratch import Listener, clean_env, harm, run
from tests.core.shell.readonly.test_bash_agreement import WORD

HARMFUL = [
    ('cat "$(rm x)"', "writes"),
    ('ls "$(touch PWNED)"', "writes"),
    ('echo "$(cat /proc/self/environ)"', "secret"),
    ('echo "$(sed -i s/a/b/ notes.txt)"', "writes"),
    ('cat "$(sort notes.txt -o out)"', "writes"),
    ("wc -l $(git ls-files '*.py' && touch PWNED)", "writes"),
]

# An unquoted substitution is a list of words to bash; each word is judged as what it is.
SPLIT_HARMFUL = [
    ("rm $(git ls-files x)", "writes"),  # the command, not the list, is judged
    ("sed -i s/a/b/ $(git ls-files notes.txt)", "writes"),
    ("cat $(cat paths.txt)", "secret"),  # a word naming a path outside the workspace
    ("$(echo rm) x", "writes"),  # the words bash builds name the command
    ("grep -n a $(echo notes.txt --output=x) || true", None),
]

EVERYDAY = [
    'ls "$(git rev-parse --show-toplevel)"/src',
    "ls $(git rev-parse --show-toplevel)/src",
    'cat "$(git rev-parse --show-toplevel)/notes.txt"',
    'echo "branch: $(git rev-parse --abbrev-ref HEAD)"',
    'git log --oneline "$(git rev-list --max-parents=0 HEAD)"..HEAD',
    'wc -l "$(git rev-parse --show-toplevel)"/data.txt && echo "$(date -u +%Y)" >/dev/null',
    'head -2 "$(ls notes.txt)"',
    "diff <(git show HEAD:notes.txt) <(git show v1:notes.txt)",
    "cat <(git show HEAD~1:notes.txt) | wc -l",
    "comm -12 <(sort notes.txt) <(sort data.txt | head -3)",
    "wc -l $(git ls-files '*.py')",
    "grep -n print $(git ls-files '*.py')",
    "rg -n TODO $(git ls-files 'src/*.py')",
    "wc -c $(git ls-files)",
    "cat $(git ls-files '*.nothing') </dev/null",
    "for f in $(git ls-files 'src/*'); do wc -l \"$f\"; done",
    "ls -d $(echo 'src/*' ' s?c ')",
    "printf '[%s]' a$(printf ' b  c\\t') `echo ' d '`e",
]

REASONS = [
    ("ls $(echo 'src/*\\x')", "backslash and a glob"),
    ("echo \"\"$(echo ' a')", "quoted empty string"),
    ("cat <notes.txt >$(echo /dev/null)", "split"),
    ("[[ $(echo 'a b') == x ]]", "split or globbed"),
    ("echo $($(ls))", "inside a command substitution"),
    ('echo "$(echo `ls`)"', "inside a command substitution"),
    ('echo "$(echo "$(ls)")"', "inside another"),
    ("echo $(ls", "not closed"),
    ("echo $()", "empty command substitution"),
    ("echo $(ls # )\n)", "inside a command substitution"),
    ('cd src && cat "$(echo main.py)"', "`cd`"),
    ('for f in a; do echo "$(echo $f)"; done', "inside a loop"),
    ("diff a<(ls) notes.txt", "joined to other text"),
    ("diff <(ls)a notes.txt", "joined to other text"),
    ("sort -o <(ls) notes.txt", "writes its output"),
]


def staged(command: str, repo: Path) -> Verdict:
    """``command`` judged with every stage it asks for run by bash in ``repo``."""
    outputs: dict[str, str] = {}
    verdict = classify(command, repo, outputs=outputs)
    while verdict.stage is not None:
        assert verdict.stage_key is not None
        assert run(verdict.stage, repo).harm is None
        outputs[verdict.stage_key] = _stdout(verdict.stage, repo).decode()
        verdict = classify(command, repo, outputs=outputs)
    return verdict


def _stdout(script: str, cwd: Path) -> bytes:
    return subprocess.run(
        ["bash", "-c", script], cwd=cwd, capture_output=True, check=False, env=clean_env()
    ).stdout


@pytest.mark.parametrize(("command", "expected"), HARMFUL)
def test_harmful_inner_commands_do_harm_unfiltered_and_never_run(
    command: str, expected: str, scratch: Path, listener: Listener
) -> None:
    verdict = classify(command, scratch)
    assert harm(command, scratch, listener) == expected, f"{command!r} did no {expected}"
    assert not verdict.allowed
    assert verdict.stage is None, f"{command!r} would run its inner command first"
    assert "not read-only" in verdict.reason


@pytest.mark.parametrize(("command", "expected"), SPLIT_HARMFUL)
def test_split_words_are_judged_each_as_what_it_is(
    command: str, expected: str | None, scratch: Path
) -> None:
    if expected is not None:
        assert harm(command, scratch) == expected, f"{command!r} did no {expected}"
    verdict = staged(command, scratch)
    assert not verdict.allowed, f"{command!r} was allowed: {verdict.script}"


@pytest.mark.parametrize("command", EVERYDAY)
def test_everyday_substitutions_run_in_stages(command: str, scratch: Path) -> None:
    verdict = staged(command, scratch)
    assert verdict.allowed, f"{command!r}: {verdict.reason}"
    assert verdict.script is not None
    assert "$(" not in verdict.script.replace("'$('", "")
    final = run(verdict.script, scratch)
    original = run(command, scratch)
    assert final.harm is None
    assert final.returncode == original.returncode == 0, final.output
    assert final.output == original.output


@pytest.mark.parametrize(
    "output", ["; rm -rf .\n", "$(touch PWNED)", "`touch PWNED`", "x' ; touch 'PWNED", "-rf"]
)
def test_the_inner_output_is_data(output: str, scratch: Path) -> None:
    command = 'echo "$(cat smuggle)"'
    (scratch / "smuggle").write_text(output)
    verdict = staged(command, scratch)
    assert verdict.allowed, verdict.reason
    assert verdict.script is not None
    ran = run(verdict.script, scratch)
    assert ran.harm is None
    assert ran.output == output.rstrip("\n").encode() + b"\n"


@pytest.mark.parametrize(("command", "expected"), REASONS)
def test_substitutions_that_are_not_evaluated_say_why(
    command: str, expected: str, scratch: Path
) -> None:
    verdict = staged(command, scratch)
    assert not verdict.allowed
    assert expected in verdict.reason


def test_the_count_of_substitutions_is_bounded(scratch: Path) -> None:
    command = "echo " + " ".join(['"$(echo a)"'] * (MAX_SUBSTITUTIONS + 1))
    verdict = classify(command, scratch, outputs={"echo a": "a\n"})
    assert f"more than {MAX_SUBSTITUTIONS} substitutions" in verdict.reason


@settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(word=WORD)
def test_the_staged_script_gives_bash_the_words_bash_builds(word: str, tmp_path: Path) -> None:
    for name in ("a.txt", "b.txt", "ab"):
        (tmp_path / name).write_text("")
    inner = f"printf '%s\\n\\n' {word}"
    for text in (
        f'printf \'%s\\0\' "$({inner})" x"<$({inner})>"',
        f"printf '%s\\0' $({inner}) y$({inner})",
        f"cat <({inner}) - <({inner}) </dev/null",
    ):
        verdict = staged(text, tmp_path)
        assume("outside the workspace" not in verdict.reason)
        assume("backslash and a glob" not in verdict.reason)
        assert verdict.allowed, verdict.reason
        assert verdict.script is not None
        env = {"PATH": os.environ["PATH"], "LC_ALL": "C"}
        expected = subprocess.run(
            ["bash", "-c", text], cwd=tmp_path, capture_output=True, check=True, env=env
        ).stdout
        assert _stdout(verdict.script, tmp_path) == expected


def test_an_output_cannot_pose_as_a_process_substitution(scratch: Path) -> None:
    verdict = classify('cat "$(cat f)"', scratch, outputs={"cat f": "\x01notes.txt"})
    assert not verdict.allowed
    assert "\\x01" in verdict.reason
