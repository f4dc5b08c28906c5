"""The plan the checkpoint tests share: a plain step, then a 🔴 step, and the calls that do
each step's work without announcing it."""

from __future__ import annotations

from tests.fakes.anthropic_server import ToolCall, tool_turn

PLAN = {
    "summary": "Migrate the database",
    "steps": [
        {"description": "Write the migration", "tools": ["create_file"]},
        {"description": "Drop the old table", "tools": ["bash_execute"], "risk": "high"},
    ],
}

WRITE = tool_turn(ToolCall("create_file", {"path": "migration.sql", "content": "drop;\n"}))
DROP = tool_turn(ToolCall("bash_execute", {"command": "touch dropped"}))
