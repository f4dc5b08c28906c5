"""``plancord doctor``'s look at the MCP servers: does each start, how is each tool judged.

Why this exists: an unclassified tool stops an agent's start, and a server that cannot start
in the sandbox shows only when the agent is first used; the operator should see both before
that. Each agent the config names (and, for the global servers, an agent with no network)
gets its servers started once in a scratch workspace, then closed.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping
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
) -> list[ServerProbe]:
    """Start every configured server once per agent that uses it and report on each."""
    plan: dict[str, Mapping[str, McpServerConfig]] = dict(agents)
    if global_servers:
        plan[ANY_AGENT] = global_servers
    probes: list[ServerProbe] = []
    with tempfile.TemporaryDirectory(prefix="plancord-doctor-") as scratch:
        agents_dir = Path(scratch)
        probe_sandbox = replace(sandbox, network_agents=sandbox.network_agents - {ANY_AGENT})
        hub = McpHub(lambda agent: plan.get(agent, {}), agents_dir, probe_sandbox)
        try:
            for agent in plan:
                AgentHomes(agents_dir).of(agent).workspace.mkdir(parents=True)
                for status in await hub.status(agent):
                    probes.append(
                        ServerProbe(agent, status.server, status.started, _describe(status))
                    )
        finally:
            await hub.close()
    return probes
