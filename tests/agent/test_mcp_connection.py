"""An agent's MCP servers as the hub runs them: a real server in the real sandbox."""

from __future__ import annotations

import asyncio
import site
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from plancord.agent.mcp import McpConfigProblem, McpHub
from plancord.agent.mcp.probe import STDERR_CHARS, probe_servers
from plancord.agent.mcp.stderr import TAIL_BYTES
from plancord.agent.mcp.stdio import MAX_LINE_BYTES
from plancord.agent.mcp.tool import McpTool
from plancord.config.mcp import McpServerConfig
from plancord.core.sandbox_policy import SandboxSettings

SERVERS = Path(__file__).resolve().parent.parent / "fakes" / "mcp_servers"
LIMIT = 100_000
SITE_PACKAGES = next(p for p in site.getsitepackages() if p.endswith("site-packages"))


def tracker(*extra: str, **settings: Any) -> McpServerConfig:
    return McpServerConfig(
        command="/usr/bin/python3.11",
        args=[str(SERVERS / "tracker_server.py"), SITE_PACKAGES, *extra],
        mounts=[Path(SITE_PACKAGES), SERVERS],
        trust_hints=True,
        **settings,
    )


@pytest.fixture
async def hub_for(tmp_path: Path) -> AsyncIterator[Callable[..., McpHub]]:
    hubs: list[McpHub] = []

    def make(servers: dict[str, McpServerConfig], network: frozenset[str] = frozenset()) -> McpHub:
        (tmp_path / "ada" / "workspace").mkdir(parents=True, exist_ok=True)
        hub = McpHub(lambda agent: servers, tmp_path, SandboxSettings(network_agents=network))
        hubs.append(hub)
        return hub

    yield make
    for hub in hubs:
        await hub.close()


async def tools_of(hub: McpHub) -> dict[str, McpTool]:
    return {t.name: t for t in await hub.tools_for("ada") if isinstance(t, McpTool)}


async def test_a_dead_server_is_a_tool_error_and_restarts_after_its_backoff(
    hub_for: Callable[..., McpHub],
) -> None:
    tools = await tools_of(hub_for({"tracker": tracker()}))
    connection = tools["mcp__tracker__read_issue"].connection

    died = (await connection.call("crash", {}, max_output=LIMIT)).result
    assert died.is_error and "restarted on the next call" in died.content
    waiting = (await connection.call("read_issue", {"number": 1}, max_output=LIMIT)).result
    assert waiting.is_error and "is down" in waiting.content
    await asyncio.sleep(1.2)
    back = (await connection.call("read_issue", {"number": 1}, max_output=LIMIT)).result
    assert back.content == "issue 1: the build is red" and not back.is_error
    assert connection.restarts == 1


async def test_a_tool_the_server_adds_while_running_is_not_the_agents(
    hub_for: Callable[..., McpHub],
) -> None:
    hub = hub_for({"tracker": tracker()})
    tools = await tools_of(hub)
    added = (await tools["mcp__tracker__grow"].connection.call("grow", {}, max_output=LIMIT)).result
    assert added.content == "added grown"

    assert "mcp__tracker__grown" not in await tools_of(hub)


async def test_an_http_server_needs_the_agents_network(hub_for: Callable[..., McpHub]) -> None:
    hub = hub_for({"docs": McpServerConfig(url="http://127.0.0.1:9/mcp", trust_hints=True)})
    with pytest.raises(McpConfigProblem, match="has no `network: true`"):
        await hub.tools_for("ada")


async def test_an_unreadable_secret_file_stops_the_start_naming_it(
    hub_for: Callable[..., McpHub], tmp_path: Path
) -> None:
    missing = tmp_path / "no-such-token"
    hub = hub_for({"tracker": tracker(env={"TOKEN_FILE": str(missing)})})
    with pytest.raises(McpConfigProblem, match=r"mcp_servers\.tracker\.env\.TOKEN_FILE"):
        await hub.tools_for("ada")


