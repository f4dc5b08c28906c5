"""Intents of decisions on execution results (``core.intents``): opened before git runs,
completed with the decision's record and its audit row in one transaction.

Why this exists apart from ``storage.executions``: the intent is the claim on a result as
well as the note the recovery reads. Opening it is one statement that succeeds only while
the result waits at the version the click named and no other intent of the result is open
(a partial unique index), so the database, not a lock of one process, decides which of two
approvals at once goes ahead, whichever processes they come from.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from plancord.core.changes import ChangeKind
from plancord.core.execution import ResultState
from plancord.core.intents import IntentState, LeaseLost, ResultIntent
from plancord.core.planning import AuditEntry
from plancord.core.results import ResultAction
from plancord.storage.backend import Backend, Tx
from plancord.storage.changes import append_change
from plancord.storage.codec import INSERT_AUDIT, audit_values, intent_fields, ts
from plancord.storage.executions import DECIDE_RESULT, RESULT_MOVED
from plancord.storage.leases import live_lease_sql
from plancord.storage.step_commits import keep_before

_OPEN = (
    "INSERT INTO result_intents (id, plan_id, agent, version, action, actor, actor_name, "
    "detail, owner, state, opened_at) "
    "SELECT ?, plan_id, agent, result_version, ?, ?, ?, ?, ?, 'open', ? FROM executions "
    "WHERE plan_id = ? AND result = 'waiting' AND result_version = ? "
    "ON CONFLICT (plan_id) WHERE state = 'open' DO NOTHING"
)
_CLOSE = (
    "UPDATE result_intents SET state = ?, closed_at = ?, outcome = ? "
    "WHERE id = ? AND owner = ? AND state = 'open'"
)
_OPEN_OF = "SELECT * FROM result_intents WHERE plan_id = ? AND state = 'open'"


@dataclass(frozen=True, slots=True)
class Claim:
    """What opening an intent found: ``opened``, or the open intent in the way (another
    decision is running), or neither (the result no longer waits at that version)."""

    opened: bool
    in_the_way: ResultIntent | None = None


class ResultIntentStore:
    """Reads and writes ``result_intents``; returns ``ResultIntent`` models."""

    def __init__(self, db: Backend) -> None:
        self.db = db

    async def open(self, intent: ResultIntent) -> Claim:
        """Open ``intent`` when its result waits at ``intent.version`` and no other intent
        of it is open."""
        values = (
            intent.id,
            intent.action.value,
            intent.actor,
            intent.actor_name,
            json.dumps(intent.detail),
            intent.owner,
            ts(intent.opened_at),
            intent.plan_id,
            intent.version,
        )

        def work(conn: Tx) -> Claim:
            if conn.execute(_OPEN, values).rowcount == 1:
                return Claim(opened=True)
            row = conn.execute(_OPEN_OF, (intent.plan_id,)).fetchone()
            return Claim(opened=False, in_the_way=_intent(row) if row is not None else None)

        return await self.db.write(work)

    async def decided(
        self,
        intent: ResultIntent,
        state: ResultState,
        at: datetime,
        outcome: str,
        audit: AuditEntry,
    ) -> bool:
        """Merge or Discard done: the result decided, the intent done and the audit row, in
        one transaction. False when the result no longer waited at the intent's version
        (the intent is closed all the same: git did it)."""
        decide = (state.value, intent.actor_name, ts(at), outcome[:1000])
        origin = self.db.origin
        return await self.db.write(
            lambda conn: _complete(
                conn, intent, at, outcome, audit, DECIDE_RESULT, (*decide, intent.plan_id), origin
            )
        )

    async def rolled_back(
        self, intent: ResultIntent, kept: int, pinned: str, at: datetime, audit: AuditEntry
    ) -> bool:
        """Roll back done: the step commits after the first ``kept`` marked, the result
        pinned to ``pinned`` as a new version, the intent done and the audit row."""

        origin = self.db.origin

        def work(conn: Tx) -> bool:
            keep_before(conn, intent.plan_id, kept)
            return _complete(
                conn, intent, at, audit.detail.get("what", ""), audit, RESULT_MOVED,
                (pinned, intent.plan_id), origin,
            )  # fmt: skip

        return await self.db.write(work)

    async def done(
        self, intent: ResultIntent, at: datetime, outcome: str, audit: AuditEntry
    ) -> None:
        """An action that records nothing on the result (Push) done, with its audit row."""

        def work(conn: Tx) -> None:
            _close(conn, intent, IntentState.DONE, at, outcome)
            conn.execute(INSERT_AUDIT, audit_values(audit))

        await self.db.write(work)

    async def undone(
        self, intent: ResultIntent, at: datetime, outcome: str, audit: AuditEntry | None
    ) -> None:
        """Git did not do it (refused, or never reached): the intent closed as undone, with
        its audit row when given; the result is as it was."""

        def work(conn: Tx) -> None:
            _close(conn, intent, IntentState.UNDONE, at, outcome)
            if audit is not None:
                conn.execute(INSERT_AUDIT, audit_values(audit))

        await self.db.write(work)

    async def take_over(self, intent: ResultIntent, owner: str) -> bool:
        """Make ``owner`` the process that finishes ``intent``; False when it is no longer
        open under its old owner (another process took it, or it was closed), or when that
        owner's lease is still live (it is ``owner``'s own only if it is ``owner``)."""
        live = live_lease_sql(self.db.dialect, "result_intents.owner")
        changed = await self.db.execute(
            "UPDATE result_intents SET owner = ? WHERE id = ? AND owner = ? AND state = 'open' "  # noqa: S608 - the database's clock, a constant
            f"AND (owner = ? OR NOT {live})",
            (owner, intent.id, intent.owner, owner),
        )
        return changed == 1

    async def open_intents(self) -> list[ResultIntent]:
        """Every open intent, oldest first."""
        rows = await self.db.fetchall(
            "SELECT * FROM result_intents WHERE state = 'open' ORDER BY opened_at"
        )
        return [_intent(row) for row in rows]

    async def of_plan(self, plan_id: str) -> list[ResultIntent]:
        """Every intent of ``plan_id``'s result, oldest first."""
        rows = await self.db.fetchall(
            "SELECT * FROM result_intents WHERE plan_id = ? ORDER BY opened_at", (plan_id,)
        )
        return [_intent(row) for row in rows]


