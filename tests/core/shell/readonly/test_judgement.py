"""The filter's judgement where programs parse differently from how a quick reading would.

Two lists, both run for real with bash in the scratch repository (``scratch.py``):

* ``HARMFUL``: each command, run unfiltered, does the harm named (a file written, a secret
  printed, a process that does not end), and the filter refuses it. They are written from
  the programs' manuals: awk's regex-versus-division rule as gawk and mawk apply it, awk's
  ``ARGV``/``ARGC``, xxd's operand order, xargs turning text into paths, tail's obsolete
  ``+N[cbl][f]`` forms, seq's precision, jq's tokens, ``git grep -f``, and a repository
  found through ``commondir``.
* ``READ_ONLY``: the everyday forms of the same programs. The filter allows each, and the
  script it renders (never the original text) runs in the scratch repository, ends, exits
  0 and does no harm.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from plancord.core.shell.readonly import classify
from tests.core.shell.readonly.scratch import Listener, harm, require_program, run

HARMFUL: dict[str, list[tuple[str, str]]] = {
    "awk reads a regex where a division was seen": [
        ("""gawk '{ if (1) / "/; print > "out"; "/" # "\n}' notes.txt""", "writes"),
        ("""awk '{ if (1) / "/; print > "out"; "/" # "\n}' notes.txt""", "writes"),
        ("""gawk '{ while (0) / "/; print > "out"; "/" # "\n}' notes.txt""", "writes"),
        ("""gawk '{ for (k in a) / "/; print > "out"; "/" # "\n}' notes.txt""", "writes"),
        ("""mawk '{ x = length / "/; print > "out"; y = "/" # "\n}' notes.txt""", "writes"),
        ("""gawk '{ if (NR) / "/; printf "x" > "out"; "/" # "\n}' notes.txt""", "writes"),
    ],
    "awk's ARGV and ARGC written": [
        ("""awk 'BEGIN { ARGV[1] = "/proc/self/environ" } 1' notes.txt""", "secret"),
        ("""awk 'BEGIN { ARGV[ARGC++] = "/proc/self/environ" } 1'""", "secret"),
        ("""awk 'BEGIN { sub(/.*/, "/proc/self/environ", ARGV[1]) } 1' notes.txt""", "secret"),
        ("""awk 'BEGIN { split("x /proc/self/environ", ARGV, " "); ARGC = 3 } 1'""", "secret"),
        (
            """awk 'function f(a) { a[1] = "/proc/self/environ" } BEGIN { f(ARGV); ARGC = 2 } 1'""",
            "secret",
        ),
        ("""awk 'BEGIN { ARGV[1] = "/proc/self/environ"; ARGC = 2 } 1'""", "secret"),
    ],
    "xxd's options end at the first file name": [
        ("xxd notes.txt -l5", "writes"),
        ("xxd notes.txt -c8", "writes"),
        ("xxd -g1 notes.txt -r", "writes"),
        ("xxd -- notes.txt -p", "writes"),
        ("xxd -s 1 notes.txt --len", "writes"),
        ("xxd - out < notes.txt", "writes"),
    ],
    "xargs turns text into paths": [
        ("echo /proc/self/environ | xargs cat", "secret"),
        ("printf '%s\\n' /proc/self/environ | xargs grep -a SECRET", "secret"),
        ("find . -name notes.txt -printf '/proc/self/environ\\n' | xargs cat", "secret"),
        ("git ls-files --format=/proc/self/environ | head -1 | xargs cat", "secret"),
        ("xargs cat < paths.txt", "secret"),
        ("xargs -a paths.txt cat", "secret"),
        ("cat paths.txt | xargs cat", "secret"),
    ],
    "tail's obsolete forms follow": [
        ("tail +1f app.log", "never-ends"),
        ("tail -1f app.log", "never-ends"),
        ("tail +f app.log", "never-ends"),
        ("tail -cf app.log", "never-ends"),
        ("tail +5cf app.log", "never-ends"),
        ("tail -10lf app.log", "never-ends"),
    ],
    "seq's precision": [
        ("seq 1e30 1 1.000000000000000001e30", "never-ends"),
        ("seq 1e25 1 1.0000000000000001e25", "never-ends"),
        ("seq -w 1e30 1 1.000000000000000001e30", "never-ends"),
        ("seq -s, 1e30 1 1.000000000000000001e30", "never-ends"),
        ("seq 1e30 0.5 1.0000000000000001e30", "never-ends"),
    ],
    "jq's own tokens": [
        ("jq -n '$ ENV.CORPUS_TOKEN'", "secret"),
        ("jq -n '$ # a comment\nENV.CORPUS_TOKEN'", "secret"),
        ("""jq -n '"\\($ ENV.CORPUS_TOKEN)"'""", "secret"),
        ("jq -n '{$ ENV} | .ENV.CORPUS_TOKEN'", "secret"),
        ("jq -n '[$ ENV][0].CORPUS_TOKEN'", "secret"),
        ("jq -n '{a: env}.a.CORPUS_TOKEN'", "secret"),
    ],
    "jq without end": [
        ("jq -n 'repeat(1)'", "never-ends"),
        ("jq -n '[range(1e18)]'", "never-ends"),
        ("jq -n 'def f: f; f'", "never-ends"),
        ("jq -n 'last(recurse(. + 1))' <<< 0", "never-ends"),
        ("jq -n '0 | until(. < 0; . + 1)'", "never-ends"),
    ],
    "git grep's pattern files": [
        ("git grep -f /dev/zero", "never-ends"),
        ("git grep -nf /dev/zero", "never-ends"),
        ("git grep -f/dev/zero", "never-ends"),
        ("git grep -e x -f /dev/zero", "never-ends"),
        ("git grep -l -if /dev/zero", "never-ends"),
    ],
    "a repository found through commondir": [
        ("cd vendor/wt && git diff HEAD~1 HEAD", "writes"),
        ("git -C vendor/wt diff HEAD~1 HEAD", "writes"),
        ("cd vendor/wt && git diff HEAD~1 HEAD -- a", "writes"),
        ("cd vendor && cd wt && git diff -p HEAD~1 HEAD", "writes"),
        ("git -C vendor -C wt diff HEAD~1 HEAD", "writes"),
    ],
}

READ_ONLY: dict[str, list[str]] = {
    "awk": [
        "awk '{ s += $2 / 2 } END { print s / NR }' data.txt",
        "gawk '{ print length / 2 }' notes.txt",
        "awk 'NR % 2 == 0 { if ($0 ~ /a/) print }' notes.txt",
        "awk 'BEGIN { print ARGC } { print ARGV[1], FILENAME }' notes.txt",
        "awk 'BEGIN { for (i = 0; i < ARGC; i++) print ARGV[i] }' notes.txt",
        "gawk -F' ' '$2 / 1000 > 0.5 { n++ } END { print n }' data.txt",
    ],
    "xxd": [
        "xxd -l 16 notes.txt",
        "xxd -c 8 -g 1 notes.txt",
        "xxd -p notes.txt",
        "xxd --len 4 notes.txt",
        "xxd -s 2 -l 4 -- notes.txt",
    ],
    "xargs": [
        "find . -name '*.txt' | xargs wc -l",
        "git ls-files | xargs grep -n alpha",
        "rg -l alpha | xargs wc -c",
        "find src -name '*.py' | head -5 | xargs cat",
        "grep -rl alpha --exclude-dir=.git . | sort | xargs wc -l",
    ],
    "tail": [
        "tail +2 notes.txt",
        "tail -2 notes.txt",
        "tail -n +3 notes.txt",
        "tail -5l notes.txt",
        "tail +3c notes.txt",
    ],
    "seq": ["seq 5", "seq 1 0.5 3", "seq -w 1 10", "seq 10 -2 1", "seq -s, 1 5"],
    "jq": [
        "jq .env package.json",
        "jq '{env}' package.json",
        "jq -r '.name' package.json",
        "jq '$__loc__' package.json",
        "jq 'input_filename' package.json",
        "jq '.scripts | keys' package.json",
        """jq -r '"\\(.name)-\\(.env)"' package.json""",
    ],
    "git": [
        "git grep -f notes.txt -- notes.txt",
        "git -C src log --oneline",
        "git -C src grep -n main",
        "git config user.email",
        "git config --get user.email",
        "git tag --contains HEAD",
        "git branch --no-color",
    ],
}

HARMFUL_CASES = [
    pytest.param(family, command, expected, id=f"{family[:16]}-{index}")
    for family, cases in HARMFUL.items()
    for index, (command, expected) in enumerate(cases)
]
READ_ONLY_CASES = [
    pytest.param(command, id=f"{family}-{index}")
    for family, commands in READ_ONLY.items()
    for index, command in enumerate(commands)
]


@pytest.mark.parametrize(("family", "command", "expected"), HARMFUL_CASES)
def test_each_harmful_command_does_harm_unfiltered_and_is_refused(
    family: str, command: str, expected: str, scratch: Path, listener: Listener
) -> None:
    require_program(command)
    verdict = classify(command, scratch)
    assert harm(command, scratch, listener) == expected, f"{family}: {command!r} did no {expected}"
    assert not verdict.allowed, f"{family}: {command!r} was allowed: {verdict.reason}"
    assert verdict.script is None
    assert verdict.reason


@pytest.mark.parametrize("command", READ_ONLY_CASES)
def test_each_everyday_form_is_allowed_and_its_script_runs_harmlessly(
    command: str, scratch: Path
) -> None:
    verdict = classify(command, scratch)
    assert verdict.allowed, f"{command!r}: {verdict.reason}"
    assert verdict.script is not None
    result = run(verdict.script, scratch)
    assert result.harm is None, f"{command!r} did {result.harm}"
    assert result.returncode == 0, result.output.decode(errors="replace")


def test_every_family_has_five_variants() -> None:
    assert all(len(cases) >= 5 for cases in HARMFUL.values())
    assert all(len(commands) >= 5 for commands in READ_ONLY.values())