async def test_a_server_flooding_stderr_is_neither_blocked_nor_kept_whole(
    hub_for: Callable[..., McpHub],
) -> None:
    """16 MiB on stderr at start and 16 MiB during a call: the server starts and answers
    (a pipe nobody drains blocks at 64 KiB), and only the last 64 KiB are kept."""
    hub = hub_for({"tracker": tracker("--flood", "16")})
    tools = await tools_of(hub)
    connection = tools["mcp__tracker__shout"].connection

    shouted = (await connection.call("shout", {"mebibytes": 16}, max_output=LIMIT)).result
    assert shouted.content == "shouted" and not shouted.is_error
    read = (await connection.call("read_issue", {"number": 4}, max_output=LIMIT)).result
    assert read.content == "issue 4: the build is red"
    await hub.close()

    assert connection.stderr_bytes >= 30 * 1024 * 1024
    kept = connection.stderr.encode()
    assert 0 < len(kept) <= TAIL_BYTES
    assert connection.stderr.rstrip().endswith("shouted the last line")


async def test_a_server_that_dies_flooding_stderr_says_why_in_a_bounded_tail(
    hub_for: Callable[..., McpHub],
) -> None:
    hub = hub_for({"tracker": tracker("--die-loudly")})

    [status] = await hub.status("ada")

    assert not status.started
    assert status.problem is not None
    assert "fatal: the tracker's database is missing" in status.problem
    assert "\n" not in status.problem
    assert 0 < len(status.stderr.encode()) <= TAIL_BYTES
    assert status.stderr.rstrip().endswith("fatal: the tracker's database is missing")


async def test_the_doctor_shows_the_end_of_a_failed_servers_stderr(tmp_path: Path) -> None:
    servers = {"tracker": tracker("--die-loudly")}

    [probe] = await probe_servers({}, {"ada": servers}, SandboxSettings())

    assert not probe.started
    said = probe.detail.split("; its stderr ended with: ")[1]
    assert said.endswith("noise ⏎ fatal: the tracker's database is missing")
    assert len(said) <= STDERR_CHARS + 1


async def test_the_config_is_asked_for_an_agents_servers_once(tmp_path: Path) -> None:
    asked: list[str] = []

    def servers_for(agent: str) -> dict[str, McpServerConfig]:
        asked.append(agent)
        return {}

    hub = McpHub(servers_for, tmp_path, SandboxSettings())
    try:
        for _ in range(3):
            assert await hub.tools_for("ada") == ()
            assert await hub.tools_for("bea") == ()
    finally:
        await hub.close()

    assert asked == ["ada", "bea"]


async def test_the_doctor_shows_a_server_stopped_for_a_line_without_end(tmp_path: Path) -> None:
    """A server that writes 100 MB without a newline as it starts is stopped at the bound on
    one message, and the doctor says so (not a timeout, not a crash of the bot)."""
    servers = {"tracker": tracker("--endless-line", "100")}

    [probe] = await probe_servers({}, {"ada": servers}, SandboxSettings())

    assert not probe.started
    assert f"more than {MAX_LINE_BYTES:,} bytes" in probe.detail and "stopped" in probe.detail


async def test_a_result_past_the_bound_keeps_its_first_bytes_and_says_how_to_see_more(
    hub_for: Callable[..., McpHub],
) -> None:
    tools = await tools_of(hub_for({"tracker": tracker()}))
    connection = tools["mcp__tracker__dump"].connection

    cut = (await connection.call("dump", {"characters": 250}, max_output=100)).result
    whole = (await connection.call("dump", {"characters": 100}, max_output=100)).result

    assert cut.content == (
        "issue log " * 10 + "\n[output truncated: showing the first 100 of 250 bytes; "
        "call the tool again with narrower arguments to see the rest]"
    )
    assert whole.content == "issue log " * 10


def test_a_server_online_while_planning_is_a_config_error() -> None:
    with pytest.raises(ValidationError, match="no longer allowed: while planning every MCP"):
        McpServerConfig(command="/usr/bin/tracker-mcp", network_in_plan_mode=True)
