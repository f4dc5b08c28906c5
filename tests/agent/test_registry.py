"""The default tool set: order, kinds, schemas, and the registry's refusal of unclassified tools."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest
from pydantic import BaseModel, ValidationError

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
    assert len(registry) == 20
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
