"""A background loop's sleep that news cuts short, and the loop's task.

Why this exists: the retriers (the owed duties, the owed completion cards) each run one
task that works what is due, then sleeps until the next thing falls due, unless something
new arrives first (``wake``). The task, the sleep that a wake cancels, and the stop are the
same for each; they live here once. ``sleep`` is replaceable (a test's virtual time).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Coroutine
from typing import Any

Sleep = Callable[[float], Coroutine[Any, Any, None]]


class Waking:
    """One loop's task and its sleep, which ``wake`` cuts short."""

    def __init__(self, name: str) -> None:
        self._name = name
        self.woken = False
        """Set by ``wake``; the loop clears it before each pass and skips the sleep if set."""
        self.sleep: Sleep = asyncio.sleep
        self._sleeper: asyncio.Task[None] | None = None
        self._task: asyncio.Task[None] | None = None

    def wake(self) -> None:
        """Look again now."""
        self.woken = True
        if self._sleeper is not None and not self._sleeper.done():
            self._sleeper.cancel()

    async def nap(self, delay: float) -> None:
        """Sleep ``delay`` seconds, or until ``wake``."""
        self._sleeper = asyncio.create_task(self.sleep(delay))
        await asyncio.wait({self._sleeper})

    def start(self, run: Callable[[], Coroutine[Any, Any, None]], sleep: Sleep) -> None:
        """Run ``run()`` in the background unless it runs already; ``sleep`` naps."""
        self.sleep = sleep
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(run(), name=self._name)

    async def stop(self) -> None:
        for task in (self._sleeper, self._task):
            if task is not None and not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        self._task = self._sleeper = None
