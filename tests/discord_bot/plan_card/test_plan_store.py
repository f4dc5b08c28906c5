"""``PlanMessageStore``: one row per posted revision, replaced in place, found by plan, by
agent and by whether it still waits for a decision."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from plancord.core.errors import StorageError
from plancord.storage.db import Database
from plancord.storage.plan_messages import MessageStatus, PlanMessageRecord, PlanMessageStore

AT = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


def record(revision: int, **changes: object) -> PlanMessageRecord:
    base = PlanMessageRecord(
        plan_id="0123456789abcdef",
        revision=revision,
        agent="ada",
        guild_id=1,
        channel_id=2,
        message_id=100 + revision,
        requested_by_name="ana",
        posted_at=AT + timedelta(minutes=revision),
        updated_at=AT + timedelta(minutes=revision),
    )
    return base.model_copy(update=changes)


async def test_put_get_and_replace(db: Database) -> None:
    store = PlanMessageStore(db)
    first = await store.put(record(1))
    assert await store.get("0123456789abcdef", 1) == first
    assert await store.get("0123456789abcdef", 2) is None

    decided = first.model_copy(
        update={
            "status": MessageStatus.DECIDED,
            "outcome": "changes-requested",
            "outcome_by": "ana",
            "outcome_at": AT,
            "outcome_note": "use a name",
            "progress_message_id": 7,
        }
    )
    await store.put(decided)

    assert await store.get("0123456789abcdef", 1) == decided


async def test_by_plan_pending_and_latest(db: Database) -> None:
    store = PlanMessageStore(db)
    await store.put(record(1, status=MessageStatus.SUPERSEDED, superseded_by=2))
    await store.put(record(2))
    await store.put(record(1, plan_id="fedcba9876543210", agent="bea"))

    assert [r.revision for r in await store.for_plan("0123456789abcdef")] == [1, 2]
    assert [(r.agent, r.revision) for r in await store.pending()] == [("bea", 1), ("ada", 2)]
    latest = await store.latest_for("ada")
    assert latest is not None and latest.revision == 2
    assert await store.latest_for("nobody") is None


async def test_a_decided_message_must_say_how(db: Database) -> None:
    store = PlanMessageStore(db)
    with pytest.raises(StorageError):
        await store.put(record(1, status=MessageStatus.DECIDED))
    assert await store.get("0123456789abcdef", 1) is None


async def test_found_by_its_message_in_its_channel(db: Database) -> None:
    store = PlanMessageStore(db)
    await store.put(record(1))
    second = await store.put(record(2))

    assert await store.by_message(2, 102) == second
    assert await store.by_message(3, 102) is None
    moved = await store.put(second.model_copy(update={"message_id": 202}))
    assert await store.by_message(2, 102) is None
    assert await store.by_message(2, 202) == moved
