"""Writes that must happen, retried until they land: one retrier for every kind of duty.

Why this exists: some steps must not be lost to a database another process holds locked,
or to Discord answering 5xx once: an ended execution's result opened (without it the agent
can never start another plan), an execution ended (without it the agent "has not finished
executing" until a restart), a settled ask's card marked (without it the card shows live
buttons for a question already answered). Each part that does such a step tries it at once;
when that fails it *owes* it here (``owe``), naming a kind whose handler (``handle``) does
it again. The retrier then:

- keeps the duty in memory first (the database that refused the step may refuse writing
  the duty too) and, at its next try, either does it or writes it to ``owed_duties``
  (``storage.owed_duties``), from where it outlives this process;
- works the rows that are due, each claimed under this process's lease
  (``agent.execution.lease``), so two processes never do one duty at once and a crashed
  process's claim is another's once its lease expires;
- waits ``FIRST_DELAY`` after a failed try, doubling up to ``MAX_DELAY``, and logs every
  failed try with the duty and its attempts, and the try that lands.

A duty kept only in memory when the process dies is found again at the next start by the
part that owes it (an ended execution whose result never opened, ``ExecutionEndings``).
Every handler is idempotent: it reads what is true now and does only what is still missing.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from plancord.agent.execution.lease import ProcessLease
from plancord.core.errors import StorageError
from plancord.core.waking import Sleep, Waking
from plancord.storage.backend import Backend
from plancord.storage.owed_duties import OwedDuty, OwedDutyStore

log = logging.getLogger(__name__)

FIRST_DELAY = 1.0
"""Seconds before a failed duty is tried again; doubled at each failure."""
MAX_DELAY = 60.0
"""The longest wait between two tries of a duty."""
SWEEP_SECONDS = 30.0
"""How often the table is read when nothing is known to be due (another process's rows)."""

Handler = Callable[[OwedDuty], Awaitable[None]]
"""Does a duty again (idempotently); raises when it still cannot."""


@dataclass(slots=True)
class _Held:
    """A duty this process owes that is not in the table yet."""

    duty: OwedDuty
    due: float


class OwedDuties:
    """The one retrier of this process's owed duties, and its share of the table's."""

    def __init__(self, db: Backend, lease: ProcessLease) -> None:
        self._store = OwedDutyStore(db)
        self._lease = lease
        self._handlers: dict[str, Handler] = {}
        self._held: dict[tuple[str, str], _Held] = {}
        self._working = asyncio.Lock()
        self._waking = Waking("plancord-owed-duties")
        self.landed: list[str] = []
        """The duties that landed after being owed, in order (``kind subject``)."""

    def handle(self, kind: str, handler: Handler) -> None:
        """``handler`` does the duties of ``kind``."""
        self._handlers[kind] = handler

    def owe(self, kind: str, subject: str, detail: dict[str, Any], error: BaseException) -> None:
        """The step ``kind`` on ``subject`` failed with ``error``: it is owed from now on,
        tried again after ``FIRST_DELAY`` (and written to the table at that try if it fails
        again)."""
        duty = OwedDuty(kind, subject, detail, attempts=1, last_error=_text(error))
        key = (kind, subject)
        if key in self._held:
            duty = OwedDuty(kind, subject, detail, self._held[key].duty.attempts, duty.last_error)
        self._held[key] = _Held(duty, _now() + FIRST_DELAY)
        log.warning(
            "owed duty %s: not done (attempt %d), tried again in %.0f s: %s",
            duty.name,
            duty.attempts,
            FIRST_DELAY,
            duty.last_error,
        )
        self.wake()

    def held(self) -> tuple[str, ...]:
        """The duties owed that only this process's memory holds (``kind subject``)."""
        return tuple(h.duty.name for h in self._held.values())

    async def owed(self) -> list[OwedDuty]:
        """Every duty owed: the table's and those held here."""
        written = await self._store.owed()
        names = {d.name for d in written}
        return written + [h.duty for h in self._held.values() if h.duty.name not in names]

    def wake(self) -> None:
        """Look again now."""
        self._waking.wake()

    async def work(self) -> None:
        """One pass: every held duty that is due tried (or written), then every row that is
        due and free claimed and tried."""
        async with self._working:
            await self._work_held()
            await self._work_written()

    async def _work_held(self) -> None:
        for key, held in list(self._held.items()):
            if held.due > _now():
                continue
            duty = held.duty
            try:
                await self._do(duty)
            except Exception as exc:
                failed = OwedDuty(
                    duty.kind, duty.subject, duty.detail, duty.attempts + 1, _text(exc)
                )
                delay = _delay(failed.attempts)
                try:
                    await self._store.owe(failed, delay)
                except StorageError:
                    self._held[key] = _Held(failed, _now() + delay)
                else:
                    del self._held[key]
                _failed(failed, delay)
                continue
            del self._held[key]
            self._landed(duty)

    async def _work_written(self) -> None:
        owner = await self._lease.owner_now()
        for duty in await self._store.due(owner):
            if not await self._store.claim(duty, owner):
                continue
            try:
                await self._do(duty)
            except Exception as exc:
                delay = _delay(duty.attempts + 1)
                await self._store.failed(duty, owner, _text(exc), delay)
                _failed(
                    OwedDuty(duty.kind, duty.subject, duty.detail, duty.attempts + 1, _text(exc)),
                    delay,
                )
                continue
            await self._store.done(duty)
            self._landed(duty)

    async def _do(self, duty: OwedDuty) -> None:
        handler = self._handlers.get(duty.kind)
        if handler is None:
            raise LookupError(f"no part of this process does {duty.kind!r}")
        await handler(duty)

    def _landed(self, duty: OwedDuty) -> None:
        self.landed.append(duty.name)
        log.info("owed duty %s: done after %d attempts", duty.name, duty.attempts + 1)

    async def run(self) -> None:
        """Loop until cancelled: work what is due, then sleep until the next held duty is
        due (or the next sweep of the table)."""
        while True:
            self._waking.woken = False
            try:
                await self.work()
            except StorageError as exc:
                log.warning("the owed duties could not be read: %s", exc)
            if self._waking.woken:
                continue
            due = min((h.due for h in self._held.values()), default=_now() + SWEEP_SECONDS)
            await self._waking.nap(min(max(due - _now(), 0.0), SWEEP_SECONDS))

    def start(self, sleep: Sleep = asyncio.sleep) -> None:
        """Run in the background from now (its first pass finds what the table owes);
        ``sleep`` waits between passes (a test's virtual time)."""
        self._waking.start(self.run, sleep)

    async def stop(self) -> None:
        await self._waking.stop()


def _failed(duty: OwedDuty, delay: float) -> None:
    log.warning(
        "owed duty %s: not done (attempt %d), tried again in %.0f s: %s",
        duty.name,
        duty.attempts,
        delay,
        duty.last_error,
    )


def _delay(attempts: int) -> float:
    return float(min(FIRST_DELAY * (2 ** min(max(attempts - 1, 0), 16)), MAX_DELAY))


def _text(error: BaseException) -> str:
    return (str(error) or type(error).__name__)[:500]


def _now() -> float:
    return asyncio.get_running_loop().time()
