"""Wakes at the next scheduled run and fires what is due, like ``core.scheduler`` does for
deadlines: the runs live in the database, so the first pass after a start finds what fell
due while plancord was down. The wait is a sleep it is given (SimCord's virtual one in the
tests) and cut short whenever a schedule changes."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Coroutine
from typing import Any

from plancord.core.errors import PlancordError
from plancord.core.ports import Clock
from plancord.core.schedule_runs import ScheduleRunner

log = logging.getLogger(__name__)


class ScheduleLoop:
    def __init__(
        self,
        runner: ScheduleRunner,
        clock: Clock,
        *,
        max_sleep: float = 60.0,
        sleep: Callable[[float], Coroutine[Any, Any, None]] = asyncio.sleep,
    ) -> None:
        self.runner = runner
        self.clock = clock
        self.max_sleep = max_sleep
        self.sleep = sleep
        self._woken = False
        self._sleeper: asyncio.Task[None] | None = None
        self._task: asyncio.Task[None] | None = None

    def wake(self) -> None:
        """A schedule changed: look again now."""
        self._woken = True
        if self._sleeper is not None and not self._sleeper.done():
            self._sleeper.cancel()

    async def seconds_until_next(self) -> float:
        at = await self.runner.next_run_at()
        if at is None:
            return self.max_sleep
        return min(max((at - self.clock.now()).total_seconds(), 0.0), self.max_sleep)

    async def run(self) -> None:
        """Pass after pass until cancelled; a storage error is logged and retried."""
        while True:
            self._woken = False
            try:
                await self.runner.fire_due()
                delay = await self.seconds_until_next()
            except PlancordError as exc:
                log.warning("schedule pass failed, retrying: %s", exc)
                delay = min(5.0, self.max_sleep)
            if self._woken:
                continue
            self._sleeper = asyncio.create_task(self.sleep(delay))
            await asyncio.wait({self._sleeper})

    def start(self) -> asyncio.Task[None]:
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self.run(), name="plancord-schedules")
        return self._task

    async def stop(self) -> None:
        for task in (self._sleeper, self._task):
            if task is not None and not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        self._task = None
