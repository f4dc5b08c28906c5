"""``plancord demo`` as a newcomer runs it: a subprocess that tells the whole story, exits 0,
prints nothing on stderr and leaves no temporary directory behind; a slow step still
finishes, and one that never does, or a Ctrl-C, ends in one line naming ``plancord doctor``."""

from __future__ import annotations

import asyncio
import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from plancord.demo import quiet, story_script, tell, tell_story
from plancord.testing.anthropic_server import Turn
from plancord.testing.fake_api.wire import JsonObject

#: How long a whole demo subprocess may take: its own steps may take up to two minutes each
#: on a loaded machine before the story stops.
DEMO_SECONDS = 240

#: The model request that follows ana's Approve: the first of the execution.
FIRST_EXECUTING_REQUEST = 6


def slowed(turns: Sequence[Turn], request: int, seconds: float) -> object:
    """``turns`` played in order, request number ``request`` answered only after ``seconds``
    of real time spent off the event loop, as a slow sandbox start or git would."""
    left = list(turns)
    served = 0

    async def play(body: JsonObject) -> Turn | None:
        nonlocal served
        served += 1
        if served == request:
            await asyncio.to_thread(time.sleep, seconds)
        return left.pop(0) if left else None

    return play


def test_the_demo_tells_the_whole_story(tmp_path: Path) -> None:
    env = {**os.environ, "TMPDIR": str(tmp_path), "PYTHONWARNINGS": "default"}
    env.pop("DISCORD_TOKEN", None)
    env.pop("ANTHROPIC_API_KEY", None)

    done = subprocess.run(
        [sys.executable, "-m", "plancord.command.main", "demo"],
        capture_output=True,
        text=True,
        env=env,
        timeout=DEMO_SECONDS,
        check=False,
    )

    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stderr == ""
    out = done.stdout
    assert out.splitlines()[0].startswith("agent sandbox: ")
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
        "ana taps Edit directly and rewords step 1",
        "🔒 only ana sees: Edited plan v2 into v3",
        "Changes since v2 (by ana (direct edit)): 1 step reworded",
        "└─ v3 ·",
        "🔒 only ana sees: Approved plan v3",
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


def shell_without_the_venv(tmp_path: Path) -> dict[str, str]:
    """The environment of a shell where the virtual environment is not activated: its
    programs are not on PATH, and no token or key is set."""
    venv_bin = Path(sys.executable).parent
    path = os.pathsep.join(
        p for p in os.environ["PATH"].split(os.pathsep) if p and Path(p) != venv_bin
    )
    env = {**os.environ, "TMPDIR": str(tmp_path), "PATH": path}
    env.pop("DISCORD_TOKEN", None)
    env.pop("ANTHROPIC_API_KEY", None)
    return env


def hints(out: str) -> list[str]:
    """The commands the kept demo prints to try, as they would be pasted."""
    return [line[2:] for line in out[out.index("\nkept in ") :].splitlines() if line[:2] == "  "]


def pasted(hint: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-c", hint], capture_output=True, text=True, env=env, cwd=cwd, check=False
    )


