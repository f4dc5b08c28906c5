"""How an MCP tool is judged: the operator first (mutating wins), hints only when trusted."""

from __future__ import annotations

from typing import Any

import pytest

from plancord.agent.mcp import Hints, Unclassified, classify
from plancord.agent.mcp.classify import classify_all
from plancord.config.mcp import McpServerConfig
from plancord.core.gate import ToolKind

READ_HINT = Hints(read_only=True)
DESTRUCTIVE = Hints(read_only=False, destructive=True)


def server(**settings: Any) -> McpServerConfig:
    return McpServerConfig(command="/usr/bin/server", **settings)


@pytest.mark.parametrize(
    ("settings", "hints", "kind"),
    [
        ({"read_only": ["get_*"]}, Hints(), ToolKind.READ_ONLY),
        ({"mutating": ["get_*"]}, Hints(), ToolKind.MUTATING),
        ({"read_only": ["*"], "mutating": ["get_issue"]}, Hints(), ToolKind.MUTATING),
        ({"mutating": ["get_*"], "trust_hints": True}, READ_HINT, ToolKind.MUTATING),
        ({"trust_hints": True}, READ_HINT, ToolKind.READ_ONLY),
        ({"trust_hints": True}, DESTRUCTIVE, ToolKind.MUTATING),
        ({"trust_hints": True}, Hints(read_only=True, destructive=True), ToolKind.MUTATING),
        ({"unclassified": "mutating"}, READ_HINT, ToolKind.MUTATING),
        ({"trust_hints": True, "unclassified": "mutating"}, Hints(), ToolKind.MUTATING),
    ],
)
def test_classification(settings: dict[str, Any], hints: Hints, kind: ToolKind) -> None:
    decided = classify(server(**settings), "get_issue", hints)
    assert decided is not None and decided.kind is kind


def test_hints_count_only_when_the_operator_trusts_them() -> None:
    assert classify(server(), "get_issue", READ_HINT) is None


def test_an_unclassified_tool_is_an_error_naming_it_on_one_line() -> None:
    with pytest.raises(Unclassified) as raised:
        classify_all(
            "tracker", server(read_only=["get_*"]), [("get_issue", Hints()), ("x", Hints())]
        )
    assert "`x`" in str(raised.value) and "`tracker`" in str(raised.value)
    assert "\n" not in str(raised.value)


def test_env_takes_only_file_secrets() -> None:
    with pytest.raises(ValueError, match="only NAME_FILE"):
        server(env={"TOKEN": "/run/secrets/token"})
    with pytest.raises(ValueError, match="either `command`"):
        McpServerConfig(command="x", url="https://example.com/mcp")
