"""Reads outside the workspace follow what the sandbox shows, not a list of its own.

What the plan-mode sandbox mounts (``/usr``, the program and library directories, the
``/etc`` entries it binds) may be read; each allowed command's rendered script is run in the
real plan-mode sandbox and must succeed there. Anywhere else the sandbox shows nothing but
the directories leading to what it mounts: a read there (``cd .. && git status``,
``realpath ../lib``, ``cat /etc/shadow``, a link out of the workspace) is allowed, noted as
relying on the sandbox's view, and run in the real sandbox it reaches nothing of the host
(not a secret beside the workspace, not a hostile repository around it, whose configuration
names a program) and does what bash does with the text as written there. Where no sandbox
layer hides the host the same verdict asks. ``/proc``, ``/sys``, ``/dev`` (but
``/dev/null``), ``~``, a glob outside the workspace, git anywhere outside but a directory
the workspace lies in, and every write except to ``/dev/null`` stay refused.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from plancord.core.shell.readonly import classify
from plancord.sandbox import SandboxPolicy, run_shell
from tests.core.shell.readonly.scratch import git

SECRET = "beside-the-workspace-7e57"

READS = [
    "cat /etc/os-release",
    "awk -F: '{ print $1 }' /etc/passwd",
    "head -3 /usr/share/common-licenses/GPL-3",
    "ls /usr/bin | head -3",
    "find /usr -maxdepth 1 -name 'b*'",
    "grep -c . /etc/group",
    "wc -l /usr/include/stdio.h",
    "cat link-to-os-release",
]

HIDDEN = [
    "cd .. && git status",
    "cd .. && git log -1",
    "git -C .. status",
    "cd .. && ls",
    "cd .. && cat secret",
    "cat ../secret",
    "realpath ../lib",
    "grep -rn beside ..",
    "cat link-to-secret",
    "cat /etc/shadow",
    "ls /home",
    "ls /",
    "find / -maxdepth 1 -name 'u*'",
    "tree -L 1 -d /",
    "cat /tmp/x",
    "cd .. && cat ws/notes.txt",
    "cd up && git status",
    "cat up/secret",
]

REFUSED = [
    ("cat /etc/ssl/private/key.pem", "private keys"),
    ("cat /proc/self/environ", "`/proc`"),
    ("cat /sys/kernel/hostname", "`/sys`"),
    ("cat /dev/zero", "devices"),
    ("cat ~/.bashrc", "tilde"),
    ("ls > /usr/x", "writes to a file"),
    ("ls > ../out", "writes to a file"),
    ("cd .. && sort -o out secret", "writes its output to a file"),
    ("tee ../x", "writes files"),
    ("find .. -fprint ../x", "writes to a file"),
    ("cd .. && cp secret ws/", "changes files"),
    ("cd .. && git status && touch x", "changes files"),
    ("git -C .. init", "changes the repository"),
    ("cd .. && git log --output=x", "writes to a file"),
    ("cd .. && ls *", "outside the workspace"),
    ("ls ../*", "outside the workspace"),
    ("git -C /usr/share log", "outside the workspace"),
    ("cd .. && sha256sum -c sums", "outside the workspace"),
    ("cat link-to-proc", "`/proc`"),
    ("cd - && ls", "`cd -`"),
]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A workspace inside a hostile directory: a secret beside it, and around it a repository
    whose configuration runs a program on `git status` and `git log`."""
    root = tmp_path / "ws"
    root.mkdir()
    (root / "notes.txt").write_text("a\n")
    (root / "link-to-os-release").symlink_to("/etc/os-release")
    (root / "link-to-secret").symlink_to(tmp_path / "secret")
    (root / "link-to-proc").symlink_to("/proc/self/environ")
    (root / "up").symlink_to("..")
    (tmp_path / "secret").write_text(f"{SECRET}\n")
    git(tmp_path, "init", "-q")
    with (tmp_path / ".git" / "config").open("a") as config:
        config.write(f"[core]\n\tfsmonitor = touch {tmp_path / 'RAN'}\n")
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


@pytest.mark.parametrize("command", HIDDEN)
async def test_a_read_outside_is_allowed_and_the_sandbox_shows_nothing_of_the_host(
    command: str, workspace: Path
) -> None:
    verdict = classify(command, workspace)
    assert verdict.allowed, f"{command!r}: {verdict.reason}"
    assert verdict.outside_view, command
    assert verdict.script is not None
    unhidden = verdict.without_view()
    assert not unhidden.allowed
    assert "no sandbox layer hides the host" in unhidden.reason
    policy = SandboxPolicy.read_only(workspace).behind_inner_wall()
    result = await run_shell(verdict.script, policy, timeout=30)
    assert SECRET not in result.output
    assert not (workspace.parent / "RAN").exists(), result.output
    as_written = await run_shell(command, policy, timeout=30)  # bash reading the text itself
    assert (result.exit_code, result.output) == (as_written.exit_code, as_written.output)


def test_the_same_reads_reach_the_host_without_the_sandbox(workspace: Path) -> None:
    """What the sandbox holds back: run unsandboxed, the host's secret and repository are
    there (so the test above would see them if the sandbox did not hide them)."""
    import subprocess

    found = subprocess.run(
        ["bash", "-c", "cd .. && cat secret && git status"],
        cwd=workspace,
        capture_output=True,
        text=True,
        check=False,
    )
    assert SECRET in found.stdout
    assert (workspace.parent / "RAN").exists()


@pytest.mark.parametrize(("command", "expected"), REFUSED)
def test_what_it_hides_and_every_write_stay_refused(
    command: str, expected: str, workspace: Path
) -> None:
    verdict = classify(command, workspace)
    assert not verdict.allowed
    assert expected in verdict.reason
