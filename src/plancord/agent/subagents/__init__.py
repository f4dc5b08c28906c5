"""Read-only sub-agents: ``explore`` hands a question to a fresh conversation that may only
read (file tools, the read-only shell, read-only MCP tools) under plan mode's rules."""

from plancord.agent.subagents.explore import ExploreLimits, ExploreTool, SubAgents

__all__ = ["ExploreLimits", "ExploreTool", "SubAgents"]
