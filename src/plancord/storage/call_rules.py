"""Members' remembered rules for tool calls (``core.call_rules``), kept in ``call_rules``.

Why this reads the store at every call: a rule revoked in one process (``/agent rules`` in
the bot, ``plancord rules revoke`` in a shell) must stop deciding at the next call in every
process, so no process keeps a copy it would have to be told about. The read is one indexed
query on ``(agent, tool)``; the rows are few.
"""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from plancord.core.call_rules import CallRule, RuleScope, RuleTier
from plancord.core.kinds import Permission
from plancord.storage.backend import Backend
from plancord.storage.codec import parse_required_ts, parse_ts, ts


@dataclass(frozen=True, slots=True)
class StoredRule:
    """A member's rule as kept: the rule, and who revoked it and when (None: in force
    unless expired)."""

    rule: CallRule
    revoked_by: str | None = None
    revoked_at: datetime | None = None

    def in_force(self, now: datetime) -> bool:
        expires = self.rule.expires_at
        return self.revoked_at is None and (expires is None or now < expires)

    def status(self, now: datetime) -> str:
        if self.revoked_at is not None:
            return f"revoked by {self.revoked_by} at {self.revoked_at:%Y-%m-%d %H:%M} UTC"
        if not self.in_force(now):
            return "expired"
        return "in force"


def new_rule_id() -> str:
    return "r" + secrets.token_hex(4)


class CallRuleStore:
    """Reads and writes ``call_rules``; returns ``CallRule`` values."""

    def __init__(self, db: Backend) -> None:
        self.db = db

    async def add(self, rule: CallRule) -> CallRule:
        """Keep ``rule`` (a member's); the rule as kept."""
        if rule.agent is None or rule.tier is not RuleTier.MEMBER:
            raise ValueError("the store keeps members' rules for one agent")
        await self.db.execute(
            "INSERT INTO call_rules (id, agent, tool, decision, scope, created_by, created_at, "
            "expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                rule.id,
                rule.agent,
                rule.scope.tool,
                rule.decision.value,
                json.dumps(rule.scope.to_json(), sort_keys=True),
                rule.created_by,
                ts(rule.created_at),
                ts(rule.expires_at),
            ),
        )
        return rule

    async def in_force(self, agent: str, tool: str, now: datetime) -> list[CallRule]:
        """The agent's rules for ``tool`` neither revoked nor expired at ``now``."""
        rows = await self.db.fetchall(
            "SELECT * FROM call_rules WHERE agent = ? AND tool = ? AND revoked_at IS NULL",
            (agent, tool),
        )
        kept = (_stored(row) for row in rows)
        return [stored.rule for stored in kept if stored.in_force(now)]

    async def listed(self, agent: str | None = None) -> list[StoredRule]:
        """Every rule kept (of ``agent``, when given), revoked and expired ones too, oldest
        first."""
        if agent is None:
            rows = await self.db.fetchall("SELECT * FROM call_rules ORDER BY created_at, id")
        else:
            rows = await self.db.fetchall(
                "SELECT * FROM call_rules WHERE agent = ? ORDER BY created_at, id",
                (agent,),
            )
        return [_stored(row) for row in rows]

    async def get(self, rule_id: str) -> StoredRule | None:
        row = await self.db.fetchone("SELECT * FROM call_rules WHERE id = ?", (rule_id,))
        return _stored(row) if row is not None else None

    async def revoke(self, rule_id: str, by: str, at: datetime) -> bool:
        """Revoke the rule ``rule_id``; False when there is none in force by that id."""
        changed = await self.db.execute(
            "UPDATE call_rules SET revoked_by = ?, revoked_at = ? "
            "WHERE id = ? AND revoked_at IS NULL",
            (by, ts(at), rule_id),
        )
        return changed == 1


def _stored(row: Any) -> StoredRule:
    rule = CallRule(
        id=row["id"],
        tier=RuleTier.MEMBER,
        decision=Permission(row["decision"]),
        agent=row["agent"],
        scope=RuleScope.from_json(json.loads(row["scope"])),
        created_by=row["created_by"],
        created_at=parse_required_ts(row["created_at"], "call_rules"),
        expires_at=parse_ts(row["expires_at"]),
    )
    return StoredRule(rule, row["revoked_by"], parse_ts(row["revoked_at"]))
