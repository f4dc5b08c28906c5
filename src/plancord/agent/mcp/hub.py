"""Every agent's MCP servers: started at the agent's first turn, classified, closed at exit.

Why this exists: the tool registry is shared by all agents, while each agent has the servers
the config gives it (the global ones and its own). The hub starts an agent's servers when
the agent first needs its tools, classifies every tool (an unclassified one stops the start
with one line naming it), and hands the registry the agent's tools. The set is fixed at
start: a tool a server adds later is unknown to the agent (refused) until the next start.

While planning, nothing an MCP server runs may write or reach the network, whatever the
config says. A server that needs neither (a stdio server without ``writable_workspace``, of
an agent without ``network``) runs read-only and offline in every phase. One with
``writable_workspace: executing`` runs in both: read-only while planning, writable while
executing, its connection switched at each call by the phase of that call. A server that needs
either (``writable_workspace: true``, an agent with ``network: true``, a URL) runs only
outside plan mode: when the agent's first turn is in plan mode it is started read-only and
offline just long enough to list its tools, then stopped; whenever the hub finds the agent
planning it stops the server; its tools are refused while planning, naming what it needs;
and its next call outside plan mode starts it with what the config gives it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from plancord.agent.home import AgentHomes
from plancord.agent.mcp.background import BackgroundLoop
from plancord.agent.mcp.classify import Classified, Hints, classify_all
from plancord.agent.mcp.connection import Endpoint, McpConnection, McpServerDown, PhaseEndpoints
from plancord.agent.mcp.spawn import ServerSpawn, secret_environment, server_spawn
from plancord.agent.mcp.tool import McpTool, mcp_tool, qualified_name
from plancord.agent.tools.base import TOOL_NAME, Tool
from plancord.config.fields import ConfigError
from plancord.config.mcp import McpServerConfig
from plancord.core.errors import PlancordError
from plancord.core.planning import Phase
from plancord.core.sandbox_policy import SandboxSettings, WorkspaceAccess


class McpConfigProblem(PlancordError):
    """An agent's MCP configuration cannot be used; the agent does not start."""


@dataclass(slots=True)
class ServerStatus:
    """What ``plancord doctor`` shows for one server of one agent."""

    server: str
    started: bool
    problem: str | None = None
    tools: dict[str, Classified] = field(default_factory=dict)
    stderr: str = ""
    """The end of what the server wrote to stderr when it failed to start."""


@dataclass(slots=True)
class _AgentServers:
    connections: list[McpConnection]
    tools: tuple[Tool[Any], ...]
    status: list[ServerStatus]
    outside_plan_mode: list[McpConnection]
    """The servers that run only outside plan mode (they write or reach the network)."""


PhaseOf = Callable[[str], Awaitable[Phase]]


def _needs(agent: str, config: McpServerConfig, sandbox: SandboxSettings) -> str | None:
    """What a server needs that nothing may have while planning, or None."""
    needs: list[str] = []
    if config.url is not None or agent in sandbox.network_agents:
        needs.append("reaches the network")
    if config.writable_workspace is True:
        needs.append("writes the workspace (`writable_workspace: true`)")
    return " and ".join(needs) or None


