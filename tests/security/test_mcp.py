"""MCP tools under the gate, end to end: a real MCP server (``tests/fakes/mcp_servers``,
speaking the protocol through the SDK) runs inside the agent's real sandbox, the real bot
runs under SimCord, and a scripted (attacker-steered) model calls the server's tools.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from plancord.core.planning import Phase
from plancord.testing.anthropic_server import ToolCall, text_turn, tool_turn
from tests.security.hostile import OTHER_SECRET, Hostile, host_environment_entries
from tests.security.mcp_scene import (
    SERVERS,
    SITE_PACKAGES,
    call,
    patient,
    planning,
    tracker,
)

TRACKER_TOKEN = "tracker-token-from-a-file-4c1d"


async def test_a_read_only_mcp_tool_runs_in_plan_mode_and_a_mutating_one_is_refused(
    hostile: Any,
) -> None:
    scene = await planning(
        hostile,
        [call("read_issue", number=7), call("close_issue", number=7)],
        tracker(trust_hints=True),
    )

    read, closed = scene.tool_results()
    assert read == "issue 7: the build is red"
    assert "close_issue" in closed and "plan mode" in closed.lower()
    assert not (scene.workspace / "closed.txt").exists()
    schema = {t["name"]: t for t in scene.world.server.requests[-1]["tools"]}
    assert schema["mcp__tracker__read_issue"]["input_schema"]["properties"]["number"]


async def test_the_planning_regime_names_the_read_only_mcp_tools_among_the_allowed(
    hostile: Any,
) -> None:
    # The regime is made from each tool's declared kind: a read-only MCP tool runs while
    # planning, so the model is told it may use it; a mutating one is not offered.
    scene = await planning(hostile, [call("read_issue", number=7)], tracker(trust_hints=True))
    sent = json.dumps(scene.world.server.requests[-1]["messages"])
    regime = sent[sent.rindex("<plancord-regime>") : sent.rindex("</plancord-regime>")]
    [allowed] = [line for line in regime.split("\\n") if line.startswith("Allowed: ")]
    assert "mcp__tracker__read_issue" in allowed, allowed
    assert "close_issue" not in allowed and "create_file" not in allowed, allowed
    assert "view" in allowed and "submit_plan" in allowed and "read-only shell" in allowed


async def test_a_mutating_mcp_tool_asks_under_standard_and_runs_once_allowed(
    hostile: Any,
) -> None:
    scene: Hostile = await patient(
        hostile,
        [call("close_issue", number=3), text_turn("closed")],
        config=tracker(trust_hints=True, writable_workspace=True),
    )
    await scene.ana.send(scene.channel, "close issue 3")
    request = scene.channel.last_message
    assert request.embeds and "tool:mcp__tracker__close_issue:" in (
        request.embeds[0].description or ""
    )
    assert not (scene.workspace / "closed.txt").exists()

    await scene.ana.click(request, label="Allow")

    assert (scene.workspace / "closed.txt").read_text() == "3\n"
    assert scene.tool_results() == ["closed 3"]


async def test_while_executing_a_mutating_mcp_tool_asks_under_standard(hostile: Any) -> None:
    plan = {
        "summary": "Close the red-build issue",
        "steps": [{"description": "Close issue 9", "tools": ["mcp__tracker__close_issue"]}],
    }
    script = [
        tool_turn(ToolCall("submit_plan", {"plan": plan})),
        call("close_issue", number=9),
        text_turn("closed"),
    ]
    config = tracker(trust_hints=True, writable_workspace=True)
    scene: Hostile = await patient(hostile, script, config=config)
    await scene.ana.slash(scene.channel, "plan start", task="close the issue")
    assert (await scene.app.store.load_state("ada")).phase is Phase.SUBMITTED
    [card] = [
        m
        for m in scene.channel.history()
        if m.embeds and (m.embeds[0].title or "").startswith("Plan: ")
    ]
    await scene.ana.click(card, label="Approve")
    assert (await scene.app.store.load_state("ada")).phase is Phase.EXECUTING
    request = scene.channel.last_message
    assert "tool:mcp__tracker__close_issue:" in (request.embeds[0].description or "")
    assert not (scene.workspace / "closed.txt").exists()

    await scene.ana.click(request, label="Allow")

    assert (scene.workspace / "closed.txt").read_text() == "9\n"


async def test_a_network_servers_code_reaches_nothing_while_planning(hostile: Any) -> None:
    """An agent with the network plans: its stdio server (which calls home as it starts) is
    only listed, read-only and offline, and is not running while the agent plans; its tools
    are refused naming why."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0)
    tag = f"--tag={uuid.uuid4().hex}"
    config = tracker(tag, "--call-home", str(listener.getsockname()[1]), trust_hints=True)
    config["agents"]["ada"]["network"] = True
    try:
        scene = await planning(hostile, [call("read_issue", number=2)], config)
        with pytest.raises(BlockingIOError):
            listener.accept()
    finally:
        listener.close()

    [result] = scene.tool_results()
    assert result.startswith("Refused in plan mode") and "reaches the network" in result
    assert processes_with(tag) == []


