"""Programs that only read, once nobody is at a terminal: pagers and man as cat, tar -t,
git fsck, git archive to a pipe, git format-patch --stdout, python --version, awk printing
to standard error.

Each everyday command is judged, and the judged script's output compared with what bash
prints for the original text (here, too, output is a pipe); each harmful variant is shown
doing its harm unfiltered, then refused; the rest are refused and say why.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from plancord.core.shell.readonly import classify
from tests.core.shell.readonly.scratch import assert_runs_as_bash_would, harm

EVERYDAY = [
    "less notes.txt",
    "less -N src/main.py",
    "more notes.txt",
    "man ls | head -3",
    "python3 --version",
    "python3 -V",
    "git fsck",
    "git fsck --full --no-dangling",
    "git format-patch --stdout -1",
    "git format-patch --stdout HEAD~1..HEAD | grep -c '^diff'",
    "git archive HEAD | tar -t",
    "git archive --format=tar HEAD src | tar -tv | wc -l",
    "awk '{print > \"/dev/stderr\"}' notes.txt 2>&1",
    'awk \'NR==1{print "first" > "/dev/stdout"; next} {print}\' notes.txt',
    "file *",
    "ls -ld */",
    "fd -e py",
]

HARMFUL = [
    ("git format-patch -1", "writes"),
    ("git archive -o out.tar HEAD", "writes"),
    ("git archive HEAD | tar -x", "writes"),
    ("tar -cf out.tar notes.txt", "writes"),
    ("tar -tf out.tar --to-command=x || tar -cf out.tar notes.txt", "writes"),
    ('python3 -c \'open("PWNED", "w")\'', "writes"),
    ('python3 -c \'open("PWNED", "w")\' -V', "writes"),
    ('awk \'{print > "/dev/stderr" "x"; print > "out"}\' notes.txt', "writes"),
]

REFUSED = [
    ("less '+!touch PWNED' notes.txt", "runs a pager command"),
    ("less -o out notes.txt", "writes a log file"),
    ("more +/x notes.txt", "runs a pager command"),
    ("man ./notes.txt", "system's pages"),
    ("man -l notes.txt", "troff"),
    ("man -P 'touch PWNED' ls", "runs a pager"),
    ("git fsck --lost-found", "lost-found"),
    ("tar -tf host:x.tar", "remote archive"),
    ("tar -t -I gzip", "only `tar -t`"),
    ("fd -x rm", "runs a command"),
    ("python3", "only `python3 --version`"),
]


@pytest.mark.parametrize("command", EVERYDAY)
def test_readers_run_as_bash_would(command: str, scratch: Path) -> None:
    program = command.split()[0]
    if shutil.which(program) is None:
        pytest.skip(f"`{program}` is not installed")
    verdict = classify(command, scratch)
    assert_runs_as_bash_would(command, verdict, scratch)


@pytest.mark.parametrize(("command", "expected"), HARMFUL)
def test_harmful_variants_do_harm_unfiltered_and_are_refused(
    command: str, expected: str, scratch: Path
) -> None:
    assert harm(command, scratch) == expected, f"{command!r} did no {expected}"
    verdict = classify(command, scratch)
    assert not verdict.allowed, f"{command!r} was allowed: {verdict.script}"


@pytest.mark.parametrize(("command", "expected"), REFUSED)
def test_what_would_run_a_program_or_write_says_why(
    command: str, expected: str, scratch: Path
) -> None:
    verdict = classify(command, scratch)
    assert not verdict.allowed
    assert expected in verdict.reason
