"""How each MCP tool is judged by the gate: read-only or mutating.

Why this exists: a server's annotations are the server's word, and the model may be steered
by an attacker who controls the server. So the operator decides first (``read_only`` /
``mutating`` globs per server; ``mutating`` wins over everything), the hints count only for
a server the operator trusts (``trust_hints: true``), and a tool neither settles is a
configuration error naming it (unless the server says ``unclassified: mutating``).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence
from dataclasses import dataclass

from plancord.config.mcp import McpServerConfig
from plancord.core.errors import PlancordError
from plancord.core.gate import ToolKind


class Unclassified(PlancordError):
    """An MCP tool that nothing classifies; the agent does not start."""

    def __init__(self, server: str, tools: Sequence[str]) -> None:
        names = ", ".join(f"`{tool}`" for tool in tools)
        super().__init__(
            f"MCP server `{server}`: tool {names} is neither read-only nor mutating by the "
            "config (list it under `read_only:` or `mutating:`, set `trust_hints: true`, or "
            "`unclassified: mutating`); the agent does not start"
        )
        self.server = server
        self.tools = tuple(tools)


@dataclass(frozen=True, slots=True)
class Hints:
    """The annotations a server gave one tool (None where it said nothing)."""

    read_only: bool | None = None
    destructive: bool | None = None


@dataclass(frozen=True, slots=True)
class Classified:
    kind: ToolKind
    why: str
    """How it was decided: ``operator: mutating``, ``hint: readOnlyHint``, …"""


def _listed(patterns: Sequence[str], tool: str) -> bool:
    return any(fnmatch.fnmatchcase(tool, pattern) for pattern in patterns)


def classify(config: McpServerConfig, tool: str, hints: Hints) -> Classified | None:
    """The kind of ``tool`` under ``config``, or None when nothing decides it."""
    if _listed(config.mutating, tool):
        return Classified(ToolKind.MUTATING, "operator: mutating")
    if _listed(config.read_only, tool):
        return Classified(ToolKind.READ_ONLY, "operator: read_only")
    if config.trust_hints:
        if hints.destructive is True:
            return Classified(ToolKind.MUTATING, "hint: destructiveHint")
        if hints.read_only is True:
            return Classified(ToolKind.READ_ONLY, "hint: readOnlyHint")
        if hints.read_only is False:
            return Classified(ToolKind.MUTATING, "hint: readOnlyHint false")
    if config.unclassified == "mutating":
        return Classified(ToolKind.MUTATING, "unclassified: mutating")
    return None


def classify_all(
    server: str, config: McpServerConfig, tools: Sequence[tuple[str, Hints]]
) -> dict[str, Classified]:
    """Every tool's kind; raises Unclassified naming the tools nothing decides."""
    kinds: dict[str, Classified] = {}
    missing: list[str] = []
    for name, hints in tools:
        decided = classify(config, name, hints)
        if decided is None:
            missing.append(name)
        else:
            kinds[name] = decided
    if missing:
        raise Unclassified(server, missing)
    return kinds
