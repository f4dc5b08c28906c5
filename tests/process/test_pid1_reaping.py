"""``plancord run`` as a container's PID 1 leaves no zombie: agent commands run in
bubblewrap as they would in the image, in a PID namespace of their own, and the zombies of
that namespace are counted after them."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

#: The script run as process 1 of a new PID namespace: ``COMMANDS`` agent commands through
#: the sandbox (as the bot runs them), then the namespace's zombies counted.
AS_PID_1 = r"""
import json, os, sys, time
from pathlib import Path
from plancord.config import parse_config_text
from plancord.process.init import run_as_init
from plancord.sandbox import layer_in_use, run_attached

def zombies():
    found = 0
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            found += stat.rpartition(")")[2].split()[0] == "Z"
    return found

def main():
    workspace = Path(sys.argv[2])
    policy = parse_config_text("").sandbox.settings(frozenset()).walled(workspace)
    statuses = [run_attached(["/bin/true"], policy) for _ in range(int(sys.argv[3]))]
    time.sleep(0.5)  # process 1 reaps what ends meanwhile
    layer = str(layer_in_use(parse_config_text("").sandbox.layer))
    found = {"pid": os.getpid(), "layer": layer, "statuses": sorted(set(statuses)),
             "zombies": zombies()}
    print(json.dumps(found), flush=True)
    return 0

sys.exit(run_as_init(main) if sys.argv[1] == "init" else main())
"""

COMMANDS = 20


def _pid_namespace() -> list[str]:
    user = [] if os.geteuid() == 0 else ["--user", "--map-root-user"]
    return ["unshare", *user, "--pid", "--fork", "--mount-proc", "--"]


def _run(mode: str, workspace: Path) -> dict[str, object]:
    done = subprocess.run(
        [*_pid_namespace(), sys.executable, "-c", AS_PID_1, mode, str(workspace), str(COMMANDS)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    report: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return report


def _namespaces_work() -> bool:
    if shutil.which("unshare") is None or shutil.which("bwrap") is None:
        return False
    probe = subprocess.run([*_pid_namespace(), "true"], capture_output=True, check=False)
    return probe.returncode == 0


@pytest.mark.skipif(not _namespaces_work(), reason="needs unshare, bubblewrap and namespaces")
def test_agent_commands_under_pid_1_leave_no_zombie(tmp_path: Path) -> None:
    without = _run("plain", tmp_path)
    assert "bubblewrap" in str(without["layer"])
    # The bot itself as process 1 (before): each bubblewrap run leaves its orphan behind.
    assert without["pid"] == 1
    assert isinstance(without["zombies"], int) and without["zombies"] >= COMMANDS

    reaped = _run("init", tmp_path)
    # Process 1 forks the bot and reaps every orphan: none is left.
    assert reaped["pid"] != 1
    assert reaped["statuses"] == [0]
    assert reaped["zombies"] == 0
