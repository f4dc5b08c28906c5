"""What runs without a human's Allow runs read-only and offline, whatever the filter judged.

Played through the real bot under SimCord with a scripted model, ``standard`` profile,
outside plan mode. The filter is replaced by one that judges every command read-only (the
worst mistake it could make); each command below, taken from its program's manual, then runs
without asking, and must leave the workspace as it was and say that a write was refused.
The positive control sends the same command with ``write: true``: a human is asked, clicks
Allow, and the command does write, through the same tool and the same sandbox runner.
"""

from __future__ import annotations

import asyncio
import hashlib
import socket
from pathlib import Path
from typing import Any

import pytest

from plancord.agent.tools import shell
from plancord.core.shell.readonly import Verdict
from plancord.testing.anthropic_server import ToolCall, text_turn, tool_turn
from tests.security.hostile import Hostile

#: (command, the file it writes): each writes when run writable.
UNASKED_WRITES = [
    # The two of the issue: awk's regex-versus-division ambiguity, xxd's operand order.
    ("""awk 'BEGIN { if (1) /"/; print "x" > "F"; if (1) /"/ }'""", "F"),
    ("xxd README.md -i", "-i"),
    # sort(1): -o FILE writes the result to FILE.
    ("sort -o sorted.txt notes.txt", "sorted.txt"),
    # sed(1): -i edits files in place.
    ("sed -i s/alpha/omega/ notes.txt", "notes.txt"),
    # find(1): -fprint FILE writes the names to FILE.
    ("find . -maxdepth 0 -fprint found.txt", "found.txt"),
    # git-diff(1), shared by git log: --output=FILE.
    ("git log -1 --output=log.txt", "log.txt"),
    # tee(1): copies standard input to each FILE.
    ("tee copy.txt < notes.txt", "copy.txt"),
]


def _state(workspace: Path) -> dict[str, str]:
    return {
        str(p.relative_to(workspace)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(workspace.rglob("*"))
        if p.is_file()
    }


@pytest.fixture
def filter_says_read_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """The read-only filter judges every command read-only and lets its text run."""

    def wrong(command: str, workspace: Path, rules: object = ()) -> Verdict:
        return Verdict(True, "read-only: (a filter that is always wrong)", script=command)

    monkeypatch.setattr(shell, "judge_staged", wrong)


def _bash(command: str, **extra: Any) -> Any:
    return tool_turn(ToolCall("bash_execute", {"command": command, **extra}))


async def _scene(hostile: Any, script: list[Any], **options: Any) -> Hostile:
    scene: Hostile = await hostile([*script, text_turn("done")], **options)
    (scene.workspace / "notes.txt").write_text("alpha\nbanana\n")
    return scene


@pytest.mark.usefixtures("filter_says_read_only")
@pytest.mark.parametrize(("command", "written"), UNASKED_WRITES, ids=[w for _, w in UNASKED_WRITES])
async def test_a_command_judged_read_only_runs_unasked_and_cannot_write(
    hostile: Any, command: str, written: str
) -> None:
    scene = await _scene(hostile, [_bash(command)])
    before = _state(scene.workspace)
    await scene.ana.send(scene.channel, "have a look at the notes")
    [result] = scene.tool_results()
    assert "[ran in the read-only sandbox]" in result
    assert "read-only sandbox: a write was refused" in result
    assert "write=true" in result
    assert _state(scene.workspace) == before
    assert not any("Allow" in str(m.components) for m in scene.channel.history())


@pytest.mark.usefixtures("filter_says_read_only")
@pytest.mark.parametrize(("command", "written"), UNASKED_WRITES, ids=[w for _, w in UNASKED_WRITES])
async def test_positive_control_with_a_humans_allow_the_same_command_writes(
    hostile: Any, command: str, written: str
) -> None:
    scene = await _scene(hostile, [_bash(command, write=True)])
    before = _state(scene.workspace)
    await scene.ana.send(scene.channel, "have a look at the notes")
    request = scene.channel.last_message
    await scene.ana.click(request, label="Allow")
    [result] = scene.tool_results()
    assert "read-only sandbox" not in result
    assert _state(scene.workspace).get(written) != before.get(written)


async def test_a_write_request_is_refused_in_plan_mode(hostile: Any) -> None:
    scene: Hostile = await hostile([_bash("touch f", write=True), text_turn("still exploring")])
    await scene.ana.slash(scene.channel, "plan start", task="look around")
    [result] = scene.tool_results()
    assert "the call asks to write (`write: true`)" in result
    assert not (scene.workspace / "f").exists()


class _Listener:
    """A loopback TCP server on the host that records whether anything connected."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen()
        self.sock.setblocking(False)
        self.port = self.sock.getsockname()[1]

    def reached(self) -> bool:
        try:
            connection, _ = self.sock.accept()
        except BlockingIOError:
            return False
        connection.close()
        return True


@pytest.mark.usefixtures("filter_says_read_only")
@pytest.mark.parametrize("asked", [False, True], ids=["unasked", "control-allowed"])
async def test_an_unasked_command_has_no_network_even_for_a_network_agent(
    hostile: Any, asked: bool
) -> None:
    listener = _Listener()
    command = f"echo hi > /dev/tcp/127.0.0.1/{listener.port}"
    config = {"agents": {"ada": {"network": True}}}
    try:
        scene = await _scene(
            hostile, [_bash(command, **({"write": True} if asked else {}))], config=config
        )
        await scene.ana.send(scene.channel, "check the service")
        if asked:
            await scene.ana.click(scene.channel.last_message, label="Allow")
        await asyncio.sleep(0.1)
        [result] = scene.tool_results()
        assert listener.reached() is asked
        assert ("[exit code 0]" in result) is asked
    finally:
        listener.sock.close()
