"""Keeps the garbage collector's full passes short, so they do not stall the event loop.

A full collection walks every object the collector tracks. Right after startup the bot holds
about 220,000 of them (modules, classes, the tables of discord.py, pydantic and the SDK),
and they live as long as the process; walking them takes 100–300 ms on a small VM, and
while it runs nothing else does: no interaction is answered, no agent moves.

``GcTuning`` moves long-lived objects out of the collector's reach with ``gc.freeze()``:
once after startup, then every ``refreeze_seconds`` after a young-generation pass, so a full
collection only walks what was allocated since. Frozen objects are still freed by reference
counting the moment nothing uses them; only garbage caught in a reference cycle among them
would be kept, so once every ``full_every_seconds``, at a moment no agent is working,
everything is unfrozen, collected once, and what survives is frozen again. A bot that is
never idle gets that pass anyway when it is four periods overdue: one pause of a few hundred
milliseconds every few hours, well inside Discord's 3 s.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import time
from collections.abc import Awaitable, Callable

log = logging.getLogger(__name__)


class GcTuning:
    def __init__(
        self,
        *,
        idle: Callable[[], bool],
        refreeze_seconds: float = 10.0,
        full_every_seconds: float = 3600.0,
        monotonic: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.idle = idle
        self.sleep = sleep
        self.refreeze_seconds = refreeze_seconds
        self.full_every_seconds = full_every_seconds
        self.monotonic = monotonic
        self._last_full = monotonic()
        self._task: asyncio.Task[None] | None = None

    def after_startup(self) -> None:
        """Collect what startup left behind, then freeze everything that is still alive."""
        self.full_pass()

    def refreeze(self) -> None:
        """A young-generation pass, then freeze its survivors: cheap, and no pause."""
        gc.collect(1)
        gc.freeze()

    def full_pass(self) -> None:
        """Unfreeze, collect everything once (the one long pause), freeze what survives."""
        started = self.monotonic()
        gc.unfreeze()
        found = gc.collect()
        gc.freeze()
        self._last_full = self.monotonic()
        log.debug(
            "full garbage collection: %d unreachable, %d objects frozen, %.0f ms",
            found,
            gc.get_freeze_count(),
            (self._last_full - started) * 1000,
        )

    def tick(self) -> None:
        """What one period does: the full pass when it is due and nothing is working (or it
        is four periods overdue), or else a refreeze."""
        since = self.monotonic() - self._last_full
        due = since >= self.full_every_seconds
        if (due and self.idle()) or since >= 4 * self.full_every_seconds:
            self.full_pass()
        else:
            self.refreeze()

    def start(self) -> asyncio.Task[None]:
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._run(), name="plancord-gc")
        return self._task

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None

    async def _run(self) -> None:
        while True:
            await self.sleep(self.refreeze_seconds)
            self.tick()