def _complete(
    conn: Tx,
    intent: ResultIntent,
    at: datetime,
    outcome: str,
    audit: AuditEntry,
    record_sql: str,
    record_values: tuple[Any, ...],
    origin: str,
) -> bool:
    """The record's compare-and-set on the intent's version, the intent done, the audit row,
    and the change every other process redraws the result's card on."""
    recorded = conn.execute(record_sql, (*record_values, intent.version)).rowcount == 1
    _close(conn, intent, IntentState.DONE, at, str(outcome))
    conn.execute(INSERT_AUDIT, audit_values(audit))
    what = {"what": intent.action.value, "recorded": recorded}
    append_change(conn, origin, ChangeKind.RESULT, intent.agent, intent.plan_id, what, at)
    return recorded


def _close(conn: Tx, intent: ResultIntent, state: IntentState, at: datetime, outcome: str) -> None:
    """Close ``intent`` under its owner; ``LeaseLost`` (the transaction rolls back) when it
    is no longer open under that owner: another process took it over."""
    values = (state.value, ts(at), outcome[:1000], intent.id, intent.owner)
    if conn.execute(_CLOSE, values).rowcount != 1:
        raise LeaseLost(
            f"Not recorded here: the {intent.action.label} was taken over by another "
            "process (this one had lost its lease); that process records what git shows."
        )


def _intent(row: Any) -> ResultIntent:
    return ResultIntent(
        **intent_fields(row, "result_intents"),
        version=int(row["version"]),
        action=ResultAction(row["action"]),
    )
