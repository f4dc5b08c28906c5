"""Loops, ``if`` and ``[[ … ]]`` through the real bot in plan mode: an everyday ``while read``
loop and an ``if`` run without asking, in the read-only sandbox; a loop whose body writes is
refused before anything runs, and its input stage never runs either."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path
from typing import Any

from plancord.core.planning import Phase
from plancord.testing.anthropic_server import ToolCall, text_turn, tool_turn
from tests.security.hostile import Hostile

WHILE_READ = 'git ls-files | while read -r f; do echo "== $f"; head -1 "$f"; done'
IF = "if [[ -f notes.txt ]]; then wc -l notes.txt; else echo none; fi"
HARMFUL = 'while read -r f; do rm "$f"; done < list'


def _bash(command: str) -> Any:
    return tool_turn(ToolCall("bash_execute", {"command": command}))


def _files(workspace: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(workspace)): p.read_bytes()
        for p in sorted(workspace.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(workspace).parts
    }


async def test_everyday_loops_and_ifs_run_in_plan_mode_and_a_writing_loop_is_refused(
    hostile: Any,
) -> None:
    script = [_bash(WHILE_READ), _bash(IF), _bash(HARMFUL), text_turn("still exploring")]
    scene: Hostile = await hostile(script)
    workspace = scene.workspace
    (workspace / "notes.txt").write_text("alpha\nbanana\n")
    (workspace / "list").write_text("notes.txt\n")
    add = ["git", "add", "notes.txt", "list"]
    await asyncio.to_thread(subprocess.run, add, cwd=workspace, check=True)
    before = _files(workspace)
    await scene.ana.slash(scene.channel, "plan start", task="look around")
    assert (await scene.app.store.load_state("ada")).phase is Phase.GATHERING
    loop, clause, harmful = scene.tool_results()  # three results: nothing waited for a click
    assert "== list\nnotes.txt\n== notes.txt\nalpha\n" in loop, loop
    assert loop.rstrip().endswith("[exit code 0] [ran in the read-only sandbox]"), loop
    assert clause.startswith("2 notes.txt\n[exit code 0]"), clause
    assert "plan_mode_refusal" in harmful
    assert "`rm` changes files" in harmful
    assert "exit code" not in harmful
    assert _files(workspace) == before
