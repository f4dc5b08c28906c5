"""Everyday exploration an agent runs, judged and run for real in the scratch repository.

The commands the issue names (``tree -L 2``, ``date -u +%F``, ``uname -a``, ``ps``, ``id``,
``git -C src log``, ``git config user.email``, ``git tag --contains``, ``git branch
--no-color``, ``sha256sum -c``) are allowed, and the script the filter renders runs, ends,
exits 0 and does no harm. Their harmful neighbours (``tree -o``, ``ps e``) do harm when run
unfiltered and are refused; what cannot be run safely here (``date -s`` would set this
machine's clock) is checked for its reason only.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from plancord.core.shell.readonly import classify
from tests.core.shell.readonly.scratch import Listener, harm, require_program, run

EVERYDAY = [
    "tree -L 2",
    "tree -aL 1 src",
    "tree -d --noreport",
    "tree --dirsfirst -L 2 -I vendor .",
    "tree -J -L 1",
    "date -u +%F",
    "date",
    "date -d '2024-01-01 12:00' +%s",
    "date -Iseconds -u",
    "date -r notes.txt +%F",
    "uname -a",
    "uname -sr",
    "id",
    "id -un",
    "ps",
    "ps aux",
    "ps -ef",
    "ps -eo pid,comm",
    "git -C src log --oneline",
    "git -C src status --short",
    "git config user.email",
    "git config --get user.email",
    "git config --list",
    "git tag --contains HEAD",
    "git tag -l 'v*'",
    "git tag -n",
    "git branch --no-color",
    "git branch --contains HEAD",
    "sha256sum notes.txt data.txt > /dev/null && sha256sum -c SUMS",
    "md5sum -c --quiet MD5SUMS",
]

HARMFUL = [
    ("tree -o out", "writes"),
    ("tree -Lo 1 out", "writes"),
    ("tree -ao out", "writes"),
    ("tree --noreport -o out src", "writes"),
    ("tree -L 1 -o out -- src", "writes"),
    ("ps axe", "secret"),
    ("ps eax", "secret"),
    ("ps axeww", "secret"),
    ("ps xe", "secret"),
    ("ps -e e", "secret"),
]

REASONS = [
    ("date -s 2020-01-01", "sets the system clock"),
    ("date 010101012020", "sets the system clock"),
    ("date --set=now", "sets the system clock"),
    ("sha256sum -c < SUMS", "standard input"),
    ("sha256sum -c OUTSIDE", "`/proc`"),
    ("sha256sum -c INDENTED", "`/proc`"),
    ("sha256sum -c COMMENTED", "cannot read"),
    ("git config user.email x@example.com", "change configuration"),
    ("git tag v2", "only listing forms"),
    ("git -C /usr/share log", "outside the workspace"),
    ("git -C vendor/lib.git log", "another git repository"),
    ("tree -R -H . -L 1", "writes an HTML file"),
    ("tree --fromfile paths.txt", "reads the paths"),
    ("uname -a extra", "takes no operands"),
]


@pytest.fixture
def sums(scratch: Path) -> Path:
    (scratch / "SUMS").write_text(run("sha256sum notes.txt data.txt", scratch).output.decode())
    (scratch / "MD5SUMS").write_text(run("md5sum --tag notes.txt", scratch).output.decode())
    (scratch / "OUTSIDE").write_text("0" * 64 + "  /proc/self/environ\n")
    (scratch / "INDENTED").write_text(" \t" + "0" * 64 + " */proc/self/environ\n")
    (scratch / "COMMENTED").write_text("# a list\n")
    return scratch


@pytest.mark.parametrize("command", EVERYDAY)
def test_everyday_commands_are_allowed_and_run(command: str, sums: Path) -> None:
    require_program(command)
    verdict = classify(command, sums)
    assert verdict.allowed, f"{command!r}: {verdict.reason}"
    assert verdict.script is not None
    result = run(verdict.script, sums)
    assert result.harm is None, f"{command!r} did {result.harm}"
    assert result.returncode == 0, result.output.decode(errors="replace")


@pytest.mark.parametrize(("command", "expected"), HARMFUL)
def test_their_harmful_neighbours_do_harm_and_are_refused(
    command: str, expected: str, scratch: Path, listener: Listener
) -> None:
    require_program(command)
    verdict = classify(command, scratch)
    assert harm(command, scratch, listener) == expected, f"{command!r} did no {expected}"
    assert not verdict.allowed, f"{command!r} was allowed: {verdict.reason}"


@pytest.mark.parametrize(("command", "expected"), REASONS)
def test_what_cannot_run_here_is_refused_with_its_reason(
    command: str, expected: str, sums: Path
) -> None:
    verdict = classify(command, sums)
    assert not verdict.allowed
    assert expected in verdict.reason
