"""``plancord doctor``'s look at the MCP servers: does each start, how is each tool judged.

Why this exists: an unclassified tool stops an agent's start, and a server that cannot start
in the sandbox shows only when the agent is first used; the operator should see both before
that. Each agent the config names (and, for the global servers, an agent with no network)
gets each of its servers started once, alone (one that fails says nothing of the others),
then closed: in the agent's own workspace when it has one (read-only, as while planning),
else in a scratch git repository, so a server started as its README says
(``mcp-server-git --repository .``) finds what it would find in a real workspace.
"""

from __future__ import annotations

import subprocess
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from plancord.agent.home import AgentHomes
from plancord.agent.mcp.hub import McpHub, ServerStatus
from plancord.config.mcp import McpServerConfig
from plancord.core.gate import ToolKind
from plancord.core.sandbox_policy import SandboxSettings

#: The name the global servers are probed under (no agent has it: names have no spaces).
ANY_AGENT = "any agent"


@dataclass(frozen=True, slots=True)
class ServerProbe:
    agent: str
    server: str
    started: bool
    detail: str
    """When started: each tool with its kind and why; otherwise the problem."""


#: How much of a failed server's stderr the doctor shows: its last lines, on one line.
STDERR_LINES = 5
STDERR_CHARS = 600


def _stderr_end(stderr: str) -> str:
    lines = [line.strip() for line in stderr.splitlines() if line.strip()][-STDERR_LINES:]
    text = " ⏎ ".join(lines)
    return text if len(text) <= STDERR_CHARS else "…" + text[-STDERR_CHARS:]


def _describe(status: ServerStatus) -> str:
    if not status.started:
        problem = status.problem or "not started: another server of this agent failed"
        said = _stderr_end(status.stderr)
        return f"{problem}; its stderr ended with: {said}" if said else problem
    if not status.tools:
        return "no tools"
    return "; ".join(
        f"{name} {'read-only' if c.kind is ToolKind.READ_ONLY else 'mutating'} ({c.why})"
        for name, c in sorted(status.tools.items())
    )


async def probe_servers(
    global_servers: Mapping[str, McpServerConfig],
    agents: Mapping[str, Mapping[str, McpServerConfig]],
    sandbox: SandboxSettings,
    agents_dir: Path | None = None,
) -> list[ServerProbe]:
    """Start every configured server once per agent that uses it, each alone, and report
    on each; ``agents_dir`` is where the agents' own workspaces are."""
    plan: dict[str, Mapping[str, McpServerConfig]] = dict(agents)
    if global_servers:
        plan[ANY_AGENT] = global_servers
    probes: list[ServerProbe] = []
    probe_sandbox = replace(sandbox, network_agents=sandbox.network_agents - {ANY_AGENT})
    with tempfile.TemporaryDirectory(prefix="plancord-doctor-") as scratch:
        for agent, servers in plan.items():
            home = _workspace_home(agent, agents_dir, Path(scratch))
            for name, server in servers.items():
                hub = McpHub(_only(name, server), home, probe_sandbox)
                try:
                    for status in await hub.status(agent):
                        probes.append(
                            ServerProbe(agent, status.server, status.started, _describe(status))
                        )
                finally:
                    await hub.close()
    return probes


def _only(name: str, server: McpServerConfig) -> Callable[[str], Mapping[str, McpServerConfig]]:
    def servers_for(agent: str) -> Mapping[str, McpServerConfig]:
        return {name: server}

    return servers_for


def _workspace_home(agent: str, agents_dir: Path | None, scratch: Path) -> Path:
    """The agents folder to probe ``agent`` in: its own when it has a workspace there, else
    the scratch folder with a fresh git repository as its workspace."""
    if agents_dir is not None and AgentHomes(agents_dir).of(agent).workspace.is_dir():
        return agents_dir
    workspace = AgentHomes(scratch).of(agent).workspace
    if not workspace.is_dir():
        workspace.mkdir(parents=True)
        subprocess.run(
            ["git", "init", "-q", str(workspace)],
            capture_output=True,
            check=False,
            stdin=subprocess.DEVNULL,
            timeout=30,
        )
    return scratch
