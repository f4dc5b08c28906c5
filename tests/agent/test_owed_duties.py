"""The owed duties' retrier shared by processes, on both engines: a duty written to the table
is done by one process at a time (its claim is its lease), a failed try is counted and
waits, and a process that died holding a claim leaves the duty to the next."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

from plancord.agent.execution.lease import ProcessLease
from plancord.agent.owed import OwedDuties
from plancord.core.errors import StorageError
from plancord.metrics.readings import read_store
from plancord.storage.backend import Backend
from plancord.storage.owed_duties import OwedDuty, OwedDutyStore

DUTY = OwedDuty("mark-ask", "ask-1", {"answer": "allowed"}, attempts=1)


async def test_two_processes_never_do_one_duty_at_once(db: Backend) -> None:
    await OwedDutyStore(db).owe(DUTY)
    first, second = OwedDuties(db, ProcessLease(db)), OwedDuties(db, ProcessLease(db))
    inside, let_go = asyncio.Event(), asyncio.Event()
    done: list[str] = []

    async def slow(duty: OwedDuty) -> None:
        inside.set()
        await let_go.wait()
        done.append(f"first {duty.subject}")

    async def quick(duty: OwedDuty) -> None:
        done.append(f"second {duty.subject}")

    first.handle("mark-ask", slow)
    second.handle("mark-ask", quick)
    working = asyncio.create_task(first.work())
    await inside.wait()
    await second.work()  # the first holds it under a live lease
    let_go.set()
    await working

    assert done == ["first ask-1"]
    assert await OwedDutyStore(db).owed() == []
    assert first.landed == ["mark-ask ask-1"] and second.landed == []


async def test_a_failed_try_is_counted_and_a_dead_claim_is_taken_over(db: Backend) -> None:
    await OwedDutyStore(db).owe(DUTY)
    gone = ProcessLease(db)
    dead = OwedDuties(db, gone)

    async def refused(duty: OwedDuty) -> None:
        raise StorageError("The database is locked by another process", "locked")

    dead.handle("mark-ask", refused)
    await dead.work()
    (owed,) = await OwedDutyStore(db).owed()
    assert (owed.attempts, owed.last_error) == (2, "The database is locked by another process")
    assert (await read_store(db, datetime.now(UTC), {})).owed_duties == {"mark-ask": 1}

    # A process that claims it and dies: its lease is given up, the claim is anyone's.
    await db.execute("UPDATE owed_duties SET next_at = 0, owner = ?", (await gone.owner_now(),))
    await gone.close()
    done: list[str] = []

    async def marked(duty: OwedDuty) -> None:
        done.append(duty.subject)

    alive = OwedDuties(db, ProcessLease(db))
    alive.handle("mark-ask", marked)
    await alive.work()
    assert done == ["ask-1"] and await OwedDutyStore(db).owed() == []
