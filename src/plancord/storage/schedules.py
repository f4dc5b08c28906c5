"""Schedules and their runs (``core.schedules``) in the store, on either engine.

Why claiming is one statement pair in one transaction: several processes may look at the
same due schedule at once. Each moves its ``next_run_at`` on under the version it read and
writes the run in the same transaction; the version lets exactly one of them through, and
the run's key (schedule, due time) would refuse a second row even then.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from plancord.core.planning import AuditEntry
from plancord.core.schedules import RunOutcome, Schedule, ScheduleRun, ScheduleState, WhenBusy
from plancord.storage.backend import Backend, Tx
from plancord.storage.codec import INSERT_AUDIT, audit_values, parse_required_ts, parse_ts, ts

_INSERT = (
    "INSERT INTO schedules (id, agent, task, cron, every_seconds, anchor, tz, note, when_busy, "
    "max_runs_per_day, created_by, created_by_name, created_at, state, next_run_at, version) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
_UPDATE = (
    "UPDATE schedules SET state = ?, next_run_at = ?, version = ? WHERE id = ? AND version = ?"
)
_INSERT_RUN = (
    "INSERT INTO schedule_runs (schedule_id, due_at, agent, owner, claimed_at, outcome, missed) "
    "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (schedule_id, due_at) DO NOTHING"
)


class SqlScheduleStore:
    """Reads and writes ``schedules`` and ``schedule_runs``; returns the core's models."""

    def __init__(self, db: Backend) -> None:
        self.db = db

    async def create(self, schedule: Schedule, audit: AuditEntry) -> None:
        def work(conn: Tx) -> None:
            conn.execute(_INSERT, _values(schedule))
            conn.execute(INSERT_AUDIT, audit_values(audit))

        await self.db.write(work)

    async def get(self, schedule_id: str) -> Schedule | None:
        row = await self.db.fetchone("SELECT * FROM schedules WHERE id = ?", (schedule_id,))
        return _schedule(row) if row is not None else None

    async def list(self, agent: str | None = None) -> Sequence[Schedule]:
        if agent is None:
            rows = await self.db.fetchall("SELECT * FROM schedules ORDER BY agent, created_at")
        else:
            rows = await self.db.fetchall(
                "SELECT * FROM schedules WHERE agent = ? ORDER BY created_at", (agent,)
            )
        return [_schedule(row) for row in rows]

    async def change(self, before: Schedule, after: Schedule, audit: AuditEntry) -> bool:
        def work(conn: Tx) -> bool:
            moved = conn.execute(_UPDATE, _update(before, after)).rowcount == 1
            if moved:
                conn.execute(INSERT_AUDIT, audit_values(audit))
            return moved

        return await self.db.write(work)

    async def delete(self, schedule: Schedule, audit: AuditEntry) -> bool:
        def work(conn: Tx) -> bool:
            gone = conn.execute("DELETE FROM schedules WHERE id = ?", (schedule.id,)).rowcount
            if gone == 1:
                conn.execute(INSERT_AUDIT, audit_values(audit))
            return gone == 1

        return await self.db.write(work)

    async def append_audit(self, entry: AuditEntry) -> None:
        await self.db.execute(INSERT_AUDIT, audit_values(entry))

    async def due(self, now: datetime) -> Sequence[Schedule]:
        rows = await self.db.fetchall(
            "SELECT * FROM schedules WHERE state = 'active' AND next_run_at <= ? "
            "ORDER BY next_run_at",
            (ts(now),),
        )
        return [_schedule(row) for row in rows]

    async def next_run_at(self) -> datetime | None:
        row = await self.db.fetchone(
            "SELECT MIN(next_run_at) AS at FROM schedules WHERE state = 'active'"
        )
        return parse_ts(row["at"]) if row is not None else None

    async def claim(self, before: Schedule, next_run_at: datetime, run: ScheduleRun) -> bool:
        after = before.model_copy(update={"next_run_at": next_run_at})

        def work(conn: Tx) -> bool:
            if conn.execute(_UPDATE, _update(before, after)).rowcount != 1:
                return False
            return conn.execute(_INSERT_RUN, _run_values(run)).rowcount == 1

        return await self.db.write(work)

    async def open_runs(self) -> Sequence[ScheduleRun]:
        rows = await self.db.fetchall(
            "SELECT * FROM schedule_runs WHERE outcome IN ('claimed', 'queued') "
            "ORDER BY due_at, schedule_id"
        )
        return [_run(row) for row in rows]

    async def take(self, run: ScheduleRun, owner: str, at: datetime) -> ScheduleRun | None:
        changed = await self.db.execute(
            "UPDATE schedule_runs SET owner = ?, claimed_at = ?, outcome = 'claimed' "
            "WHERE schedule_id = ? AND due_at = ? AND owner = ? AND claimed_at = ? "
            "AND outcome = ?",
            (
                owner,
                ts(at),
                run.schedule_id,
                ts(run.due_at),
                run.owner,
                ts(run.claimed_at),
                run.outcome.value,
            ),
        )
        if changed != 1:
            return None
        return run.model_copy(update={"owner": owner, "claimed_at": at, "outcome": "claimed"})

    async def settle(self, run: ScheduleRun, audit: AuditEntry | None) -> bool:
        values = (
            run.outcome.value,
            run.plan_id,
            ts(run.finished_at),
            run.schedule_id,
            ts(run.due_at),
            run.owner,
        )

        def work(conn: Tx) -> bool:
            changed = conn.execute(
                "UPDATE schedule_runs SET outcome = ?, plan_id = ?, finished_at = ? "
                "WHERE schedule_id = ? AND due_at = ? AND owner = ? AND outcome = 'claimed'",
                values,
            ).rowcount
            if changed == 1 and audit is not None:
                conn.execute(INSERT_AUDIT, audit_values(audit))
            return changed == 1

        return await self.db.write(work)

    async def started_since(self, schedule_id: str, since: datetime) -> int:
        row = await self.db.fetchone(
            "SELECT COUNT(*) AS n FROM schedule_runs WHERE schedule_id = ? "
            "AND outcome = 'started' AND finished_at >= ?",
            (schedule_id, ts(since)),
        )
        return int(row["n"]) if row is not None else 0

    async def outcomes(self) -> dict[str, int]:
        rows = await self.db.fetchall(
            "SELECT outcome, COUNT(*) AS n FROM schedule_runs GROUP BY outcome"
        )
        return {str(row["outcome"]): int(row["n"]) for row in rows}

    async def runs(self, schedule_id: str) -> Sequence[ScheduleRun]:
        """Every run of ``schedule_id``, oldest first."""
        rows = await self.db.fetchall(
            "SELECT * FROM schedule_runs WHERE schedule_id = ? ORDER BY due_at", (schedule_id,)
        )
        return [_run(row) for row in rows]