class McpHub:
    def __init__(
        self,
        servers_for: Callable[[str], Mapping[str, McpServerConfig]],
        agents_dir: Path,
        sandbox: SandboxSettings,
        *,
        phase_of: PhaseOf | None = None,
    ) -> None:
        """``phase_of`` tells the agent's phase; without it (``plancord doctor``, a
        benchmark) every agent counts as planning."""
        self._config_servers_for = servers_for
        self._servers: dict[str, Mapping[str, McpServerConfig]] = {}
        self._phase_of = phase_of
        self._homes = AgentHomes(agents_dir, sandbox)
        self._sandbox = sandbox
        self._agents: dict[str, _AgentServers] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._problems: dict[tuple[str, str], tuple[str, str]] = {}
        self._loop = BackgroundLoop()

    async def tools_for(self, agent: str) -> Sequence[Tool[Any]]:
        """The agent's MCP tools, starting its servers the first time; raises a
        PlancordError (one line) when a server cannot start or a tool is unclassified."""
        started = self._agents.get(agent)
        if started is not None:
            if started.outside_plan_mode and await self._planning(agent):
                for connection in started.outside_plan_mode:
                    if connection.running:
                        await connection.close()
            return started.tools
        if not self._servers_for(agent):
            return ()
        async with self._locks.setdefault(agent, asyncio.Lock()):
            started = self._agents.get(agent)
            if started is None:
                started = await self._start(agent, await self._planning(agent))
                self._agents[agent] = started
            return started.tools

    async def _planning(self, agent: str) -> bool:
        return self._phase_of is None or (await self._phase_of(agent)).is_planning

    async def status(self, agent: str) -> list[ServerStatus]:
        """Start the agent's servers (if not yet) and say how each went, without raising."""
        with contextlib.suppress(PlancordError):
            await self.tools_for(agent)
        started = self._agents.get(agent)
        if started is not None:
            return started.status
        statuses: list[ServerStatus] = []
        for name in self._servers_for(agent):
            problem, stderr = self._problems.get((agent, name), (None, ""))
            statuses.append(ServerStatus(name, False, problem, stderr=stderr))
        return statuses

    async def _start(self, agent: str, planning: bool) -> _AgentServers:
        connections: list[McpConnection] = []
        outside_plan_mode: list[McpConnection] = []
        tools: list[Tool[Any]] = []
        status: list[ServerStatus] = []
        try:
            for name, config in self._servers_for(agent).items():
                needs = _needs(agent, config, self._sandbox)
                phases = None
                if needs is None and config.writable_workspace == "executing":
                    phases = PhaseEndpoints(
                        self._endpoint(agent, name, config, read_only=True),
                        self._endpoint(agent, name, config, read_only=False),
                    )
                working = self._endpoint(agent, name, config, read_only=needs is None)
                listing = working if phases is None else phases.of(planning)
                if needs is not None and planning and config.url is None:
                    listing = self._endpoint(agent, name, config, read_only=True)
                connection = McpConnection(
                    name,
                    listing,
                    loop=self._loop,
                    call_timeout=config.timeout_seconds,
                    startup_timeout=config.startup_seconds,
                )
                connections.append(connection)
                try:
                    remote = await connection.start()
                    kinds = classify_all(name, config, [(t.name, _hints(t)) for t in remote])
                except PlancordError as exc:
                    self._problems[(agent, name)] = (str(exc), connection.stderr)
                    raise
                if needs is not None:
                    outside_plan_mode.append(connection)
                    if planning:
                        await connection.close()
                    connection.endpoint = working
                status.append(ServerStatus(name, True, None, kinds))
                refusal = None
                if needs is not None:
                    refusal = (
                        f"Refused in plan mode: MCP server `{name}` {needs}, and while "
                        "planning every MCP server runs read-only and without the network. "
                        "It runs only outside plan mode, once a plan is approved."
                    )
                for item in remote:
                    qualified = qualified_name(name, item.name)
                    if not TOOL_NAME.fullmatch(qualified):
                        raise McpConfigProblem(
                            f"MCP server `{name}`: tool `{item.name}` makes the name "
                            f"`{qualified}`, which the Messages API refuses (64 characters of "
                            "letters, digits, '_' or '-'); the agent does not start"
                        )
                    tools.append(
                        mcp_tool(
                            connection,
                            item.name,
                            kind=kinds[item.name].kind,
                            description=item.description,
                            input_schema=item.input_schema,
                            refused_while_planning=refusal,
                            phases=phases,
                        )
                    )
        except BaseException:
            for connection in connections:
                await connection.close()
            raise
        return _AgentServers(connections, tuple(tools), status, outside_plan_mode)

    def _servers_for(self, agent: str) -> Mapping[str, McpServerConfig]:
        """The servers the config gives ``agent``, worked out once per agent: the config does
        not change while the hub runs, and this is asked on every model request."""
        servers = self._servers.get(agent)
        if servers is None:
            servers = self._servers[agent] = self._config_servers_for(agent)
        return servers

    def _endpoint(
        self, agent: str, name: str, config: McpServerConfig, *, read_only: bool
    ) -> Endpoint:
        """Where ``name`` is: its URL, or its stdio spawn, read-only and offline when
        ``read_only``, else with the workspace writable as the config says and the agent's
        network."""
        if config.url is not None:
            if agent not in self._sandbox.network_agents:
                raise McpConfigProblem(
                    f"MCP server `{name}` is reached over the network ({config.url}) but agent "
                    f"`{agent}` has no `network: true`; the agent does not start"
                )
            return Endpoint(url=config.url)
        try:
            secrets = secret_environment(name, config)
        except ConfigError as exc:
            raise McpConfigProblem(f"{exc}; the agent does not start") from None
        home = self._homes.of(agent)
        if read_only:
            policy = home.read_only_policy
        else:
            policy = home.executing_policy
            if not config.writable_workspace:
                policy = replace(policy, access=WorkspaceAccess.READ_ONLY)
        command = [config.command or "", *config.args]

        def spawn() -> ServerSpawn:
            try:
                return server_spawn(command, policy, mounts=config.mounts, secrets=secrets)
            except Exception as exc:
                raise McpServerDown(name, str(exc)) from exc

        return Endpoint(spawn=spawn)

    def tools_started(self, agent: str) -> tuple[McpTool, ...]:
        started = self._agents.get(agent)
        if started is None:
            return ()
        return tuple(t for t in started.tools if isinstance(t, McpTool))

    async def stop(self, agent: str) -> None:
        """Close ``agent``'s servers; its next turn starts them again."""
        started = self._agents.pop(agent, None)
        if started is not None:
            for connection in started.connections:
                await connection.close()

    async def close(self) -> None:
        for agent in list(self._agents):
            await self.stop(agent)
        self._loop.close()


def _hints(tool: Any) -> Hints:
    annotations = getattr(tool, "annotations", None)
    if annotations is None:
        return Hints()
    return Hints(annotations.read_only_hint, annotations.destructive_hint)
