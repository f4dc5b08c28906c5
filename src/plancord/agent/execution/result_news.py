"""Who hears about results: the front ends' ``ResultListener``s, told when a result opens,
changes or had an interrupted decision recovered, and the redraws a decision starts.

Why this exists: a decision holds its result's lock while git runs, and the card reads the
result under the same lock, so the card is told to redraw only once the lock is released:
a task of its own, which this object keeps until it ends (and cancels at shutdown).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from plancord.core.results import ResultListener

log = logging.getLogger(__name__)


class ResultNews:
    """The result listeners, and the tasks telling them."""

    def __init__(self) -> None:
        self._listeners: list[ResultListener] = []
        self._tasks: set[asyncio.Task[None]] = set()

    def add_listener(self, listener: ResultListener) -> None:
        self._listeners.append(listener)

    async def ready(self, agent: str, plan_id: str) -> None:
        """The result opened (or its review was kept): its card is shown."""
        await self._tell(plan_id, lambda listener: listener.result_ready(agent, plan_id))

    async def changed(self, agent: str, plan_id: str) -> None:
        await self._tell(plan_id, lambda listener: listener.result_changed(agent, plan_id))

    async def recovered(self, agent: str, plan_id: str, text: str) -> None:
        """An interrupted decision on the result was finished or undone; ``text`` says how,
        for its channel."""
        await self._tell(plan_id, lambda listener: listener.result_recovered(agent, plan_id, text))

    def changed_soon(self, agent: str, plan_id: str) -> None:
        """Tell the front ends the result changed once the caller's lock is released."""
        self.run_soon(self.changed(agent, plan_id))

    def run_soon(self, work: Coroutine[Any, Any, None]) -> None:
        """Run ``work`` as a task kept until it ends (``settled`` waits for it)."""
        task = asyncio.create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def settled(self) -> None:
        """Wait for the tasks started so far (tests, shutdown)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _tell(self, plan_id: str, call: Callable[[ResultListener], Awaitable[None]]) -> None:
        for listener in list(self._listeners):
            try:
                await call(listener)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("a result listener failed for %s", plan_id)
