"""Decision records of tool calls (``core.call_records``), kept in ``call_records``.

Written many at a time (the runtime batches them, ``agent.call_log``), read by agent and
plan, and bounded: each write prunes the plans it touched to the newest ``keep_per_plan``
records and drops records older than the retention.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from plancord.core.call_records import CallOutcome, CallRecord
from plancord.core.decider import Decider
from plancord.storage.backend import Backend, Tx
from plancord.storage.codec import parse_required_ts, ts

_INSERT = (
    "INSERT INTO call_records (id, seq, agent, plan_id, revision, phase, step, tool, digest, "
    "decider, rule_id, actor, reason, outcome, at) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
_PRUNE_PLAN = (
    "DELETE FROM call_records WHERE plan_id = ? AND seq < (SELECT MIN(seq) FROM "
    "(SELECT seq FROM call_records WHERE plan_id = ? ORDER BY seq DESC LIMIT ?) AS kept)"
)
_ANSWERED = ("permission-allowed", "permission-denied")


class CallRecordStore:
    def __init__(self, db: Backend) -> None:
        self.db = db

    async def add_many(
        self, records: Sequence[CallRecord], keep_per_plan: int, older_than: datetime
    ) -> None:
        """Keep ``records`` in one transaction, then bound what is kept."""
        if not records:
            return
        plans = sorted({r.plan_id for r in records if r.plan_id is not None})

        def work(conn: Tx) -> None:
            conn.executemany(_INSERT, [_values(r) for r in records])
            for plan_id in plans:
                conn.execute(_PRUNE_PLAN, (plan_id, plan_id, keep_per_plan))
            conn.execute("DELETE FROM call_records WHERE at < ?", (ts(older_than),))

        await self.db.write(work)

    async def recent(
        self, agent: str, plan_id: str | None = None, limit: int = 20
    ) -> list[CallRecord]:
        """The agent's newest ``limit`` records (of ``plan_id``, when given), oldest first."""
        if plan_id is None:
            rows = await self.db.fetchall(
                "SELECT * FROM call_records WHERE agent = ? ORDER BY seq DESC LIMIT ?",
                (agent, limit),
            )
        else:
            rows = await self.db.fetchall(
                "SELECT * FROM call_records WHERE agent = ? AND plan_id = ? "
                "ORDER BY seq DESC LIMIT ?",
                (agent, plan_id, limit),
            )
        return [_record(row) for row in reversed(rows)]

    async def of_plan(self, plan_id: str) -> list[CallRecord]:
        rows = await self.db.fetchall(
            "SELECT * FROM call_records WHERE plan_id = ? ORDER BY seq", (plan_id,)
        )
        return [_record(row) for row in rows]

    async def answered_by(self, agent: str, action: str) -> str | None:
        """Who answered the agent's newest permission card for ``action`` (its audit row's
        actor), or None when the newest answer is for another action."""
        row = await self.db.fetchone(
            "SELECT actor, detail FROM audit_log WHERE agent = ? AND action IN (?, ?) "
            "ORDER BY id DESC LIMIT 1",
            (agent, *_ANSWERED),
        )
        if row is None:
            return None
        detail = json.loads(row["detail"] or "{}")
        return str(row["actor"]) if detail.get("action") == action else None


def _values(r: CallRecord) -> tuple[Any, ...]:
    return (
        r.id,
        r.seq,
        r.agent,
        r.plan_id,
        r.revision,
        r.phase,
        r.step,
        r.tool,
        r.digest,
        r.decider.value,
        r.rule_id,
        r.actor,
        r.reason,
        r.outcome.value,
        ts(r.at),
    )


def _record(row: Any) -> CallRecord:
    return CallRecord(
        id=row["id"],
        seq=int(row["seq"]),
        agent=row["agent"],
        plan_id=row["plan_id"],
        revision=row["revision"],
        phase=row["phase"],
        step=row["step"],
        tool=row["tool"],
        digest=row["digest"],
        decider=Decider(row["decider"]),
        rule_id=row["rule_id"],
        actor=row["actor"],
        reason=row["reason"],
        outcome=CallOutcome(row["outcome"]),
        at=parse_required_ts(row["at"], "call_records"),
    )
