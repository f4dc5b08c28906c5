"""Writes owed until they land (``agent.owed``): one row per duty, claimed under a lease.

Why this exists: a write that meets a locked database is not done, and a duty kept only in
one process's memory dies with it. A row here outlives the process; its times are the
database's clock (``storage.leases``), so processes on several hosts agree on what is due;
and a claim is a compare-and-set on ``owner`` that succeeds only while no other live lease
holds the row, so one process does a duty at a time, and a crashed one's claim lapses with
its lease.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from plancord.storage.backend import Backend
from plancord.storage.leases import live_lease_sql, now_sql


@dataclass(frozen=True, slots=True)
class OwedDuty:
    """One write still owed: what it is (``kind``), what about (``subject``), what doing it
    needs (``detail``), and how often it was tried."""

    kind: str
    subject: str
    detail: dict[str, Any]
    attempts: int = 0
    last_error: str | None = None

    @property
    def name(self) -> str:
        return f"{self.kind} {self.subject}"


class OwedDutyStore:
    """Reads and writes ``owed_duties``."""

    def __init__(self, db: Backend) -> None:
        self.db = db
        self._now = now_sql(db.dialect)
        self._free = (
            f"(owner IS NULL OR owner = ? OR NOT {live_lease_sql(db.dialect, 'owed_duties.owner')})"
        )

    async def owe(self, duty: OwedDuty, delay: float = 0.0) -> None:
        """Owe ``duty`` (due ``delay`` seconds from now); one already owed keeps its count
        of attempts and takes the newer detail."""
        await self.db.execute(
            "INSERT INTO owed_duties (kind, subject, detail, attempts, owed_since, next_at, "  # noqa: S608 - the database's clock, a constant
            f"last_error) VALUES (?, ?, ?, ?, {self._now}, {self._now} + ?, ?) "
            "ON CONFLICT (kind, subject) DO UPDATE SET detail = excluded.detail, "
            "attempts = owed_duties.attempts + excluded.attempts, "
            "last_error = excluded.last_error",
            (
                duty.kind,
                duty.subject,
                json.dumps(duty.detail, sort_keys=True),
                duty.attempts,
                delay,
                duty.last_error,
            ),
        )

    async def due(self, owner: str, limit: int = 50) -> list[OwedDuty]:
        """The duties due now that no other live lease holds, oldest first."""
        rows = await self.db.fetchall(
            "SELECT kind, subject, detail, attempts, last_error FROM owed_duties "  # noqa: S608 - the database's clock, a constant
            f"WHERE next_at <= {self._now} AND {self._free} ORDER BY next_at, owed_since LIMIT ?",
            (owner, limit),
        )
        return [_duty(row) for row in rows]

    async def claim(self, duty: OwedDuty, owner: str) -> bool:
        """Make ``owner`` the one doing ``duty``; False when another live lease holds it
        (or it was done meanwhile)."""
        changed = await self.db.execute(
            "UPDATE owed_duties SET owner = ? WHERE kind = ? AND subject = ? AND "  # noqa: S608
            + self._free,
            (owner, duty.kind, duty.subject, owner),
        )
        return changed == 1

    async def done(self, duty: OwedDuty) -> None:
        """``duty`` landed: it is owed no more."""
        await self.db.execute(
            "DELETE FROM owed_duties WHERE kind = ? AND subject = ?", (duty.kind, duty.subject)
        )

    async def failed(self, duty: OwedDuty, owner: str, error: str, delay: float) -> None:
        """Another attempt at ``duty`` failed with ``error``: tried again ``delay`` seconds
        from now, by whichever process is free then."""
        await self.db.execute(
            "UPDATE owed_duties SET attempts = attempts + 1, last_error = ?, owner = NULL, "  # noqa: S608 - the database's clock, a constant
            f"next_at = {self._now} + ? WHERE kind = ? AND subject = ? AND owner = ?",
            (error[:500], delay, duty.kind, duty.subject, owner),
        )

    async def owed(self) -> list[OwedDuty]:
        """Every duty still owed, oldest first (the operator's view, the metric)."""
        rows = await self.db.fetchall(
            "SELECT kind, subject, detail, attempts, last_error FROM owed_duties "
            "ORDER BY owed_since"
        )
        return [_duty(row) for row in rows]


def _duty(row: Any) -> OwedDuty:
    return OwedDuty(
        kind=str(row["kind"]),
        subject=str(row["subject"]),
        detail=json.loads(row["detail"]),
        attempts=int(row["attempts"]),
        last_error=row["last_error"],
    )