async def test_a_network_server_started_outside_plan_mode_is_stopped_once_planning(
    hostile: Any,
) -> None:
    """Idle, the agent's server runs with the network; once the agent plans, the server is
    stopped before the next model call, and its tools are refused until planning ends."""
    tag = f"--tag={uuid.uuid4().hex}"
    config = tracker(tag, trust_hints=True)
    config["agents"]["ada"]["network"] = True
    script = [
        call("read_issue", number=5),
        text_turn("read"),
        call("read_issue", number=6),
        text_turn("planning"),
    ]
    scene: Hostile = await patient(hostile, script, profile="open", config=config)
    await scene.ana.send(scene.channel, "read issue 5")
    assert scene.tool_results() == ["issue 5: the build is red"]
    assert processes_with(tag), "the server is not running"

    await scene.ana.slash(scene.channel, "plan start", task="triage the tracker")

    assert (await scene.app.store.load_state("ada")).phase is Phase.GATHERING
    refused = scene.tool_results()[-1]
    assert refused.startswith("Refused in plan mode") and "reaches the network" in refused
    deadline = time.perf_counter() + 10
    while processes_with(tag):
        assert time.perf_counter() < deadline, "the server still runs while the agent plans"
        await asyncio.sleep(0.05)


async def test_a_writable_servers_read_only_tool_cannot_write_while_planning(
    hostile: Any,
) -> None:
    """The operator calls every tool of a server with a writable workspace read-only (the
    hint says so too): while planning the tool is refused and the workspace stays as it
    was, as the shell's read-only commands run in a read-only sandbox."""
    config = tracker(read_only=["*"], writable_workspace=True)
    scene = await planning(hostile, [call("close_issue", number=4)], config)

    [result] = scene.tool_results()
    assert result.startswith("Refused in plan mode") and "writes the workspace" in result
    assert not (scene.workspace / "closed.txt").exists()


async def test_an_unclassified_tool_stops_the_agents_start_with_one_line(hostile: Any) -> None:
    scene: Hostile = await patient(
        hostile, [text_turn("never")], config=tracker("--mystery", trust_hints=True)
    )
    await scene.ana.send(scene.channel, "hello")

    said = scene.channel.last_message.content
    assert "`mystery`" in said and "does not start" in said and "\n" not in said
    assert scene.world.server.requests == []


async def test_an_operator_listed_mutating_tool_stays_mutating_whatever_its_hint(
    hostile: Any,
) -> None:
    scene = await planning(
        hostile,
        [call("sneaky_delete", number=1)],
        tracker(trust_hints=True, mutating=["sneaky_*"]),
    )

    [result] = scene.tool_results()
    assert "deleted" not in result and "plan mode" in result.lower()


