"""An MCP server's tool as one of the agent's tools: ``mcp__<server>__<tool>``.

Why this exists: the gate, the permission profiles, the cards, drift and the audit all work
on ``Tool`` objects, so each remote tool becomes one, with the kind its classification gave
it and the server's own input schema; the server validates the arguments it receives.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from plancord.agent.mcp.connection import McpConnection, PhaseEndpoints
from plancord.agent.tools.base import Tool, ToolContext, ToolResult
from plancord.core.gate import ToolKind

PREFIX = "mcp__"


class McpArguments(BaseModel):
    """Whatever the model passes; the server's schema is what the model was shown."""

    model_config = ConfigDict(extra="allow")


def qualified_name(server: str, tool: str) -> str:
    return f"{PREFIX}{server}__{tool}"


class McpTool(Tool[McpArguments]):
    """One remote tool; ``name``, ``kind`` and ``description`` are set per tool by
    :func:`mcp_tool`, which makes a subclass for each."""

    Input = McpArguments

    def __init__(
        self,
        connection: McpConnection,
        remote: str,
        input_schema: dict[str, Any],
        *,
        refused_while_planning: str | None = None,
        phases: PhaseEndpoints | None = None,
    ) -> None:
        self.connection = connection
        self.phases = phases
        """For a server whose workspace follows the phase: where it runs in each."""
        self.remote = remote
        self.input_schema = input_schema
        self.refused_while_planning = refused_while_planning
        """For a server that writes or reaches the network (it runs only outside plan
        mode): the refusal its calls get while planning (and in sub-agents)."""

    def schema(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "input_schema": self.input_schema,
        }

    async def run(self, args: McpArguments, ctx: ToolContext) -> ToolResult:
        if ctx.phase.is_planning and self.refused_while_planning is not None:
            return ToolResult.error(self.refused_while_planning)
        if self.phases is not None:
            await self.connection.switch_to(self.phases.of(ctx.phase.is_planning))
        answer = await self.connection.call(
            self.remote, args.model_dump(mode="json"), max_output=ctx.shell.max_output_bytes
        )
        if answer.stopped is not None:
            await ctx.notifier.say(
                ctx.agent.name,
                f"⚠️ MCP server `{self.connection.server}` was stopped: {answer.stopped}. "
                "It is started again on the next call.",
            )
        return answer.result


def mcp_tool(
    connection: McpConnection,
    remote: str,
    *,
    kind: ToolKind,
    description: str | None,
    input_schema: dict[str, Any],
    refused_while_planning: str | None = None,
    phases: PhaseEndpoints | None = None,
) -> McpTool:
    """The tool ``remote`` of ``connection``'s server, classified as ``kind``."""
    schema = dict(input_schema) if input_schema else {}
    schema.setdefault("type", "object")
    fallback = f"The `{remote}` tool of MCP server `{connection.server}`."
    text = (description or "").strip() or fallback
    label = "read-only" if kind is ToolKind.READ_ONLY else "mutating"
    bound = type(
        f"McpTool_{connection.server}_{remote}",
        (McpTool,),
        {
            "name": qualified_name(connection.server, remote),
            "kind": kind,
            "description": f"[MCP {connection.server}, {label}] {text}"[:4000],
        },
    )
    tool: McpTool = bound(
        connection, remote, schema, refused_while_planning=refused_while_planning, phases=phases
    )
    return tool