def test_demo_keep_leaves_a_data_directory_the_operator_commands_read(tmp_path: Path) -> None:
    kept = tmp_path / "kept"
    venv_bin = Path(sys.executable).parent
    env = shell_without_the_venv(tmp_path)

    def plancord(*args: str, **extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "plancord.command.main", *args],
            capture_output=True,
            text=True,
            env={**env, **extra},
            cwd=tmp_path,
            timeout=DEMO_SECONDS,
            check=False,
        )

    done = plancord("demo", "--keep", str(kept), "--stop-at", "result")
    assert done.returncode == 0, done.stdout + done.stderr
    run = f"PLANCORD_DATA_DIR={kept} {venv_bin / 'plancord'}"
    tries = hints(done.stdout)
    assert tries == [
        f"{run} agents list",
        f"{run} plan status --agent ada",
        f"{run} plan result --agent ada",
        f"{run} plan result-diff --agent ada",
        f"{run} plan merge --agent ada",
        f"{run} plan discard --agent ada",
    ]
    assert "the executed plan's result waits for Merge or Discard" in done.stdout
    hinted = pasted(tries[0], env, tmp_path)
    assert hinted.returncode == 0, hinted.stderr
    assert "ada" in hinted.stdout and "inactive" in hinted.stdout
    assert kept.stat().st_mode & 0o777 == 0o700
    assert (kept / "plancord.db").stat().st_mode & 0o777 == 0o600
    assert (kept / "agents" / "ada" / "workspace" / "greet.py").is_file()

    listed = plancord("agents", "list", "--json", PLANCORD_DATA_DIR=str(kept))
    assert listed.returncode == 0, listed.stderr
    assert [(a["name"], a["phase"]) for a in json.loads(listed.stdout)] == [("ada", "inactive")]
    status = pasted(tries[1], env, tmp_path)
    assert status.returncode == 0, status.stderr
    assert status.stdout.startswith("agent ada: inactive")
    assert "result waiting for a decision: plan v3" in status.stdout
    diff = plancord("plan", "diff", "--agent", "ada", "1", "2", PLANCORD_DATA_DIR=str(kept))
    assert diff.returncode == 0, diff.stderr
    assert diff.stdout.startswith("# Changes from v1 to v2")
    assert "say which commit message you will use" in diff.stdout
    edit = plancord("plan", "diff", "--agent", "ada", PLANCORD_DATA_DIR=str(kept))
    assert edit.returncode == 0, edit.stderr
    assert edit.stdout.startswith("# Changes from v2 to v3\n\nWritten by ana (direct edit).")
    assert "hello(name) **returning the greeting**" in edit.stdout

    result = pasted(tries[2], env, tmp_path)
    assert result.returncode == 0, result.stderr
    assert "state: waiting for a decision" in result.stdout
    assert "   create_file greet.py" in result.stdout
    assert "tool:" not in result.stdout
    whole = pasted(tries[3], env, tmp_path)
    assert whole.returncode == 0, whole.stderr
    assert "+++ b/greet.py" in whole.stdout

    # Merge in one copy of the kept directory, Discard in another: each as printed.
    for verb, hint in (("merge", tries[4]), ("discard", tries[5])):
        copy = tmp_path / verb
        shutil.copytree(kept, copy, symlinks=True)
        decided = pasted(hint.replace(str(kept), str(copy)), env, tmp_path)
        assert decided.returncode == 0, decided.stdout + decided.stderr
        base = subprocess.run(
            ["git", "-C", str(copy / "agents/ada/workspace"), "log", "--format=%s", "main"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.splitlines()
        assert ("Add greeting module" in base) is (verb == "merge"), (verb, base)
        again = pasted(hint.replace(str(kept), str(copy)), env, tmp_path)
        assert again.returncode == 1 and again.stderr.startswith("plancord: "), again.stderr


def test_demo_stopped_at_the_plan_leaves_it_for_the_shells_approve_or_reject(
    tmp_path: Path,
) -> None:
    kept = tmp_path / "kept"
    env = shell_without_the_venv(tmp_path)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "plancord.command.main",
            "demo",
            "--keep",
            str(kept),
            "--stop-at",
            "plan",
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=DEMO_SECONDS,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stderr == ""
    assert "⏸ stopped at the plan: v3 waits for a decision" in done.stdout
    assert "ana clicks Approve on v3" not in done.stdout
    tries = hints(done.stdout)
    assert [t.split(" ", 2)[2] for t in tries] == [
        "agents list",
        "plan status --agent ada",
        "plan diff --agent ada",
        "plan approve --agent ada --revision 3",
        "plan reject --agent ada --reason 'not now'",
    ]
    status = pasted(tries[1], env, tmp_path)
    assert status.stdout.startswith("agent ada: submitted"), status.stdout + status.stderr

    approve_copy, reject_copy = tmp_path / "approve", tmp_path / "reject"
    shutil.copytree(kept, approve_copy, symlinks=True)
    shutil.copytree(kept, reject_copy, symlinks=True)
    approved = pasted(tries[3].replace(str(kept), str(approve_copy)), env, tmp_path)
    assert approved.returncode == 0, approved.stderr
    assert approved.stdout.startswith("approved plan v3 ")
    rejected = pasted(tries[4].replace(str(kept), str(reject_copy)), env, tmp_path)
    assert rejected.returncode == 0, rejected.stderr
    assert rejected.stdout.startswith("rejected plan v3 ")
    for copy, phase in ((approve_copy, "executing"), (reject_copy, "inactive")):
        shown = pasted(tries[1].replace(str(kept), str(copy)), env, tmp_path)
        assert shown.stdout.startswith(f"agent ada: {phase}"), shown.stdout
    assert "audited as operator" in approved.stdout


def test_a_step_that_takes_more_than_ten_seconds_still_ends_the_story(tmp_path: Path) -> None:
    out = io.StringIO()
    script = slowed(story_script(), FIRST_EXECUTING_REQUEST, 11.0)
    with quiet():
        status = tell(tell_story(tmp_path / "data", out, script=script))  # type: ignore[arg-type]
    assert status == 0, out.getvalue()
    assert "🎉 complete" in out.getvalue()


def test_a_step_that_never_ends_is_one_line_naming_doctor(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = io.StringIO()
    script = slowed(story_script(), FIRST_EXECUTING_REQUEST, 4.0)
    with quiet():
        story = tell_story(tmp_path / "data", out, script=script, settle_seconds=1.0)  # type: ignore[arg-type]
        status = tell(story, settle_seconds=1.0)
    assert status == 1
    said = capsys.readouterr()
    assert said.err.splitlines() == [
        "plancord demo: a step took longer than 1 s and the story stopped; the machine may be "
        "overloaded or its sandbox slow to start: plancord doctor checks the setup"
    ]
    assert "🎉" not in out.getvalue()


def test_ctrl_c_during_the_demo_is_one_line_naming_doctor(tmp_path: Path) -> None:
    env = {**os.environ, "TMPDIR": str(tmp_path), "PYTHONUNBUFFERED": "1"}
    env.pop("DISCORD_TOKEN", None)
    env.pop("ANTHROPIC_API_KEY", None)
    demo = subprocess.Popen(
        [sys.executable, "-m", "plancord.command.main", "demo"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert demo.stdout is not None
    seen = []
    for line in demo.stdout:
        seen.append(line)
        if "ana types /plan start" in line:
            break
    assert seen and "ana types /plan start" in seen[-1], "".join(seen)
    demo.send_signal(signal.SIGINT)
    rest, err = demo.communicate(timeout=120)

    assert demo.returncode == 130, err
    assert err.splitlines() == [
        "plancord demo: stopped (Ctrl-C) before the story ended; if a step seemed stuck, "
        "plancord doctor checks the setup"
    ]
    assert "🎉" not in rest
    assert list(tmp_path.iterdir()) == []
