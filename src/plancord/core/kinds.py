"""The closed sets every tool and permission decision shares: what a tool does (``ToolKind``)
and what a permission profile answers (``Permission``). Their own module, so that the gate
and the permission profiles can both use them without importing each other."""

from __future__ import annotations

from enum import StrEnum

__all__ = ["Permission", "ToolKind"]


class ToolKind(StrEnum):
    READ_ONLY = "read_only"
    MUTATING = "mutating"
    PLANNING = "planning"
    INTERACTIVE = "interactive"


class Permission(StrEnum):
    ALLOW = "allow"
    ASK = "ask"
    DENY = "deny"
