"""Intents of starting an approved plan's execution (``core.intents.StartIntent``): opened
before git makes the branch, completed by the approval's own transaction.

Why this exists apart from ``storage.result_intents``: a start has no execution record yet
to hang on (the record is written with the approval), and its claim is on the agent's
workspace, not on a result. Opening it is one statement that succeeds only while the plan
waits for a decision at the revision the click named, no execution of the agent runs or
waits for a decision on its result, and no other start of the agent is open (a partial
unique index), so the database decides which of two approvals at once goes ahead, whichever
processes they come from.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from plancord.core.errors import ExecutionRefused
from plancord.core.intents import IntentState, StartIntent
from plancord.core.planning import AuditEntry
from plancord.core.ports import ExecutionStart
from plancord.storage.backend import Backend, Tx
from plancord.storage.codec import INSERT_AUDIT, audit_values, intent_fields, ts
from plancord.storage.executions import insert_execution
from plancord.storage.leases import live_lease_sql

_OPEN = (
    "INSERT INTO start_intents (id, agent, plan_id, revision, actor, actor_name, detail, "
    "owner, state, opened_at) "
    "SELECT ?, agent, plan_id, revision, ?, ?, ?, ?, 'open', ? FROM planning_state "
    "WHERE agent = ? AND plan_id = ? AND revision = ? AND phase = 'submitted' "
    "AND NOT EXISTS (SELECT 1 FROM executions WHERE executions.agent = planning_state.agent "
    "AND (executions.ended_at IS NULL OR executions.result = 'waiting' "
    # the agent's newest execution ended and its result not opened yet (it is owed)
    "OR (executions.result IS NULL AND executions.started_at = (SELECT MAX(newer.started_at) "
    "FROM executions AS newer WHERE newer.agent = executions.agent)))) "
    "ON CONFLICT (agent) WHERE state = 'open' DO NOTHING"
)
_CLOSE = (
    "UPDATE start_intents SET state = ?, closed_at = ?, outcome = ? "
    "WHERE id = ? AND owner = ? AND state = 'open'"
)
_OPEN_OF = "SELECT * FROM start_intents WHERE agent = ? AND state = 'open'"


@dataclass(frozen=True, slots=True)
class StartClaim:
    """What opening a start found: ``opened``, or the open start in the way (another
    approval of the agent is running), or neither (the plan no longer waits at that
    revision, or an execution of the agent runs or waits for a decision)."""

    opened: bool
    in_the_way: StartIntent | None = None


class StartIntentStore:
    """Reads and writes ``start_intents``; returns ``StartIntent`` models."""

    def __init__(self, db: Backend) -> None:
        self.db = db

    async def open(self, intent: StartIntent) -> StartClaim:
        """Open ``intent`` when its plan waits for a decision at ``intent.revision``, the
        agent has no execution running or waiting, and no other start of it is open."""
        values = (
            intent.id,
            intent.actor,
            intent.actor_name,
            json.dumps(intent.detail),
            intent.owner,
            ts(intent.opened_at),
            intent.agent,
            intent.plan_id,
            intent.revision,
        )

        def work(conn: Tx) -> StartClaim:
            if conn.execute(_OPEN, values).rowcount == 1:
                return StartClaim(opened=True)
            row = conn.execute(_OPEN_OF, (intent.agent,)).fetchone()
            return StartClaim(opened=False, in_the_way=_intent(row) if row is not None else None)

        return await self.db.write(work)

    async def note(self, intent: StartIntent) -> bool:
        """Write ``intent.detail`` (what git is about to do) on the open intent; False when
        it is no longer open under this owner."""
        changed = await self.db.execute(
            "UPDATE start_intents SET detail = ? WHERE id = ? AND owner = ? AND state = 'open'",
            (json.dumps(intent.detail), intent.id, intent.owner),
        )
        return changed == 1

    async def undone(
        self, intent: StartIntent, at: datetime, outcome: str, audit: AuditEntry | None
    ) -> bool:
        """Git's branch is undone (or was never made): the intent closed as undone, with its
        audit row when given; False when it was no longer open."""

        def work(conn: Tx) -> bool:
            closed = conn.execute(
                _CLOSE, (IntentState.UNDONE.value, ts(at), outcome[:1000], intent.id, intent.owner)
            ).rowcount
            if closed == 1 and audit is not None:
                conn.execute(INSERT_AUDIT, audit_values(audit))
            return closed == 1

        return await self.db.write(work)

    async def take_over(self, intent: StartIntent, owner: str) -> bool:
        """Make ``owner`` the process that finishes ``intent``; False when it is no longer
        open under its old owner (another process took it, or it was closed), or when that
        owner's lease is still live (it is ``owner``'s own only if it is ``owner``)."""
        live = live_lease_sql(self.db.dialect, "start_intents.owner")
        changed = await self.db.execute(
            "UPDATE start_intents SET owner = ? WHERE id = ? AND owner = ? AND state = 'open' "  # noqa: S608 - the database's clock, a constant
            f"AND (owner = ? OR NOT {live})",
            (owner, intent.id, intent.owner, owner),
        )
        return changed == 1

    async def get(self, intent_id: str) -> StartIntent | None:
        row = await self.db.fetchone("SELECT * FROM start_intents WHERE id = ?", (intent_id,))
        return _intent(row) if row is not None else None

    async def open_intents(self) -> list[StartIntent]:
        """Every open start, oldest first."""
        rows = await self.db.fetchall(
            "SELECT * FROM start_intents WHERE state = 'open' ORDER BY opened_at"
        )
        return [_intent(row) for row in rows]

    async def of_plan(self, plan_id: str) -> list[StartIntent]:
        """Every start of ``plan_id``, oldest first."""
        rows = await self.db.fetchall(
            "SELECT * FROM start_intents WHERE plan_id = ? ORDER BY opened_at", (plan_id,)
        )
        return [_intent(row) for row in rows]

    async def plan_waits(self, intent: StartIntent) -> bool:
        """Whether ``intent``'s plan still waits for a decision at its revision."""
        row = await self.db.fetchone(
            "SELECT 1 FROM planning_state WHERE agent = ? AND plan_id = ? AND revision = ? "
            "AND phase = 'submitted'",
            (intent.agent, intent.plan_id, intent.revision),
        )
        return row is not None


def record_start(conn: Tx, start: ExecutionStart, at: datetime) -> None:
    """In the approval's transaction: the execution recorded and its start intent done.
    Raises ``ExecutionRefused`` (the whole transaction rolls back) when the intent is no
    longer open: the branch was undone meanwhile, so the approval must not commit."""
    done = conn.execute(
        _CLOSE,
        (
            IntentState.DONE.value,
            ts(at),
            f"started on `{start.record.branch}`",
            start.intent,
            start.owner,
        ),
    )
    if done.rowcount != 1:
        raise ExecutionRefused(
            "Not approved: the branch made for this approval was undone meanwhile (the "
            "approval was taken for interrupted). Nothing executes; approve again."
        )
    insert_execution(conn, start.record)


def _intent(row: Any) -> StartIntent:
    return StartIntent(**intent_fields(row, "start_intents"), revision=int(row["revision"]))
