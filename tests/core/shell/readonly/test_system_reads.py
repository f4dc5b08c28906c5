"""Reads outside the workspace follow what the sandbox shows, not a list of its own.

What the plan-mode sandbox mounts (``/usr``, the program and library directories, the
``/etc`` entries it binds) may be read, and ``/`` may be listed (``find / -name …``); each
allowed command's rendered script is run in the real plan-mode sandbox and must succeed
there. ``/proc``, ``/sys``, ``/dev`` (but ``/dev/null``), ``~``, what the sandbox does not
mount, and every write except to ``/dev/null`` stay refused. A symlink in the workspace is
followed as far as the sandbox shows and no further.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from plancord.core.shell.readonly import classify
from plancord.sandbox import SandboxPolicy, run_shell

READS = [
    "cat /etc/os-release",
    "awk -F: '{ print $1 }' /etc/passwd",
    "head -3 /usr/share/common-licenses/GPL-3",
    "ls /usr/bin | head -3",
    "ls /",
    "find / -maxdepth 1 -name 'u*'",
    "tree -L 1 -d /",
    "grep -c . /etc/group",
    "wc -l /usr/include/stdio.h",
    "cat link-to-os-release",
]

REFUSED = [
    ("cat /etc/shadow", "outside the workspace"),
    ("cat /etc/ssl/private/key.pem", "private keys"),
    ("cat /proc/self/environ", "`/proc`"),
    ("cat /sys/kernel/hostname", "`/sys`"),
    ("cat /dev/zero", "devices"),
    ("cat ~/.bashrc", "tilde"),
    ("ls /home", "outside the workspace"),
    ("grep -r x /", "outside the workspace"),
    ("cat /", "outside the workspace"),
    ("ls > /usr/x", "writes to a file"),
    ("cat link-to-shadow", "outside the workspace"),
    ("cat /tmp/x", "outside the workspace"),
]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "notes.txt").write_text("a\n")
    (root / "link-to-os-release").symlink_to("/etc/os-release")
    (root / "link-to-shadow").symlink_to("/etc/shadow")
    return root


@pytest.mark.parametrize("command", READS)
async def test_what_the_sandbox_shows_may_be_read(command: str, workspace: Path) -> None:
    verdict = classify(command, workspace)
    assert verdict.allowed, f"{command!r}: {verdict.reason}"
    assert verdict.script is not None
    policy = SandboxPolicy.read_only(workspace).behind_inner_wall()
    result = await run_shell(verdict.script, policy, timeout=30)
    assert result.exit_code == 0, result.output
    assert result.output.strip()


@pytest.mark.parametrize(("command", "expected"), REFUSED)
def test_what_it_hides_and_every_write_stay_refused(
    command: str, expected: str, workspace: Path
) -> None:
    verdict = classify(command, workspace)
    assert not verdict.allowed
    assert expected in verdict.reason
