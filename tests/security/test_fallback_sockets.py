"""Under the Landlock fallback a plan-mode command reaches no unix socket and sends no UDP.

The fallback has no network namespace, and Landlock leaves non-TCP sockets alone: its
seccomp filter (``socket_filter``) closes them. Played through the real bot under SimCord
with the fallback layer forced, in plan mode, with a filter that judges every command
read-only; the positive control runs the same command on the host, where it reaches the
test's socket.
"""

from __future__ import annotations

import asyncio
import socket
import subprocess
from pathlib import Path
from typing import Any

import pytest

from plancord.agent.tools import shell
from plancord.core.sandbox_policy import LayerChoice, SandboxSettings
from plancord.core.shell.readonly import Verdict
from plancord.sandbox import landlock_abi, run_shell
from plancord.testing.anthropic_server import ToolCall, text_turn, tool_turn
from tests.security.hostile import Hostile

pytestmark = pytest.mark.skipif(landlock_abi() < 4, reason="the fallback needs Landlock")

REACH = (
    "import socket, sys\n"
    "s = socket.socket(socket.AF_UNIX)\n"
    "s.connect(sys.argv[1])\n"
    "s.sendall(b'from the sandbox')\n"
    "print('connected')\n"
)
UDP = "import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM); print('udp open')"


def _wrong(command: str, workspace: Path, rules: object = ()) -> Verdict:
    return Verdict(True, "read-only: (a filter that is always wrong)", script=command)


async def test_a_plan_mode_command_in_the_fallback_reaches_no_unix_socket(
    hostile: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(shell, "judge_staged", _wrong)
    path = tmp_path / "service.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.listen()
    server.setblocking(False)
    reach = f"python3 -c {REACH!r} {path}".replace("\\n", "\n")
    commands = [reach, f'python3 -c "{UDP}"']
    try:
        scene: Hostile = await hostile(
            [tool_turn(ToolCall("bash_execute", {"command": c})) for c in commands]
            + [text_turn("still exploring")],
            config={"sandbox": {"layer": "landlock"}},
        )
        await scene.ana.slash(scene.channel, "plan start", task="look around")
        unix, udp = scene.ran(2)
        assert "connected" not in unix and "Permission denied" in unix, unix
        assert "udp open" not in udp and "Permission denied" in udp, udp
        with pytest.raises(BlockingIOError):
            server.accept()
        # Positive control: the same command on the host reaches the socket.
        done = await asyncio.to_thread(
            subprocess.run, ["bash", "-c", reach], capture_output=True, text=True, check=False
        )
        assert "connected" in done.stdout, done.stderr
        connection, _ = server.accept()
        connection.close()
    finally:
        server.close()


async def test_an_agent_with_the_network_in_the_fallback_reaches_no_unix_socket(
    hostile: Any, tmp_path: Path
) -> None:
    """The operator gave ``ada`` the network. In its workspace (a repository) the fallback
    runs no command that could write, whatever the network: no wall there keeps the git
    directory read-only. Where a networked process does run under the fallback (a directory
    holding no repository, as an MCP server's), UDP works (name resolution needs it) but the
    host's unix sockets stay out of reach."""
    path = tmp_path / "service.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.listen()
    server.setblocking(False)
    reach = f"python3 -c {REACH!r} {path}".replace("\\n", "\n")
    commands = [reach, f'python3 -c "{UDP}"']
    try:
        scene: Hostile = await hostile(
            [tool_turn(ToolCall("bash_execute", {"command": c})) for c in commands]
            + [text_turn("done")],
            profile="open",
            config={"sandbox": {"layer": "landlock"}, "agents": {"ada": {"network": True}}},
        )
        await scene.ana.send(scene.channel, "talk to the service")
        assert len(scene.tool_results()) == 2
        for refused in scene.tool_results():
            assert refused.startswith("Not run:") and "Landlock fallback" in refused, refused
        with pytest.raises(BlockingIOError):
            server.accept()
        elsewhere = tmp_path / "no-repository"
        elsewhere.mkdir()
        settings = SandboxSettings(layer=LayerChoice.LANDLOCK, network_agents=frozenset({"ada"}))
        policy = settings.executing("ada", elsewhere)
        unix, udp = [(await run_shell(command, policy, timeout=30)).output for command in commands]
        assert "connected" not in unix and "Permission denied" in unix, unix
        assert "udp open" in udp, udp
        with pytest.raises(BlockingIOError):
            server.accept()
        # Positive control: the same command on the host reaches the socket.
        done = await asyncio.to_thread(
            subprocess.run, ["bash", "-c", reach], capture_output=True, text=True, check=False
        )
        assert "connected" in done.stdout, done.stderr
        connection, _ = server.accept()
        connection.close()
    finally:
        server.close()
