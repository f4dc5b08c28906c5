"""Wakes at the earliest planning deadline and times out what is overdue.

Deadlines live in the database, so after a restart the first pass fires every overdue one;
the version check in each transition makes sure each fires exactly once. Timeout = cancel.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from plancord.core.errors import PlancordError
from plancord.core.ports import PlanningChange
from plancord.core.service import PlanningService

log = logging.getLogger(__name__)


class DeadlineScheduler:
    def __init__(self, service: PlanningService, *, max_sleep: float = 60.0) -> None:
        self.service = service
        self.max_sleep = max_sleep
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        service.on_deadlines_changed(self.wake)

    def wake(self) -> None:
        """Deadlines moved: re-arm for the earliest one."""
        self._wake.set()

    async def run_once(self) -> list[PlanningChange]:
        """Fire everything overdue now."""
        return await self.service.fire_due()

    async def seconds_until_next(self) -> float:
        deadline = await self.service.next_deadline()
        if deadline is None:
            return self.max_sleep
        delay = (deadline - self.service.clock.now()).total_seconds()
        return min(max(delay, 0.0), self.max_sleep)

    async def run(self) -> None:
        """Loop until cancelled. Storage errors are logged and retried on the next pass."""
        while True:
            self._wake.clear()
            try:
                await self.run_once()
                delay = await self.seconds_until_next()
            except PlancordError as exc:
                log.warning("deadline pass failed, retrying: %s", exc)
                delay = min(5.0, self.max_sleep)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), timeout=delay)

    def start(self) -> asyncio.Task[None]:
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self.run(), name="plancord-deadlines")
        return self._task

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
