"""An MCP server that runs git sees only the allow-listed view of the repository's config,
as the shell and the git tools do: end to end through the real bot.

The repository's ``.git/config`` names a program three ways git obeys on everyday reading
commands (``core.fsmonitor`` for ``git status``, an alias for ``git st``, ``diff.external``
for ``git diff``); a server with the workspace writable runs those commands. The program
would leave a file in the workspace; it must never run. Each way is first shown to work:
plain git on the host, in the same workspace, runs the program.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from plancord.sandbox import Layer, LayerChoice, choose_layer
from plancord.testing.anthropic_server import text_turn
from tests.security.hostile import Hostile
from tests.security.mcp_scene import call, patient, tracker

pytestmark = pytest.mark.skipif(
    choose_layer(LayerChoice.AUTO) is not Layer.BUBBLEWRAP,
    reason="hiding a repository's config needs bubblewrap; elsewhere the server is refused",
)

GIT_COMMANDS = (["git", "status"], ["git", "st"], ["git", "diff"])


def _plant(ws: Path) -> Path:
    """A program that leaves ``ran.txt`` in the workspace, named by the repository's config
    three ways, and a change for ``git diff`` to show."""
    marker = ws / "ran.txt"
    program = ws / "tool.sh"
    program.write_text(f"#!/bin/sh\necho ran >> {marker}\n")
    program.chmod(0o755)
    with (ws / ".git" / "config").open("a") as config:
        config.write(
            f"[core]\n\tfsmonitor = {program}\n[alias]\n\tst = !{program}\n"
            f"[diff]\n\texternal = {program}\n"
        )
    tracked = subprocess.run(
        ["git", "ls-files"], cwd=ws, capture_output=True, text=True, check=True
    ).stdout.split()
    with (ws / tracked[0]).open("a") as changed:
        changed.write("a change for git diff\n")
    return marker


def _host_git_obeys(ws: Path, marker: Path) -> None:
    for argv in GIT_COMMANDS:
        subprocess.run(argv, cwd=ws, capture_output=True, check=False)
        assert marker.exists(), f"{argv} did not run the program on the host"
        marker.unlink()


async def test_a_servers_git_runs_no_program_the_repositorys_config_names(
    hostile: Any,
) -> None:
    config = tracker(trust_hints=True, writable_workspace=True)
    scene: Hostile = await patient(hostile, [], profile="open", config=config)
    marker = _plant(scene.workspace)
    _host_git_obeys(scene.workspace, marker)

    scene.world.server.add_turns(
        *[call("run", argv=argv) for argv in GIT_COMMANDS], text_turn("done")
    )
    await scene.ana.send(scene.channel, "check the repository through the tracker")

    results = scene.tool_results()
    assert len(results) == len(GIT_COMMANDS)
    assert not marker.exists(), marker.read_text()
    status, alias, diff = results
    assert status.startswith("exit 0"), status
    assert "is not a git command" in alias, alias
    assert "a change for git diff" in diff, diff
