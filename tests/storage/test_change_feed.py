"""The change feed on both engines: a decision's change exists exactly when the decision
does, another process's follower delivers it in id order with the deciding origin, a lost
race appends nothing, concurrent decisions on PostgreSQL commit their changes in id order,
and a prune keeps the newest rows."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path

import pytest

from plancord.core.changes import Change, ChangeKind, planning_change
from plancord.core.errors import VersionConflict
from plancord.core.planning import Actor, AuditAction, EntrySource, Phase
from plancord.core.ports import StaticSettings
from plancord.core.service import PlanningService
from plancord.storage.backend import Backend, Tx
from plancord.storage.changes import ChangeFeed, append_change
from plancord.storage.engines import open_database
from plancord.storage.pending_asks import PendingAskStore, StoredAsk
from plancord.storage.store import SqlStore
from tests.conftest import ManualClock, agent_record

ANA = Actor.user("7", "ana")


async def _delivered(feed: ChangeFeed, count: int) -> list[Change]:
    got: list[Change] = []
    while len(got) < count:
        got.extend(await asyncio.wait_for(feed.next(), timeout=10))
    return got


async def test_another_process_hears_each_transition_with_who_made_it(
    db: Backend, db_target: str | Path, clock: ManualClock, settings: StaticSettings
) -> None:
    store = SqlStore(db)
    await store.create_agent(agent_record())
    other = await open_database(db_target)
    feed = ChangeFeed(other)
    await feed.start()
    try:
        service = PlanningService(store, clock, settings)
        await service.enter("ada", source=EntrySource.USER, actor=ANA, task="t")
        await service.cancel("ada", ANA, "no")
        entered, cancelled = await _delivered(feed, 2)
    finally:
        await feed.close()
        await other.close()
    assert entered.id < cancelled.id
    assert {entered.origin, cancelled.origin} == {db.origin} != {other.origin}
    assert (entered.kind, entered.agent) == (ChangeKind.PLAN, "ada")
    change = planning_change(cancelled.payload, None)
    assert change.action is AuditAction.CANCELLED
    assert (change.before.phase, change.after.phase) == (Phase.GATHERING, Phase.INACTIVE)
    assert change.actor == ANA and change.detail["reason"] == "no"


async def test_a_lost_race_appends_nothing(
    db: Backend, clock: ManualClock, settings: StaticSettings
) -> None:
    store = SqlStore(db)
    await store.create_agent(agent_record())
    service = PlanningService(store, clock, settings)
    await service.enter("ada", source=EntrySource.USER, actor=ANA, task="t")
    feed = ChangeFeed(db)
    before = await feed.latest()
    stale = await store.load_state("ada")
    await service.cancel("ada", ANA)
    racing = PlanningService(store, clock, settings)
    with pytest.raises(VersionConflict):
        # A second cancel from the state both read: the version check refuses it.
        await racing._runner.commit(stale, stale.cleared(), AuditAction.CANCELLED, ANA, {})
    assert await feed.latest() == before + 1


async def test_a_settled_ask_says_so_once(db: Backend, clock: ManualClock) -> None:
    store = SqlStore(db)
    await store.create_agent(agent_record())
    asks = PendingAskStore(db)
    ask = StoredAsk("q1", "ada", "question", {}, clock.now(), clock.now())
    await asks.add(ask)
    feed = ChangeFeed(db)
    before = await feed.latest()
    await asks.delete("q1")
    await asks.delete("q1")  # already settled: nothing more
    rows = await db.fetchall("SELECT kind, agent, subject FROM changes WHERE id > ?", (before,))
    assert [tuple(r) for r in rows] == [("ask", "ada", "q1")]


async def test_a_prune_keeps_the_newest_rows(db: Backend, clock: ManualClock) -> None:
    def many(conn: Tx) -> None:
        for i in range(30):
            append_change(conn, "o", ChangeKind.ASK, "ada", str(i), {}, clock.now())

    await db.write(many)
    feed = ChangeFeed(db)
    newest = await feed.latest()
    assert await feed.prune(keep=10) == 20
    rows = await db.fetchall("SELECT id FROM changes ORDER BY id")
    assert [r[0] for r in rows] == list(range(newest - 9, newest + 1))


async def test_concurrent_appends_on_postgresql_commit_in_id_order(postgres_url: str) -> None:
    """Twenty decisions at once on eight connections: the follower, reading ``id > last``,
    sees every one (a sequence alone could commit id 6 before 5 and skip 5)."""
    db = await open_database(postgres_url)
    other = await open_database(postgres_url)
    feed = ChangeFeed(other)
    await feed.start()
    try:

        async def append(i: int) -> None:
            def work(conn: Tx) -> None:
                append_change(conn, "o", ChangeKind.ASK, "ada", str(i), {}, datetime.now(UTC))
                conn.execute("SELECT pg_sleep(0.01)")  # the lock held a while to the commit

            await db.write(work)

        await asyncio.gather(*(append(i) for i in range(20)))
        got = await _delivered(feed, 20)
    finally:
        await feed.close()
        await other.close()
        await db.close()
    assert sorted(c.subject for c in got) == sorted(str(i) for i in range(20))
    assert [c.id for c in got] == sorted(c.id for c in got)
