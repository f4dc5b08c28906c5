"""Remembered rules for tool calls: "Allow always" and "Deny always", and the operator's own.

A rule names a decision (allow, ask, deny) for one tool, for one agent (an operator rule may
name every agent), narrowed for the shell to an argv prefix as the read-only filter's reader
parsed the command (``core.shell.readonly.argv_prefix``), never a text prefix, and for file
tools to a path pattern inside the workspace. Operator rules come from the config
(``rules.calls``); members' rules from a click on a permission card, kept in the store with
who made them and when, and perhaps an expiry.

Which rule applies is one function, :func:`applicable`, and its order is the table in
``docs/plan-mode.md``: operator rules over members' rules; within a tier deny over ask over
allow; among rules of one tier and one decision, the most specific scope. Rules never apply
while planning (the gate does not ask them), and a rule only decides whether a human is
asked: the call runs in the sandbox it would run in anyway.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

from plancord.core.drift import matches_files
from plancord.core.kinds import Permission

__all__ = [
    "CallFacts",
    "CallRule",
    "RuleScope",
    "RuleTier",
    "applicable",
    "parse_expiry",
    "workspace_path",
]

FILE_TOOLS = frozenset({"create_file", "str_replace"})
"""Tools whose rules narrow by a path pattern inside the workspace."""

SHELL_TOOLS = frozenset({"bash_execute"})
"""Tools whose rules narrow by an argv prefix."""

_ORDER = {Permission.DENY: 0, Permission.ASK: 1, Permission.ALLOW: 2}


class RuleTier(StrEnum):
    OPERATOR = "operator"
    """From the config file: over every member's rule."""
    MEMBER = "member"
    """Made on a permission card by a member the approver policy accepts."""


@dataclass(frozen=True, slots=True)
class RuleScope:
    """What a rule covers: one tool, and for the shell an argv prefix (``("npm", "test")``
    covers ``npm test`` and ``npm test --watch``, never ``npm testx`` or ``npm test; rm x``),
    for file tools a path pattern relative to the workspace (``src/**``; ``*`` stays inside
    one folder). Neither: every call of the tool."""

    tool: str
    argv: tuple[str, ...] | None = None
    path: str | None = None

    def __post_init__(self) -> None:
        if self.argv is not None and self.path is not None:
            raise ValueError("a rule's scope is an argv prefix or a path pattern, not both")
        if self.argv is not None and not self.argv:
            raise ValueError("an argv prefix needs at least the program's name")
        if self.path is not None and path_pattern_problem(self.path) is not None:
            raise ValueError(str(path_pattern_problem(self.path)))

    @property
    def specificity(self) -> int:
        """How much the scope names: words of the prefix, or literal characters of the
        pattern; more is more specific."""
        if self.argv is not None:
            return 1000 + len(self.argv)
        if self.path is not None:
            return 1000 + len(self.path.replace("*", "").replace("?", ""))
        return 0

    def covers(self, facts: CallFacts) -> bool:
        if facts.tool != self.tool:
            return False
        if self.argv is not None:
            return facts.argv is not None and facts.argv[: len(self.argv)] == self.argv
        if self.path is not None:
            return facts.path is not None and matches_files((self.path,), facts.path)
        return True

    def describe(self) -> str:
        """The scope in words, as the card's confirmation and the listings show it."""
        if self.argv is not None:
            shown = " ".join(self.argv)
            return f"`{self.tool}` running `{shown}` (with any further arguments), alone"
        if self.path is not None:
            return f"`{self.tool}` on `{self.path}` in the workspace"
        return f"every `{self.tool}` call"

    def to_json(self) -> dict[str, Any]:
        return {
            "tool": self.tool,
            "argv": list(self.argv) if self.argv else None,
            "path": self.path,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RuleScope:
        argv = data.get("argv")
        return cls(
            tool=str(data["tool"]),
            argv=tuple(str(w) for w in argv) if argv else None,
            path=str(data["path"]) if data.get("path") else None,
        )


@dataclass(frozen=True, slots=True)
class CallFacts:
    """A tool call as rules see it: the agent, the tool whose permission it needs, the argv
    of a shell command that is one simple command (None otherwise), the workspace-relative
    path of a file tool's call (None when it is not one inside the workspace)."""

    agent: str
    tool: str
    argv: tuple[str, ...] | None = None
    path: str | None = None


@dataclass(frozen=True, slots=True)
class CallRule:
    id: str
    tier: RuleTier
    decision: Permission
    agent: str | None
    """None: every agent (operator rules only)."""
    scope: RuleScope
    created_by: str
    created_at: datetime | None = None
    expires_at: datetime | None = None

    def applies(self, facts: CallFacts, now: datetime) -> bool:
        if self.expires_at is not None and now >= self.expires_at:
            return False
        if self.agent is not None and self.agent != facts.agent:
            return False
        return self.scope.covers(facts)

    def label(self) -> str:
        """``member rule r1a2b3c4 (allow)``: how a card and a decision record name it."""
        return f"{self.tier.value} rule {self.id} ({self.decision.value})"

    def describe(self) -> str:
        who = self.agent or "every agent"
        expiry = f", until {self.expires_at:%Y-%m-%d %H:%M} UTC" if self.expires_at else ""
        return f"{self.decision.value} {self.scope.describe()} for {who}{expiry}"


def applicable(rules: Iterable[CallRule], facts: CallFacts, now: datetime) -> CallRule | None:
    """The one rule that decides ``facts`` (None: no rule does): operator over member, then
    deny over ask over allow, then the most specific scope, then the oldest id."""
    fitting = [rule for rule in rules if rule.applies(facts, now)]
    if not fitting:
        return None
    return min(
        fitting,
        key=lambda r: (
            0 if r.tier is RuleTier.OPERATOR else 1,
            _ORDER[r.decision],
            -r.scope.specificity,
            r.id,
        ),
    )


def workspace_path(path: str) -> str | None:
    """``path`` as a normal workspace-relative path, or None when it leaves the workspace
    (absolute, ``..`` above the root) or names the root itself."""
    if not path or path.startswith("/") or "\x00" in path:
        return None
    normal = posixpath.normpath(path)
    if normal in (".", "") or normal == ".." or normal.startswith("../"):
        return None
    return normal


def path_pattern_problem(pattern: str) -> str | None:
    """Why ``pattern`` is not a path pattern inside the workspace (None: it is one)."""
    literal = pattern.replace("**", "x").replace("*", "x").replace("?", "x")
    if workspace_path(literal) != literal:
        return f"{pattern!r} is not a relative path inside the workspace"
    if any(c in pattern for c in "[]{}"):
        return f"{pattern!r}: only `*`, `**` and `?` are patterns here"
    return None


_EXPIRY = re.compile(r"(?:for\s+)?(\d{1,4})\s*(minute|hour|day|week)s?", re.IGNORECASE)
_UNITS = {"minute": 60, "hour": 3600, "day": 86400, "week": 7 * 86400}


def parse_expiry(text: str) -> timedelta | None:
    """``for 1 day``, ``2 hours``, ``30 minutes``, ``1 week``; None for ``always`` or
    nothing. Raises ``ValueError`` naming the forms it takes for anything else."""
    cleaned = text.strip().lower()
    if cleaned in ("", "always", "forever"):
        return None
    match = _EXPIRY.fullmatch(cleaned)
    if match is None or int(match[1]) == 0:
        raise ValueError(
            f"{text!r} is not an expiry: write `for 1 day`, `2 hours`, `30 minutes`, "
            "`1 week`, or `always`"
        )
    return timedelta(seconds=int(match[1]) * _UNITS[match[2].lower()])