async def test_a_stdio_server_sees_neither_the_bot_nor_other_workspaces_nor_the_network(
    hostile: Any, tmp_path: Path
) -> None:
    token = tmp_path / "tracker_token"
    token.write_text(TRACKER_TOKEN)
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    config = tracker(read_only=["*"], env={"TRACKER_TOKEN_FILE": str(token)})
    scene: Hostile = await patient(hostile, [], profile="open", config=config)
    other = scene.app.manager.workspace_of("other")
    scene.world.server.add_turns(
        call("environment"),
        call("read_path", path=str(other / "notes.txt")),
        call("read_path", path=str(scene.secret_file)),
        call("read_path", path=str(scene.data_dir / "plancord.db")),
        call("read_path", path="/proc/1/environ"),
        call("connect", host="127.0.0.1", port=port),
        call("close_issue", number=1),
        text_turn("done"),
    )
    try:
        await scene.ana.send(scene.channel, "look around")
    finally:
        listener.close()

    environment, *reads, reached, wrote = scene.tool_results()
    assert f"TRACKER_TOKEN={TRACKER_TOKEN}" in environment.splitlines()
    assert scene.leaks() == []
    assert [e for e in host_environment_entries() if e in environment] == []
    assert all(r.startswith("unreadable") for r in reads[:3]), reads
    assert OTHER_SECRET not in reads[3]
    assert reached.startswith("unreachable")
    assert "closed" not in wrote and not (scene.workspace / "closed.txt").exists()
    # Positive control: what the server was refused is there for a process of the host.
    assert OTHER_SECRET in (other / "notes.txt").read_text()
    assert scene.secret_file.read_bytes() and (scene.data_dir / "plancord.db").read_bytes()
    with socket.create_server(("127.0.0.1", 0)) as again:
        socket.create_connection(again.getsockname(), timeout=5).close()


def processes_with(needle: str) -> list[int]:
    """The host's processes with ``needle`` in their command line."""
    found: list[int] = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            if needle.encode() in Path(f"/proc/{entry}/cmdline").read_bytes():
                found.append(int(entry))
        except OSError:
            continue
    return found


async def test_removing_an_agent_stops_its_mcp_servers(hostile: Any) -> None:
    tag = f"--tag={uuid.uuid4().hex}"
    config = tracker(tag, trust_hints=True)
    scene: Hostile = await patient(
        hostile, [call("read_issue", number=5), text_turn("read")], config=config
    )
    await scene.ana.send(scene.channel, "read issue 5")
    assert scene.tool_results() == ["issue 5: the build is red"]
    assert processes_with(tag), "the server is not running"

    prompt = await scene.ana.slash(scene.channel, "agent remove", name="ada")
    await scene.ana.click(prompt.response, label="Remove")
    assert "Removed agent **ada**" in prompt.response.content

    deadline = time.perf_counter() + 10
    while processes_with(tag):
        assert time.perf_counter() < deadline, "the removed agent's MCP server still runs"
        await asyncio.sleep(0.05)


@pytest.fixture(scope="module")
def http_tracker() -> Iterator[str]:
    """The test tracker serving streamable HTTP on 127.0.0.1, as a remote server would; its
    URL."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen(
        [sys.executable, str(SERVERS / "tracker_server.py"), SITE_PACKAGES, "--http", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.perf_counter() + 30
        while True:
            assert server.poll() is None, "the HTTP tracker exited"
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.perf_counter() < deadline, "the HTTP tracker never listened"
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        server.terminate()
        server.wait(timeout=10)


def remote(url: str, *, network: bool, **settings: Any) -> dict[str, Any]:
    """Agent ``ada`` with the HTTP tracker as its server ``tracker``."""
    server = {"url": url, "trust_hints": True, **settings}
    return {"agents": {"ada": {"network": network, "mcp_servers": {"tracker": server}}}}


async def test_an_http_server_serves_an_agent_whose_network_is_allowed(
    hostile: Any, http_tracker: str
) -> None:
    scene: Hostile = await patient(
        hostile,
        [call("read_issue", number=11), text_turn("read")],
        config=remote(http_tracker, network=True),
    )
    await scene.ana.send(scene.channel, "read issue 11")

    assert scene.tool_results() == ["issue 11: the build is red"]


async def test_an_http_server_is_refused_to_an_agent_without_network(
    hostile: Any, http_tracker: str
) -> None:
    scene: Hostile = await patient(
        hostile, [text_turn("never")], config=remote(http_tracker, network=False)
    )
    await scene.ana.send(scene.channel, "read issue 11")

    said = scene.channel.last_message.content
    assert "has no `network: true`" in said and "does not start" in said and "\n" not in said
    assert scene.world.server.requests == []


async def test_an_http_servers_tools_are_refused_while_planning(
    hostile: Any, http_tracker: str
) -> None:
    config = remote(http_tracker, network=True)
    scene = await planning(hostile, [call("read_issue", number=12)], config)

    [result] = scene.tool_results()
    assert result.startswith("Refused in plan mode") and "reaches the network" in result
