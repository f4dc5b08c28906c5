"""A process's lease on the shared store, on both engines: taken at first use, renewed by its
heartbeat, never renewed once it lapsed (the process goes on under a new owner id), judged
by the database's clock; an intent is taken over only once its owner's lease is gone; a
git lock file is swept only while no other live lease holds git in the workspace."""

from __future__ import annotations

import asyncio
import os
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from plancord.agent.execution.git_locks import sweep_stale_locks
from plancord.agent.execution.lease import GitGuard, ProcessLease
from plancord.core.intents import LeaseLost, StartIntent
from plancord.storage.backend import Backend
from plancord.storage.start_intents import StartIntentStore
from tests.storage.test_start_intents import _submitted


class Paused:
    """A boot clock that can jump, as a process stopped and woken again sees it."""

    def __init__(self) -> None:
        self.skipped = 0.0

    def __call__(self) -> float:
        return time.monotonic() + self.skipped


async def test_a_lease_is_renewed_while_it_lives_and_never_after_it_lapsed(db: Backend) -> None:
    clock = Paused()
    lease = ProcessLease(db, seconds=0.6, clock=clock, host="host-a")
    owner = await lease.owner_now()
    assert owner.startswith("host-a:") and owner in await lease.live()

    async with lease.holding("ada"):
        await asyncio.sleep(1.0)  # the heartbeat renews it past its first expiry
        assert owner in await lease.live()
        await lease.confirm(owner)
        lease.pause_heartbeat()  # the process is stopped ...
        await asyncio.sleep(0.9)
    clock.skipped = 0.9  # ... and wakes: its lease ran out meanwhile
    assert owner not in await lease.live()
    with pytest.raises(LeaseLost, match="lost its lease"):
        await lease.confirm(owner)
    renewed = await lease.owner_now()
    assert renewed != owner, "a lapsed lease is never taken back"
    with pytest.raises(LeaseLost):
        await lease.confirm(owner)
    await lease.confirm(renewed)
    await lease.close()
    assert renewed not in await lease.live()


async def test_a_live_owner_s_start_is_not_taken_over_and_a_gone_one_s_is(db: Backend) -> None:
    await _submitted(db)
    first = ProcessLease(db, seconds=0.6, host="host-a")
    second = ProcessLease(db, seconds=0.6, host="host-b")
    starts = StartIntentStore(db)
    intent = StartIntent(
        id="s1",
        agent="ada",
        plan_id="p1",
        revision=1,
        actor="user:1(ana)",
        actor_name="ana",
        owner=await first.owner_now(),
        opened_at=datetime(2026, 3, 1, tzinfo=UTC),
    )
    assert (await starts.open(intent)).opened

    assert not await starts.take_over(intent, await second.owner_now())

    await asyncio.sleep(0.9)  # no decision renews it
    assert await starts.take_over(intent, await second.owner_now())
    taken = intent.model_copy(update={"owner": await second.owner_now()})
    assert not await starts.undone(intent, intent.opened_at, "late", None), (
        "the former owner closed an intent another process took over"
    )
    assert await starts.undone(taken, intent.opened_at, "undone", None)
    await first.close()
    await second.close()


async def test_git_s_lock_files_are_left_while_another_live_lease_holds_git(
    db: Backend, tmp_path: Path
) -> None:
    lock = tmp_path / ".git" / "index.lock"
    lock.parent.mkdir()
    lock.write_text("x\n")
    os.utime(lock, (time.time() - 3600, time.time() - 3600))
    there = ProcessLease(db, seconds=0.6, host="container-a")
    here = ProcessLease(db, seconds=0.6, host="container-b")
    guard = GitGuard(here, await here.owner_now(), "ada")

    async with there.holding("ada"):
        elsewhere = await guard.held_elsewhere()
        assert elsewhere.startswith("container-a pid ")
        swept = sweep_stale_locks(tmp_path, held_elsewhere=elsewhere)
        assert swept.removed == () and lock.exists()
        assert "container-a" in swept.left_text() and "lease is live" in swept.left_text()
        async with here.holding("ada"):
            assert await guard.held_elsewhere() == elsewhere, "its own hold is not another's"

        there.pause_heartbeat()  # stopped inside git; its lease runs out
        await asyncio.sleep(0.9)
        assert await guard.held_elsewhere() == ""
        assert sweep_stale_locks(tmp_path).removed == (".git/index.lock",)
    await there.close()
    await here.close()