def _values(schedule: Schedule) -> tuple[Any, ...]:
    return (
        schedule.id,
        schedule.agent,
        schedule.task,
        schedule.cron,
        schedule.every_seconds,
        ts(schedule.anchor),
        schedule.tz,
        schedule.note,
        schedule.when_busy.value,
        schedule.max_runs_per_day,
        schedule.created_by,
        schedule.created_by_name,
        ts(schedule.created_at),
        schedule.state.value,
        ts(schedule.next_run_at),
        schedule.version,
    )


def _update(before: Schedule, after: Schedule) -> tuple[Any, ...]:
    return (
        after.state.value,
        ts(after.next_run_at),
        before.version + 1,
        before.id,
        before.version,
    )


def _run_values(run: ScheduleRun) -> tuple[Any, ...]:
    return (
        run.schedule_id,
        ts(run.due_at),
        run.agent,
        run.owner,
        ts(run.claimed_at),
        run.outcome.value,
        run.missed,
    )


def _schedule(row: Any) -> Schedule:
    every = row["every_seconds"]
    return Schedule(
        id=row["id"],
        agent=row["agent"],
        task=row["task"],
        cron=row["cron"],
        every_seconds=int(every) if every is not None else None,
        anchor=parse_required_ts(row["anchor"], "schedules"),
        tz=row["tz"],
        note=row["note"],
        when_busy=WhenBusy(row["when_busy"]),
        max_runs_per_day=int(row["max_runs_per_day"]),
        created_by=row["created_by"],
        created_by_name=row["created_by_name"],
        created_at=parse_required_ts(row["created_at"], "schedules"),
        state=ScheduleState(row["state"]),
        next_run_at=parse_required_ts(row["next_run_at"], "schedules"),
        version=int(row["version"]),
    )


def _run(row: Any) -> ScheduleRun:
    return ScheduleRun(
        schedule_id=row["schedule_id"],
        due_at=parse_required_ts(row["due_at"], "schedule_runs"),
        agent=row["agent"],
        owner=row["owner"],
        claimed_at=parse_required_ts(row["claimed_at"], "schedule_runs"),
        outcome=RunOutcome(row["outcome"]),
        missed=int(row["missed"]),
        plan_id=row["plan_id"],
        finished_at=parse_ts(row["finished_at"]),
    )
