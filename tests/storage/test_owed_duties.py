"""Owed duties on both engines: owed once per kind and subject, due by the database's clock,
claimed by one live lease at a time (a lapsed lease's claim is anyone's), tried again later
after a failure with the attempts counted, and gone once done."""

from __future__ import annotations

from plancord.storage.backend import Backend
from plancord.storage.leases import LeaseStore
from plancord.storage.owed_duties import OwedDuty, OwedDutyStore

OPEN = OwedDuty("open-result", "p1", {"requested_by": "42"}, attempts=1, last_error="locked")


async def test_a_duty_is_claimed_by_one_live_lease_and_lapses_with_it(db: Backend) -> None:
    store, leases = OwedDutyStore(db), LeaseStore(db)
    await leases.take("one", "a", 1, 30.0)
    await leases.take("two", "b", 2, 30.0)
    await store.owe(OPEN)

    assert [d.name for d in await store.due("one")] == ["open-result p1"]
    assert await store.claim(OPEN, "one")
    assert await store.due("two") == [] and not await store.claim(OPEN, "two")
    assert [d.name for d in await store.due("one")] == ["open-result p1"], "its own claim"

    await leases.release("one")  # the process that claimed it is gone
    assert await store.claim(OPEN, "two")


async def test_a_failed_try_counts_and_waits_and_a_done_duty_is_gone(db: Backend) -> None:
    store, leases = OwedDutyStore(db), LeaseStore(db)
    await leases.take("one", "a", 1, 30.0)
    await store.owe(OPEN)
    assert await store.claim(OPEN, "one")

    await store.failed(OPEN, "one", "still locked", 60.0)
    (owed,) = await store.owed()
    assert (owed.attempts, owed.last_error, owed.detail) == (2, "still locked", OPEN.detail)
    assert await store.due("one") == [], "not due for a minute"

    await store.owe(OwedDuty("open-result", "p1", {"requested_by": "7"}, attempts=1))
    (again,) = await store.owed()
    assert (again.attempts, again.detail) == (3, {"requested_by": "7"})

    await store.done(OPEN)
    assert await store.owed() == []
