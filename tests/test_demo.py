"""``plancord demo`` as a newcomer runs it: a subprocess that tells the whole story, exits 0,
prints nothing on stderr and leaves no temporary directory behind."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path


def test_the_demo_tells_the_whole_story(tmp_path: Path) -> None:
    env = {**os.environ, "TMPDIR": str(tmp_path), "PYTHONWARNINGS": "default"}
    env.pop("DISCORD_TOKEN", None)
    env.pop("ANTHROPIC_API_KEY", None)

    done = subprocess.run(
        [sys.executable, "-m", "plancord.cli", "demo"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )

    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stderr == ""
    out = done.stdout
    beats = [
        "ana types /plan start task:add a greeting module",
        "🔧 view README.md",
        "🔧 bash_execute ls && git log --oneline",
        "⛔ create_file greet.py",
        "refused: mutating tool in plan mode",
        "┌─ Plan: Add a greeting module",
        "🟢 Step 1 · low risk",
        "🟡 Step 2 · medium risk",
        "· requested by ana",
        "🔒 only bob sees: Only the requester (ana) or server administrators can approve",
        "ana clicks Edit: say which commit message you will use",
        "🔒 only ana sees: Sent plan v1 back to ada with your feedback.",
        "Changes since v1: 1 step reworded",
        "└─ v2 ·",
        "🔒 only ana sees: Approved plan v2",
        "✅ step 1 done",
        "✅ 2. Commit it",
        "greet.py | 2 ++",
        "git log --oneline:",
        "🎉 complete",
    ]
    positions = [out.find(beat) for beat in beats]
    assert all(p >= 0 for p in positions), [
        b for b, p in zip(beats, positions, strict=True) if p < 0
    ]
    assert positions == sorted(positions)
    log = out[out.index("git log --oneline:") :].splitlines()[1:4]
    assert [re.fullmatch(r"\s+[0-9a-f]{7,} (.+)", line) is not None for line in log] == [True] * 3
    assert [line.split(maxsplit=1)[1] for line in log] == [
        "Add greeting module",
        "Add app.py",
        "Initial commit",
    ]
    assert "Traceback" not in out
    assert "\x1b[" not in out
    assert list(tmp_path.iterdir()) == []


def test_demo_keep_leaves_a_data_directory_the_operator_commands_read(tmp_path: Path) -> None:
    kept = tmp_path / "kept"
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    env.pop("DISCORD_TOKEN", None)
    env.pop("ANTHROPIC_API_KEY", None)

    def plancord(*args: str, **extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "plancord.cli", *args],
            capture_output=True,
            text=True,
            env={**env, **extra},
            timeout=60,
            check=False,
        )

    done = plancord("demo", "--keep", str(kept))
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"PLANCORD_DATA_DIR={kept} plancord agents list" in done.stdout
    assert kept.stat().st_mode & 0o777 == 0o700
    assert (kept / "plancord.db").stat().st_mode & 0o777 == 0o600
    assert (kept / "agents" / "ada" / "workspace" / "greet.py").is_file()

    listed = plancord("agents", "list", "--json", PLANCORD_DATA_DIR=str(kept))
    assert listed.returncode == 0, listed.stderr
    assert [(a["name"], a["phase"]) for a in json.loads(listed.stdout)] == [("ada", "inactive")]
    status = plancord("plan", "status", "--agent", "ada", PLANCORD_DATA_DIR=str(kept))
    assert status.returncode == 0, status.stderr
    assert status.stdout.startswith("agent ada: inactive")
    diff = plancord("plan", "diff", "--agent", "ada", PLANCORD_DATA_DIR=str(kept))
    assert diff.returncode == 0, diff.stderr
    assert diff.stdout.startswith("# Changes from v1 to v2")
    assert "say which commit message you will use" in diff.stdout
