"""``find … -exec CMD … {} +`` and ``\\;``: the command find runs is judged by its own rule.

Each everyday command is judged, its script run by bash and compared with what bash prints
for the original text; each harmful one is shown doing its harm unfiltered, then refused.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from plancord.core.shell.readonly import classify
from tests.core.shell.readonly.scratch import Listener, assert_runs_as_bash_would, harm, run

EVERYDAY = [
    "find . -name '*.py' -exec grep -l print {} +",
    "find src -type f -exec wc -l {} \\;",
    "find . -maxdepth 1 -name '*.txt' -exec head -1 {} +",
    "find src -name '*.py' -exec grep -n TODO {} + -o -name '*.sh' -print",
    "find . -path ./vendor -prune -o -name '*.txt' -exec wc -c {} ';'",
    "find src -exec ls -d {} +",
]

HARMFUL = [
    ("find . -name x -exec rm {} +", "writes"),
    ("find . -name x -exec sh -c 'touch PWNED' \\;", "writes"),
    ("find . -name notes.txt -exec sed -i s/a/b/ {} +", "writes"),
    ("find . -name notes.txt -exec cat {} + -exec rm {} +", "writes"),
    ("find -H /proc/self -maxdepth 1 -name environ -exec cat {} +", "secret"),
    ("find . -name paths.txt -exec sort -o out {} +", "writes"),
    ("find . -name x -exec grep -l e {} + | xargs rm", "writes"),
    ("find . -name notes.txt -exec tee {} \\; </dev/null", "writes"),
    ("find . -name x -execdir rm {} +", "writes"),
]

REFUSED = [
    ("find . -exec grep -f {} notes.txt \\;", "last word"),
    ("find . -exec grep x{} \\;", "last word"),
    ("find . -exec grep -e x {}x \\;", "last word"),
    ("find . -exec cat {} +x", "ended by"),
    ("find . -exec", "ended by"),
    ("find . -exec {} +", "last word"),
]


def _output(command: str, repo: Path) -> bytes:
    return run(command, repo).output


@pytest.mark.parametrize("command", EVERYDAY)
def test_a_reader_find_runs_is_read_only_and_runs_as_bash_would(
    command: str, scratch: Path
) -> None:
    verdict = classify(command, scratch)
    judged = assert_runs_as_bash_would(command, verdict, scratch)
    assert judged.returncode == 0, judged.output
    assert judged.output


@pytest.mark.parametrize(("command", "expected"), HARMFUL)
def test_harmful_exec_commands_do_harm_unfiltered_and_are_refused(
    command: str, expected: str, scratch: Path, listener: Listener
) -> None:
    assert harm(command, scratch, listener) == expected, f"{command!r} did no {expected}"
    verdict = classify(command, scratch)
    assert not verdict.allowed, f"{command!r} was allowed: {verdict.script}"


@pytest.mark.parametrize(("command", "expected"), REFUSED)
def test_a_file_name_never_becomes_an_option_or_pattern(
    command: str, expected: str, scratch: Path
) -> None:
    verdict = classify(command, scratch)
    assert not verdict.allowed
    assert expected in verdict.reason
