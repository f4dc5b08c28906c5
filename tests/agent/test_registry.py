"""The default tool set: order, kinds, schemas, and the registry's refusal of unclassified tools."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest
from pydantic import BaseModel, ValidationError

from plancord.agent.mcp.background import BackgroundLoop
from plancord.agent.mcp.connection import Endpoint, McpConnection
from plancord.agent.mcp.tool import McpTool, mcp_tool
from plancord.agent.requests import shown_while_planning
from plancord.agent.tools import default_registry, default_tools
from plancord.agent.tools.base import Tool, ToolContext, ToolRegistry, ToolRegistryError, ToolResult
from plancord.core.gate import ToolKind

EXPECTED = [
    ("view", ToolKind.READ_ONLY),
    ("glob", ToolKind.READ_ONLY),
    ("grep", ToolKind.READ_ONLY),
    ("bash_execute", ToolKind.MUTATING),
    ("create_file", ToolKind.MUTATING),
    ("str_replace", ToolKind.MUTATING),
    ("git_status", ToolKind.READ_ONLY),
    ("git_diff", ToolKind.READ_ONLY),
    ("git_log", ToolKind.READ_ONLY),
    ("git_commit", ToolKind.MUTATING),
    ("git_branch", ToolKind.MUTATING),
    ("git_checkout", ToolKind.MUTATING),
    ("git_push", ToolKind.MUTATING),
    ("self_edit_system_prompt", ToolKind.MUTATING),
    ("self_edit_docs", ToolKind.MUTATING),
    ("ask_user", ToolKind.INTERACTIVE),
    ("enter_plan_mode", ToolKind.PLANNING),
    ("submit_plan", ToolKind.PLANNING),
    ("update_plan_step", ToolKind.PLANNING),
    ("complete_plan", ToolKind.PLANNING),
]


def test_default_tools_order_and_kinds() -> None:
    assert [(tool.name, tool.kind) for tool in default_tools()] == EXPECTED


def test_the_registry_accepts_the_default_tools() -> None:
    registry = default_registry()
    schemas = registry.schemas()
    assert [s["name"] for s in schemas] == [name for name, _ in EXPECTED]
    for schema in schemas:
        assert schema["input_schema"]["type"] == "object"
        assert len(schema["description"]) > 40


@pytest.mark.parametrize("tool", default_tools(), ids=lambda t: t.name)
def test_every_input_forbids_unknown_fields_and_describes_its_fields(tool: Tool[Any]) -> None:
    schema = tool.Input.model_json_schema()
    assert schema.get("additionalProperties") is False
    for name, field in schema.get("properties", {}).items():
        assert field.get("description"), f"{tool.name}.{name} has no description"
    with pytest.raises(ValidationError):
        tool.Input.model_validate({"unexpected": 1})


def test_schemas_are_stable_between_calls() -> None:
    assert default_registry().schemas() == default_registry().schemas()


class _NoInput(BaseModel):
    pass


class UnclassifiedTool(Tool[_NoInput]):
    name: ClassVar[str] = "unclassified"
    description: ClassVar[str] = "A tool that forgot to say what kind it is."
    Input: ClassVar[type[BaseModel]] = _NoInput

    async def run(self, args: _NoInput, ctx: ToolContext) -> ToolResult:
        return ToolResult("ran")


def test_the_registry_refuses_a_tool_without_a_kind() -> None:
    with pytest.raises(ToolRegistryError, match="declares no ToolKind"):
        ToolRegistry([*default_tools(), UnclassifiedTool()])


def test_the_registry_refuses_duplicate_names() -> None:
    tools = default_tools()
    with pytest.raises(ToolRegistryError, match="two tools are named 'view'"):
        ToolRegistry([*tools, tools[0]])


# -- what the model is shown is worked out once ---------------------------------------------


def _remote_tool(name: str, properties: dict[str, Any]) -> McpTool:
    """An MCP tool as the hub makes one (its connection is never started)."""
    connection = McpConnection(
        "tracker",
        Endpoint(url="http://127.0.0.1:9/mcp"),
        loop=BackgroundLoop(),
        call_timeout=1.0,
        startup_timeout=1.0,
    )
    schema = {"type": "object", "properties": properties}
    return mcp_tool(
        connection, name, kind=ToolKind.READ_ONLY, description=None, input_schema=schema
    )


class AgentsOwnTools:
    """The ``AgentTools`` an MCP hub is to the registry: each agent's own tools, which
    change when its servers start again."""

    def __init__(self) -> None:
        self.tools: dict[str, tuple[Tool[Any], ...]] = {}

    async def tools_for(self, agent: str) -> tuple[Tool[Any], ...]:
        return self.tools.get(agent, ())


def _fresh(tools: list[Tool[Any]]) -> list[dict[str, Any]]:
    """The schemas built from scratch, as every request built them before they were kept."""
    return [
        {
            "name": tool.name,
            "description": tool.description,
            "input_schema": tool.input_schema
            if isinstance(tool, McpTool)
            else tool.Input.model_json_schema(),
        }
        for tool in tools
    ]


async def test_agents_with_the_same_tools_share_one_registry_and_its_schemas() -> None:
    own = AgentsOwnTools()
    read = _remote_tool("read_issue", {"number": {"type": "integer"}})
    own.tools = {"ada": (read,), "bea": (read,)}
    shared = ToolRegistry(default_tools(), extensions=[own])

    ada, bea = await shared.for_agent("ada"), await shared.for_agent("bea")

    assert ada is bea
    assert ada.schemas() == _fresh([*default_tools(), read])
    assert ada.schemas() is not ada.schemas(), "each caller gets a list of its own"
    assert await shared.for_agent("cid") is shared


async def test_new_mcp_tools_make_a_new_registry_and_the_old_one_is_dropped() -> None:
    own = AgentsOwnTools()
    before = _remote_tool("read_issue", {"number": {"type": "integer"}})
    own.tools = {"ada": (before,)}
    shared = ToolRegistry(default_tools(), extensions=[own])
    first = await shared.for_agent("ada")
    assert await shared.for_agent("ada") is first

    after = _remote_tool("read_issue", {"number": {"type": "integer"}, "full": {"type": "boolean"}})
    own.tools = {"ada": (after,)}
    second = await shared.for_agent("ada")

    assert second is not first
    assert second.schemas()[-1]["input_schema"]["properties"]["full"] == {"type": "boolean"}
    assert second.schemas() == _fresh([*default_tools(), after])
    assert list(shared._by_set) == [(after,)], "the registry of the old tools is kept"
    own.tools = {}
    assert await shared.for_agent("ada") is shared
    assert shared._by_set == {}


def test_a_filtered_schema_list_is_the_filter_applied_to_fresh_schemas() -> None:
    registry = default_registry()
    planning = registry.schemas(shown_while_planning)

    assert planning == _fresh([t for t in default_tools() if shown_while_planning(t)])
    assert registry.schemas(shown_while_planning) == planning
    assert "create_file" not in {s["name"] for s in planning}
    assert registry.schemas() == _fresh(default_tools())
