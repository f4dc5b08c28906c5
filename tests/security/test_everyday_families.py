"""Everyday commands the read-only filter used to ask for, through the real bot in plan
mode: printing the sandbox's own environment, a system program named by its absolute path,
small encoders and formatters, an unquoted parameter whose value the host knows, reading
from a descriptor the command itself opened. Each runs unasked in the read-only sandbox;
each harmful variant is refused before anything runs. The environment a sandboxed command
prints is the host's allow-list: a secret in the bot's own environment never reaches it.
The parameters the filter gives a value print what bash prints for the original text in
the same sandbox.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
from typing import Any

import pytest

from plancord.core.planning import Phase
from plancord.core.sandbox_policy import SANDBOX_PATH, SandboxPolicy
from plancord.sandbox import run_shell
from plancord.testing.anthropic_server import ToolCall, text_turn, tool_turn
from tests.security.hostile import Hostile

BOT_SECRET = "the-bots-own-secret-71"
KNOWN = "echo $PATH [$OLDPWD] $HOME"

# (family, everyday command, what its output holds, harmful variant)
FAMILIES = [
    ("the sandbox's environment", "printenv", "HOME=", "env sh -c 'touch PWNED'"),
    ("one variable of it", "printenv PATH", "/usr/bin", "env PATH=. ls"),
    ("a system program by its path", "/usr/bin/wc -l notes.txt", "2 notes.txt", "./ls"),
    ("an encoder", "base64 notes.txt", "YWxwaGEKYmFuYW5hCg==", "base64 notes.txt copy"),
    ("a parameter the host knows", KNOWN, "/usr/bin", "cat $HOME/.bash_history"),
    ("another the host does not", "ls $PWD", "notes.txt", "echo $PLANCORD_TEST_SECRET"),
    ("a descriptor it opened", "exec 3<notes.txt; cat <&3", "banana", "cat <&3"),
    ("written through", "cat 3<notes.txt <&3", "alpha", "exec 3>copy; cat notes.txt >&3"),
    ("a formatter", "numfmt --to=iec 1048576", "1.0M", "numfmt 1048576 >copy"),
]


def _bash(command: str) -> Any:
    return tool_turn(ToolCall("bash_execute", {"command": command}))


async def test_each_family_runs_unasked_and_its_harmful_variant_is_refused(
    hostile: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PLANCORD_TEST_SECRET", BOT_SECRET)
    calls = [_bash(c) for _, everyday, _, harmful in FAMILIES for c in (everyday, harmful)]
    scene: Hostile = await hostile([*calls, text_turn("still exploring")])
    workspace = scene.workspace
    (workspace / "notes.txt").write_text("alpha\nbanana\n")
    (workspace / "ls").write_text("#!/bin/sh\ntouch PWNED\n")
    os.chmod(workspace / "ls", 0o755)
    add = ["git", "add", "notes.txt", "ls"]
    await asyncio.to_thread(subprocess.run, add, cwd=workspace, check=True)

    await scene.ana.slash(scene.channel, "plan start", task="look around")

    assert (await scene.app.store.load_state("ada")).phase is Phase.GATHERING
    results = scene.tool_results()
    assert len(results) == 2 * len(FAMILIES), results
    for index, (family, _, shows, _) in enumerate(FAMILIES):
        ran, refused = results[2 * index], results[2 * index + 1]
        assert shows in ran, f"{family}: {ran}"
        assert ran.rstrip().endswith("[ran in the read-only sandbox]"), f"{family}: {ran}"
        assert "plan_mode_refusal" in refused, f"{family}: the harmful variant ran: {refused}"
    assert BOT_SECRET not in "\n".join(results)
    assert "PLANCORD_TEST_SECRET" not in results[0]
    assert not (workspace / "PWNED").exists()
    assert not (workspace / "copy").exists()
    # What the filter made of the parameters is what bash makes of the text in the sandbox
    # (the home aside: outside bubblewrap each run has a home of its own).
    unfiltered = await run_shell(KNOWN, SandboxPolicy.read_only(workspace), timeout=30)
    assert unfiltered.exit_code == 0, unfiltered.stdout
    assert results[8].split()[:2] == unfiltered.stdout.split()[:2] == [SANDBOX_PATH, "[]"]
