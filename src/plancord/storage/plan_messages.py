"""Where each plan revision's Discord message lives, and what it last showed.

The planning state says what is true; this table says where a human can see it. A decision,
a new revision, a timeout or a restart needs the message again (to edit it, disable its
buttons, point a stale click at its successor, or post it again when it was deleted), and
the message must be re-rendered from stored facts alone, so the outcome is kept here too.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict

from plancord.storage.backend import Backend
from plancord.storage.codec import parse_ts, ts


class MessageStatus(StrEnum):
    PENDING = "pending"
    DECIDED = "decided"
    SUPERSEDED = "superseded"
    TIMED_OUT = "timed-out"
    CANCELLED = "cancelled"


class PlanMessageRecord(BaseModel):
    """One posted plan revision: its message, its progress message and its outcome."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    plan_id: str
    revision: int
    agent: str
    guild_id: int | None = None
    channel_id: int
    message_id: int
    progress_message_id: int | None = None
    status: MessageStatus = MessageStatus.PENDING
    requested_by_name: str | None = None
    outcome: str | None = None
    outcome_by: str | None = None
    outcome_at: datetime | None = None
    outcome_note: str | None = None
    superseded_by: int | None = None
    posted_at: datetime
    updated_at: datetime
    cost: str | None = None
    """What planning had cost when the revision was posted (``core.cost``)."""


_COLUMNS = (
    "plan_id",
    "revision",
    "agent",
    "guild_id",
    "channel_id",
    "message_id",
    "progress_message_id",
    "status",
    "requested_by_name",
    "outcome",
    "outcome_by",
    "outcome_at",
    "outcome_note",
    "superseded_by",
    "posted_at",
    "updated_at",
    "cost",
)
_KEY = ("plan_id", "revision")
_UPSERT = (
    f"INSERT INTO plan_messages ({', '.join(_COLUMNS)}) "  # noqa: S608
    f"VALUES ({', '.join('?' for _ in _COLUMNS)}) "
    "ON CONFLICT (plan_id, revision) DO UPDATE SET "
    + ", ".join(f"{c} = excluded.{c}" for c in _COLUMNS if c not in _KEY)
)


def _values(record: PlanMessageRecord) -> tuple[object, ...]:
    return (
        record.plan_id,
        record.revision,
        record.agent,
        record.guild_id,
        record.channel_id,
        record.message_id,
        record.progress_message_id,
        record.status.value,
        record.requested_by_name,
        record.outcome,
        record.outcome_by,
        ts(record.outcome_at),
        record.outcome_note,
        record.superseded_by,
        ts(record.posted_at),
        ts(record.updated_at),
        record.cost,
    )


def _from_row(row: Any) -> PlanMessageRecord:
    return PlanMessageRecord(
        plan_id=row["plan_id"],
        revision=row["revision"],
        agent=row["agent"],
        guild_id=row["guild_id"],
        channel_id=row["channel_id"],
        message_id=row["message_id"],
        progress_message_id=row["progress_message_id"],
        status=MessageStatus(row["status"]),
        requested_by_name=row["requested_by_name"],
        outcome=row["outcome"],
        outcome_by=row["outcome_by"],
        outcome_at=parse_ts(row["outcome_at"]),
        outcome_note=row["outcome_note"],
        superseded_by=row["superseded_by"],
        posted_at=datetime.fromisoformat(row["posted_at"]),
        updated_at=datetime.fromisoformat(row["updated_at"]),
        cost=row["cost"],
    )


class PlanMessageStore:
    def __init__(self, db: Backend) -> None:
        self.db = db

    async def put(self, record: PlanMessageRecord) -> PlanMessageRecord:
        """Insert the record, or replace everything but its key."""
        await self.db.execute(_UPSERT, _values(record))
        return record

    async def get(self, plan_id: str, revision: int) -> PlanMessageRecord | None:
        row = await self.db.fetchone(
            "SELECT * FROM plan_messages WHERE plan_id = ? AND revision = ?", (plan_id, revision)
        )
        return _from_row(row) if row else None

    async def for_plan(self, plan_id: str) -> list[PlanMessageRecord]:
        rows = await self.db.fetchall(
            "SELECT * FROM plan_messages WHERE plan_id = ? ORDER BY revision", (plan_id,)
        )
        return [_from_row(r) for r in rows]

    async def pending(self) -> list[PlanMessageRecord]:
        """Messages still offering a decision, oldest first."""
        rows = await self.db.fetchall(
            "SELECT * FROM plan_messages WHERE status = 'pending' ORDER BY posted_at, revision"
        )
        return [_from_row(r) for r in rows]

    async def latest_for(self, agent: str) -> PlanMessageRecord | None:
        row = await self.db.fetchone(
            "SELECT * FROM plan_messages WHERE agent = ? ORDER BY posted_at DESC, revision DESC "
            "LIMIT 1",
            (agent,),
        )
        return _from_row(row) if row else None

    async def by_message(self, channel_id: int, message_id: int) -> PlanMessageRecord | None:
        """The revision whose plan message is ``message_id`` (not its progress message)."""
        row = await self.db.fetchone(
            "SELECT * FROM plan_messages WHERE message_id = ? AND channel_id = ? LIMIT 1",
            (message_id, channel_id),
        )
        return _from_row(row) if row else None
