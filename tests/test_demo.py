"""``plancord demo`` as a newcomer runs it: a subprocess that tells the whole story, exits 0,
prints nothing on stderr and leaves no temporary directory behind."""

from __future__ import annotations

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
        "🔒 only ana sees: Approved plan v1",
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
        "step 2: Commit it",
        "step 1: Create greet.py with hello(name)",
        "Add app.py",
    ]
    assert "Traceback" not in out
    assert "\x1b[" not in out
    assert list(tmp_path.iterdir()) == []
