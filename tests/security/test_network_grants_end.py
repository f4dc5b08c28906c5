"""Grants end with the step and the execution, and asks come one card per command: attacked
from the agent's side after approval, through the real bot under SimCord, the real sandbox,
bridge and proxy, with local servers on 127.0.0.1 named through the proxy's resolver map.

A long-lived process the agent caused (a writable MCP server) opens a CONNECT tunnel while
its step grants the host and keeps using it: once the step is no longer current, or the
execution has ended, the tunnel is closed. One command naming twelve hosts the plan does
not name gets one card listing them, and after its Deny the command's retries are refused
without another card.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from plancord.sandbox.layers import bubblewrap_problem
from plancord.testing.anthropic_server import ToolCall, text_turn, tool_turn
from tests.security.mcp_scene import PATIENT_SECONDS, call, tracker
from tests.security.network_scene import (
    PingServer,
    allowed,
    approved,
    bash,
    plan_of,
    ran,
    start_network_scene,
)
from tests.world import PlanScene, Worlds, buttons

pytestmark = pytest.mark.skipif(
    bubblewrap_problem() is not None, reason="the plan-bound network needs bubblewrap"
)


@pytest.fixture
def pings() -> Iterator[PingServer]:
    server = PingServer()
    try:
        yield server
    finally:
        server.close()


def _tunnel(port: int) -> Any:
    return tool_turn(ToolCall("mcp__tracker__tunnel", {"host": "files.test", "port": port}))


async def _closed(server: PingServer, seconds: float) -> bool:
    return await asyncio.to_thread(server.closed.wait, seconds)


@pytest.mark.parametrize("until", ["execution-end", "next-step"])
async def test_an_mcp_servers_tunnel_closes_when_its_grant_ends(
    worlds: Worlds, pings: PingServer, until: str
) -> None:
    host = f"files.test:{pings.port}"
    tools = ["mcp__tracker__tunnel", "bash_execute", "complete_plan"]
    if until == "execution-end":
        plan = plan_of((tools, [host]))
        script = [
            _tunnel(pings.port),
            bash("sleep 1"),
            tool_turn(ToolCall("complete_plan", {"summary": "tunnelled"})),
        ]
    else:
        plan = plan_of((tools, [host]), (["create_file"], []))
        script = [
            _tunnel(pings.port),
            bash("sleep 1"),
            tool_turn(ToolCall("create_file", {"path": "notes.txt", "content": "n\n"})),
            text_turn("step 2 goes on"),
        ]
    mcp = tracker(trust_hints=True, writable_workspace=True)["agents"]["ada"]
    scene = await start_network_scene(worlds, plan, script, allow=allowed(pings.port), agent=mcp)
    scene.world.env.settle_timeout = PATIENT_SECONDS
    await approved(scene)
    await scene.app.runtime.wait_idle("ada")
    opened, slept, *_ = ran(scene)
    assert "tunnel open" in opened, opened
    assert pings.connections == 1
    # The tunnel was used while the step was current...
    assert pings.lines >= 3, (pings.lines, slept)
    # ...and is closed once the grant ended, the server still running.
    # The gate rechecks every quarter second; a loaded machine may take seconds to get there.
    assert await _closed(pings, 20), f"the tunnel is still open after the {until}"
    seen = pings.lines
    await asyncio.sleep(1)
    assert pings.lines == seen


async def _drifts(scene: PlanScene, count: int) -> list[Any]:
    """The drift audits, once ``count`` are written (the answer's are, after the click)."""
    for _ in range(100):
        drifts = [a for a in await scene.app.store.list_audit("ada") if a.action == "drift"]
        if len(drifts) >= count:
            return drifts
        await asyncio.sleep(0.05)
    return drifts


def _cards(scene: PlanScene) -> list[Any]:
    return [m for m in scene.bot_messages() if buttons(m).get("Allow for this plan")]


def _shown(message: Any) -> str:
    return str(message.content) + "".join(str(e.to_dict()) for e in message.embeds)


async def test_one_command_naming_twelve_hosts_gets_one_card(worlds: Worlds) -> None:
    names = [f"m{n}.mirror.test" for n in range(1, 13)]
    command = (
        "for i in $(seq 12); do curl -s -o /dev/null --max-time 3 http://m$i.mirror.test/ & "
        "done; wait"
    )
    scene = await start_network_scene(
        worlds,
        plan_of((["bash_execute"], ["files.test"])),
        [bash(command)],
        allow=allowed(80, "*.mirror.test"),
        drift="ask",
    )
    await approved(scene)
    await scene.app.runtime.wait_idle("ada")
    [card] = _cards(scene)
    shown = _shown(card)
    assert all(name in shown for name in names), shown
    await scene.ana.click(card, label="Deny")
    drifts = await _drifts(scene, 12)
    assert sorted(d.detail["call"] for d in drifts) == sorted(f"connect to {n}" for n in names)
    assert {d.detail["decision"] for d in drifts} == {"denied"}
    assert [m for m in scene.bot_messages() if "m1.mirror.test" in _shown(m)] == [card]


def _host_paths(scene: PlanScene) -> list[str]:
    """What the sandbox must not name: the data directory's proxy folder, the bot's cache
    folder and home, the config view's temporary folder."""
    socket_path = scene.app.config.sandbox_settings.proxy_socket("ada")
    assert socket_path is not None
    return [str(socket_path.parent), f"{Path.home()}/", "/.cache/", "plancord-git-view"]


async def test_the_sandbox_shows_no_host_path_in_argv_or_mounts(worlds: Worlds) -> None:
    script = [
        bash("tr '\\0' ' ' </proc/1/cmdline; echo; cat /proc/self/mountinfo"),
        call("read_path", path="/proc/1/cmdline"),
        call("read_path", path="/proc/self/mountinfo"),
    ]
    mcp = tracker(trust_hints=True, writable_workspace=True)["agents"]["ada"]
    scene = await start_network_scene(
        worlds,
        plan_of((["bash_execute", "mcp__tracker__read_path"], ["files.test"])),
        script,
        allow=allowed(80),
        agent=mcp,
    )
    workspace = scene.app.manager.workspace_of("ada")
    # A config key git must not see and attributes git must not read: both are covered by
    # files of the host's (the config view), which the mount table must not name either.
    (workspace / ".git" / "info").mkdir(exist_ok=True)
    (workspace / ".git" / "info" / "attributes").write_text("* -diff\n")
    with (workspace / ".git" / "config").open("a") as config:
        config.write("[core]\n\tpager = less\n")
    await approved(scene)
    await scene.app.runtime.wait_idle("ada")
    shell, server_argv, server_mounts = ran(scene)
    assert "bwrap --args " in shell, shell
    assert "/run/plancord/net-bridge" in shell and f"{workspace}/.git/config" in shell, shell
    assert f" {workspace} " in server_mounts and "/run/plancord/net-bridge" in server_argv
    for seen in (shell, server_argv, server_mounts):
        for host_path in _host_paths(scene):
            assert host_path not in seen, (host_path, seen)
