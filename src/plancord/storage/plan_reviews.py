"""The review of each plan revision (and of an executed plan's result), kept per revision.

A review outlives the call that made it: the plan message is redrawn from it, the approval
check (``core.review_gate``) reads it when a button is clicked, perhaps after a restart,
Edit sends its findings back, and the next revision's review needs it to say which findings
are resolved. A review is started before its call and finished after it, so a restart in
between is visible: ``StoredReview.settled`` turns a review that can no longer be running
into an unavailable one, instead of a hold that never lifts. A review started as one that
holds approval while it runs says so in its row (``hold``), with how long it may run, so
that hold does not depend on the settings of whoever approves.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum

from plancord.core.review import PlanReview
from plancord.storage.backend import Backend, Tx
from plancord.storage.codec import parse_ts, ts

INTERRUPTED = "the review was interrupted (the bot restarted while it ran)"


class ReviewKind(StrEnum):
    PLAN = "plan"
    RESULT = "result"


def mark_started(
    conn: Tx, plan_id: str, revision: int, kind: ReviewKind, at: datetime, hold: timedelta | None
) -> bool:
    """In ``conn``'s transaction: mark the review as started at ``at``, holding approval for
    at most ``hold`` while it runs; False, with nothing written, when it already was."""
    seconds = None if hold is None else math.ceil(hold.total_seconds())
    cursor = conn.execute(
        "INSERT INTO plan_reviews (plan_id, revision, kind, started_at, hold_seconds) "
        "VALUES (?, ?, ?, ?, ?) ON CONFLICT (plan_id, revision, kind) DO NOTHING",
        (plan_id, revision, kind.value, ts(at), seconds),
    )
    return cursor.rowcount == 1


@dataclass(frozen=True, slots=True)
class StoredReview:
    plan_id: str
    revision: int
    kind: ReviewKind
    started_at: datetime
    review: PlanReview | None
    """None while the review runs."""
    finished_at: datetime | None = None
    """When the review was kept: the end of the window its usage was recorded in."""
    hold: timedelta | None = None
    """How long after it started the review, while running, holds approval; None when it
    was started as one that holds nothing."""

    def settled(self, now: datetime, timeout: timedelta) -> PlanReview | None:
        """The review; for one still marked running, None while it may still be running
        (``timeout`` after it started, or the ``hold`` it was started with) and an
        unavailable review once it cannot be."""
        if self.review is not None:
            return self.review
        if now < self.started_at + (self.hold or timeout):
            return None
        return PlanReview.unavailable(INTERRUPTED, model="")


class PlanReviewStore:
    def __init__(self, db: Backend) -> None:
        self.db = db

    async def start(
        self,
        plan_id: str,
        revision: int,
        kind: ReviewKind,
        at: datetime,
        *,
        hold: timedelta | None = None,
    ) -> bool:
        """Mark the review as running, holding approval for at most ``hold`` while it runs
        (None: it holds nothing by itself); False, with nothing written, when this
        revision's review of this kind was already started (one per revision and kind)."""

        def write(conn: Tx) -> bool:
            return mark_started(conn, plan_id, revision, kind, at, hold)

        return await self.db.write(write)

    async def restart(self, plan_id: str, revision: int, kind: ReviewKind, at: datetime) -> bool:
        """Mark a review that never finished as running again from ``at`` (its call is being
        made again after a restart); False when it has finished or was never started."""

        def write(conn: Tx) -> bool:
            cursor = conn.execute(
                "UPDATE plan_reviews SET started_at = ? "
                "WHERE plan_id = ? AND revision = ? AND kind = ? AND review IS NULL",
                (ts(at), plan_id, revision, kind.value),
            )
            return cursor.rowcount == 1

        return await self.db.write(write)

    async def finish(
        self, plan_id: str, revision: int, kind: ReviewKind, review: PlanReview, at: datetime
    ) -> None:
        """Keep ``review`` as the revision's review of this kind (started or not)."""
        data = json.dumps(review.to_data(), ensure_ascii=False, separators=(",", ":"))
        await self.db.execute(
            "INSERT INTO plan_reviews (plan_id, revision, kind, started_at, finished_at, review) "
            "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (plan_id, revision, kind) DO UPDATE SET "
            "finished_at = excluded.finished_at, review = excluded.review",
            (plan_id, revision, kind.value, ts(at), ts(at), data),
        )

    async def settled_review(
        self, plan_id: str, revision: int, *, since: datetime, now: datetime, window: timedelta
    ) -> PlanReview | None:
        """The revision's plan review as the approval check reads it (``ReviewRecords``):
        a review never started counts as started at ``since`` (its submission)."""
        found = await self.get(plan_id, revision)
        if found is None:
            found = StoredReview(plan_id, revision, ReviewKind.PLAN, since, None)
        return found.settled(now, window)

    async def holds_while_running(self, plan_id: str, revision: int) -> bool:
        """Whether the revision's plan review was started as one that holds approval while
        it runs (``ReviewRecords``)."""
        found = await self.get(plan_id, revision)
        return found is not None and found.hold is not None

    async def get(
        self, plan_id: str, revision: int, kind: ReviewKind = ReviewKind.PLAN
    ) -> StoredReview | None:
        row = await self.db.fetchone(
            "SELECT started_at, finished_at, review, hold_seconds FROM plan_reviews "
            "WHERE plan_id = ? AND revision = ? AND kind = ?",
            (plan_id, revision, kind.value),
        )
        if row is None:
            return None
        started = parse_ts(row["started_at"])
        assert started is not None
        raw = row["review"]
        review = PlanReview.from_data(json.loads(raw)) if raw else None
        finished = parse_ts(row["finished_at"])
        seconds = row["hold_seconds"]
        hold = None if seconds is None else timedelta(seconds=int(seconds))
        return StoredReview(plan_id, revision, kind, started, review, finished, hold)
