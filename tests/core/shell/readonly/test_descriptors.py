"""Reading from a descriptor the command line itself holds: ``3<FILE`` on the command,
``exec 3<FILE`` for the commands after it, then ``<&3``. Each everyday form runs as bash
runs the original text; each harmful variant (a descriptor written through, a file opened
for writing, a read the filter would refuse as a plain ``<``) does its harm unfiltered and
is refused; a descriptor the line did not open is refused, and the script closes every
descriptor it reads from before anything runs, so a failed ``exec`` leaves nothing
inherited to read.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from plancord.core.shell.readonly import classify
from tests.core.shell.readonly.scratch import Listener, assert_runs_as_bash_would, clean_env, harm

EVERYDAY = [
    "cat 3<notes.txt <&3",
    "exec 3<notes.txt; cat <&3",
    "exec 3<notes.txt && wc -l <&3",
    "cat <&0 <notes.txt",
    "exec 3<notes.txt 4<data.txt; head -1 <&3; tail -1 <&4",
    "grep -c a 5<notes.txt 0<&5",
    "exec 3<notes.txt\nsort -r <&3 | head -2",
    "exec 3<notes.txt; cat <&3; exec 3<&-",
]

HARMFUL = [
    ("exec 3>out; cat notes.txt >&3", "writes"),
    ("exec 3<notes.txt 4>out; cat <&3 >&4", "writes"),
    ("cat notes.txt 3>out >&3", "writes"),
    ("exec 3<>out", "writes"),
    ("exec 3</proc/self/environ; cat <&3", "secret"),
    ("exec 3<notes.txt; cat <&3 >out", "writes"),
    ("exec 3<notes.txt sh -c 'touch PWNED'", "writes"),
]

REFUSED = [
    ("cat <&3", "did not open"),
    ("exec 3<notes.txt; cat <&4", "did not open"),
    ("cat <&3 3<notes.txt", "did not open"),
    ("exec >/dev/null; ls", "`exec` may only hold"),
    ("exec 3<notes.txt; cat 1<&3", "output one"),
    ("cat <&10", "not a descriptor"),
    ("cat 12<notes.txt", "descriptors 3 to 9"),
]


@pytest.mark.parametrize("command", EVERYDAY)
def test_a_descriptor_the_line_opened_is_read_as_bash_reads_it(command: str, scratch: Path) -> None:
    verdict = classify(command, scratch)
    judged = assert_runs_as_bash_would(command, verdict, scratch)
    assert judged.returncode == 0, judged.output


@pytest.mark.parametrize(("command", "expected"), HARMFUL)
def test_writing_through_a_descriptor_does_harm_unfiltered_and_is_refused(
    command: str, expected: str, scratch: Path, listener: Listener
) -> None:
    assert harm(command, scratch, listener) == expected, f"{command!r} did no {expected}"
    verdict = classify(command, scratch)
    assert not verdict.allowed, f"{command!r} was allowed: {verdict.script}"


@pytest.mark.parametrize(("command", "expected"), REFUSED)
def test_a_descriptor_not_opened_for_reading_says_why(
    command: str, expected: str, scratch: Path
) -> None:
    verdict = classify(command, scratch)
    assert not verdict.allowed
    assert expected in verdict.reason


def test_a_failed_exec_leaves_no_inherited_descriptor_to_read(
    scratch: Path, tmp_path: Path
) -> None:
    """The process starts holding descriptor 3 on a file of the host; the line's ``exec``
    fails (no such file), so bash alone would read the host's file. The judged script
    closes 3 first: the read fails and nothing of the host's file is printed."""
    inherited = tmp_path / "host-only.txt"
    inherited.write_text("the host's own text\n")
    command = "exec 3<missing.txt; cat <&3"
    verdict = classify(command, scratch)
    assert verdict.allowed, verdict.reason
    assert verdict.script is not None and verdict.script.startswith("exec 3<&-\n")

    def run_holding_3(script: str) -> str:
        with inherited.open() as held:
            return subprocess.run(
                ["bash", "-c", f"exec 3<&{held.fileno()}; {script}"],
                cwd=scratch,
                env=clean_env(),
                capture_output=True,
                text=True,
                pass_fds=(held.fileno(),),
                check=False,
            ).stdout

    assert "the host's own text" in run_holding_3(command)  # the original would read it
    assert "the host's own text" not in run_holding_3(verdict.script)
