"""This process's lease on the shared store: the owner of every intent it opens, renewed by a
heartbeat while the process lives, and the fence before each git command of a decision.

Why this exists: an open intent (``core.intents``) is either being carried out right now or
was left by a process that is gone, and only the second may be taken over: taking over a
live one runs git twice at once. A pid or a host name is a fact about one machine, not an
owner: a process in another container on the same workspace volume is invisible to this
one's ``/proc``. So an owner is a random id with a row in ``leases`` (``storage.leases``),
taken over only after it expired by the database's clock. A heartbeat renews it every
``LEASE_SECONDS / 3`` while the process holds git for a decision (however long a git
command takes); between decisions it is renewed, or taken anew, at its next use.

A process that stops running for longer than its lease (SIGSTOP, a suspended VM, a host that
froze) may wake to find its decisions taken over. It must not go on with git: each git
command of a decision first confirms the lease (``confirm``). The time left is known
without a round trip (the expiry the last renewal set, counted from before it was sent on
this host's boot clock, which runs through a suspend); with less than half the lease left
the database is asked, and a lease that lapsed is never renewed: ``LeaseLost`` is raised,
the decision stops where it stands, its intent stays open for whoever takes it over (who
decides from what git shows), and this process goes on under a new owner id. What no lease
can fence is a pause in the few instructions between a confirmation and the git command it
let through; the lease's length, much longer than a git command, is the margin.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
import uuid
from collections.abc import AsyncIterator, Callable

from plancord.core.errors import StorageError
from plancord.core.intents import LeaseLost
from plancord.core.process_names import host_identity
from plancord.storage.backend import Backend
from plancord.storage.leases import LeaseStore

log = logging.getLogger(__name__)

LEASE_SECONDS = 30.0
"""How long a lease lasts past its last renewal; the heartbeat renews it three times as often."""


def boot_clock() -> float:
    """Seconds on a clock that never goes back and runs through a suspend."""
    return time.clock_gettime(time.CLOCK_BOOTTIME)


class ProcessLease:
    """The lease of one process (one set of services over one database) and its holds of git."""

    def __init__(
        self,
        db: Backend,
        *,
        seconds: float | None = None,
        clock: Callable[[], float] = boot_clock,
        host: str | None = None,
    ) -> None:
        """``seconds``: the lease's length (``LEASE_SECONDS`` unless given)."""
        self._store = LeaseStore(db)
        self.seconds = seconds if seconds is not None else LEASE_SECONDS
        self._clock = clock
        self.host = host or host_identity()
        self.owner = self._fresh()
        self._taken = False
        self._until = 0.0
        """On ``clock``: the lease is ours at least until then."""
        self._lock = asyncio.Lock()
        self._heartbeat: asyncio.Task[None] | None = None
        self._holds: dict[str, int] = {}

    def _fresh(self) -> str:
        return f"{self.host}:{os.getpid()}:{uuid.uuid4().hex[:16]}"

    async def owner_now(self) -> str:
        """This process's owner id with its lease live: taken at first use, and a new one
        when the last lapsed."""
        async with self._lock:
            short = self._until - self._clock() <= self.seconds / 2
            if self._taken and short and not await self._renew():
                self._lapsed()
            if not self._taken:
                return await self._take()
            return self.owner

    async def _take(self) -> str:
        started = self._clock()
        await self._store.take(self.owner, self.host, os.getpid(), self.seconds)
        self._taken, self._until = True, started + self.seconds
        return self.owner

    async def confirm(self, owner: str) -> None:
        """Raise ``LeaseLost`` unless ``owner`` is this process's lease, still live with at
        least half of it left (asking the database when less is known to be left)."""
        if owner == self.owner and self._taken and self._until - self._clock() > self.seconds / 2:
            return
        async with self._lock:
            if owner != self.owner or not self._taken:
                raise _lost(self.seconds)
            try:
                renewed = await self._renew()
            except StorageError:
                if self._clock() < self._until:
                    return  # the database is busy, and the lease is ours for a while yet
                raise _lost(self.seconds) from None
            if not renewed:
                self._lapsed()
                raise _lost(self.seconds)

    def live_here(self, owner: str) -> bool:
        """Whether ``owner`` is this process's current lease (a former one lapsed)."""
        return owner == self.owner and self._taken

    async def live(self) -> dict[str, str]:
        """Every live lease's owner, with where it runs."""
        return await self._store.live()

    @contextlib.asynccontextmanager
    async def holding(self, agent: str) -> AsyncIterator[str]:
        """Hold git in ``agent``'s workspace while the block runs (another process's sweep
        of git's lock files leaves them meanwhile); the owner id the block works under."""
        owner = await self.owner_now()
        if self._holds.get(agent, 0) == 0:
            await self._store.hold(agent, owner)
        self._holds[agent] = self._holds.get(agent, 0) + 1
        if self._heartbeat is None:
            self._heartbeat = asyncio.create_task(self._beat(), name="plancord-lease")
        try:
            yield owner
        finally:
            self._holds[agent] -= 1
            if self._holds[agent] == 0:
                del self._holds[agent]
                if not self._holds:
                    self.pause_heartbeat()
                with contextlib.suppress(StorageError):  # it lapses with the lease
                    await self._store.unhold(agent, owner)

    async def held_elsewhere(self, agent: str) -> str:
        """Where other live processes hold git in ``agent``'s workspace ("" when none)."""
        holders = await self._store.holders(agent)
        return ", ".join(where for owner, where in sorted(holders.items()) if owner != self.owner)

    async def close(self) -> None:
        """The process ends: the heartbeat stops and the lease is given up, so what it left
        open is another's to recover at once."""
        beat, self._heartbeat = self._heartbeat, None
        if beat is not None:
            beat.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await beat
        if self._taken:
            self._taken = False
            try:
                await self._store.release(self.owner)
            except StorageError:
                log.warning("the lease %s is left to expire", self.owner, exc_info=True)

    def pause_heartbeat(self) -> None:
        """Stop renewing (what a stopped process does, and this one between decisions):
        the lease runs out on its own unless a decision confirms it."""
        if self._heartbeat is not None:
            self._heartbeat.cancel()
            self._heartbeat = None

    async def _renew(self) -> bool:
        started = self._clock()
        if not await self._store.renew(self.owner, self.seconds):
            return False
        self._until = started + self.seconds
        return True

    def _lapsed(self) -> None:
        log.warning(
            "the lease %s lapsed (this process was stopped or cut off for longer than %.0f s); "
            "what it was doing is another's to finish, and it goes on as a new owner",
            self.owner,
            self.seconds,
        )
        self.owner, self._taken = self._fresh(), False

    async def _beat(self) -> None:
        while True:
            await asyncio.sleep(self.seconds / 3)
            try:
                async with self._lock:
                    if self._taken and not await self._renew():
                        self._lapsed()
            except StorageError:
                log.warning("the lease %s could not be renewed", self.owner, exc_info=True)


def _lost(seconds: float) -> LeaseLost:
    return LeaseLost(
        f"Stopped: this process lost its lease (it did not run for longer than {seconds:.0f} s, "
        "or could not reach the database), so another process may be carrying this decision "
        "out; plancord ran no more git here. The completion card shows what was recorded."
    )


class GitGuard:
    """One decision's right to run git in an agent's workspace: its intent's owner, which
    must still be this process's live lease before each git command (``confirm``), and the
    other processes holding git there, whose lock files a sweep leaves."""

    def __init__(self, lease: ProcessLease, owner: str, agent: str) -> None:
        self._lease = lease
        self._owner = owner
        self._agent = agent

    async def check(self) -> None:
        """Raise ``LeaseLost`` unless the decision's owner is still this process's lease."""
        await self._lease.confirm(self._owner)

    async def held_elsewhere(self) -> str:
        """Where other live processes hold git in the workspace ("" when none)."""
        return await self._lease.held_elsewhere(self._agent)
