"""The doctor's look at each agent's MCP servers: each started once, alone, in the agent's
workspace (or a scratch repository), with how each of its tools is classified."""

from __future__ import annotations

import asyncio

from plancord.agent.mcp.probe import probe_servers
from plancord.config import Config
from plancord.doctor.findings import Check, failed, passed


def check_mcp_servers(config: Config) -> list[Check]:
    """Each MCP server of each agent: whether it started, and how each tool is classified."""
    agents = {name: config.mcp_servers_for(name) for name in config.agents}
    agents = {name: servers for name, servers in agents.items() if servers}
    if not agents and not config.mcp_servers:
        return []
    found = asyncio.run(
        probe_servers(
            config.mcp_servers, agents, config.sandbox_settings, agents_dir=config.agents_dir
        )
    )
    fix = "fix the server's mcp_servers entry; the agent does not start until then"
    return [
        passed(f"MCP server {p.server} ({p.agent}): {p.detail}")
        if p.started
        else failed(f"MCP server {p.server} ({p.agent})", p.detail, fix)
        for p in found
    ]
