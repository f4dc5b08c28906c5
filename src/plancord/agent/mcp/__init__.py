"""MCP servers per agent: started in the agent's sandbox, every tool classified for the gate.

``hub`` starts an agent's servers and gives the registry its tools, ``connection`` keeps one
server running (restarting it with backoff), ``spawn`` builds a stdio server's sandboxed
process, ``stdio`` carries its messages (each bounded), ``stderr`` keeps the end of what it
writes there, ``classify`` decides read-only or
mutating, ``tool`` turns a remote tool into one of the agent's tools.
"""

from plancord.agent.mcp.classify import Classified, Hints, Unclassified, classify
from plancord.agent.mcp.hub import McpConfigProblem, McpHub, ServerStatus

__all__ = [
    "Classified",
    "Hints",
    "McpConfigProblem",
    "McpHub",
    "ServerStatus",
    "Unclassified",
    "classify",
]
