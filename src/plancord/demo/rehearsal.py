"""``plancord demo`` run for the operator: in a temporary directory removed afterwards, or
kept (``--keep DIR``) as a data directory the shell's commands work on offline, stopped
where the operator wants to practise (``--stop-at plan``: a plan waits for approve or
reject; ``--stop-at result``, the whole story: a result waits for merge or discard), with
the commands to try next printed as they can be pasted."""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path
from typing import TextIO

from plancord.demo import AGENT, quiet, tell, tell_story

#: Where ``--stop-at`` may end the story; the first is the default.
STOPS = ("result", "plan")


def run_demo(out: TextIO | None = None, keep: Path | None = None, stop_at: str = "result") -> int:
    """Run the demo in a temporary directory, removed afterwards, or in ``keep`` (new or
    empty), left there as a data directory the operator commands can read; the exit status."""
    stream = out or sys.stdout
    if keep is None:
        with quiet(), tempfile.TemporaryDirectory(prefix="plancord-demo-") as temp:
            return tell(tell_story(Path(temp) / "data", stream, stop_at=stop_at))
    keep = keep.expanduser().absolute()
    if keep.exists() and (not keep.is_dir() or any(keep.iterdir())):
        print(
            f"plancord demo: --keep {keep} is not a new or empty directory; name another",
            file=sys.stderr,
        )
        return 2
    with quiet():
        status = tell(tell_story(keep, stream, stop_at=stop_at))
    if status == 0:
        print(keep_hints(keep, stop_at, command_name()), file=stream)
    return status


def keep_hints(keep: Path, stop_at: str, plancord: str) -> str:
    """What the kept directory holds and the shell commands to try on it, one a line."""
    run = f"PLANCORD_DATA_DIR={keep} {plancord}"
    agent = f"--agent {AGENT}"
    if stop_at == "plan":
        waiting = "plan v3 waits for a decision (approve it, or reject it)"
        tries = [
            f"{run} plan status {agent}",
            f"{run} plan diff {agent}",
            f"{run} plan approve {agent} --revision 3",
            f"{run} plan reject {agent} --reason 'not now'",
        ]
        after = (
            "After an approval from the shell the agent executes at its next turn in a "
            "running bot; here no bot runs, so plan status then says executing."
        )
    else:
        waiting = "the executed plan's result waits for Merge or Discard"
        tries = [
            f"{run} plan status {agent}",
            f"{run} plan result {agent}",
            f"{run} plan result-diff {agent}",
            f"{run} plan merge {agent}",
            f"{run} plan discard {agent}",
        ]
        after = (
            f"Merge or discard, not both; for the plan instead: plancord demo --keep DIR "
            f"--stop-at plan. git -C {keep}/agents/{AGENT}/workspace log --stat shows the branch."
        )
    lines = [
        "",
        f"kept in {keep}: the database (plancord.db) and the agent's workspace "
        f"(agents/{AGENT}/workspace); {waiting}. Try:",
        f"  {run} agents list",
        *(f"  {line}" for line in tries),
        after,
    ]
    return "\n".join(lines)


def command_name() -> str:
    """How to call ``plancord`` from here: its bare name when the shell finds this one on
    PATH, else the path of the one next to this Python (``.venv/bin/plancord`` when the
    virtual environment is not activated)."""
    beside = Path(sys.executable).parent / "plancord"
    found = shutil.which("plancord")
    if found is not None and Path(found).resolve() == beside.resolve():
        return "plancord"
    if not beside.exists():
        return "plancord"
    try:
        return str(beside.relative_to(Path.cwd()))
    except ValueError:
        return str(beside)
