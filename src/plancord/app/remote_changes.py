"""What this process does with a decision another process made (``core.changes``).

Why this exists: the change feed (``storage.changes``) tells every process of every
decision; this is the one place that says who here acts on one made elsewhere, and how. A
process hears only agents it serves (their guild is on its shards), and never its own
changes, whose listeners it ran when it made them:

- a planning change goes first to the running turn (``join_ending``: a cancel stops it
  before its next call, as ``/plan cancel`` in this process would; first, so the stop never
  waits behind a redraw that waits on Discord), then the deadline scheduler re-arms, then
  the front end redraws (the plan card's buttons gone when the plan was decided, timed out
  or cancelled);
- a result decided or moved redraws its completion card; a result opened elsewhere makes
  the cards still owed look again (``on_result_opened``).

The local listeners that write (the step keeper, the results) are not told: the deciding
process ran them in its own transaction's wake, and they must run once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable

from plancord.agent.plan_events import ENDINGS, join_ending
from plancord.agent.runtime import AgentRuntime
from plancord.core.asks.service import AskService
from plancord.core.changes import Change, ChangeKind, planning_change
from plancord.core.ports import PlanningListener
from plancord.core.results import ResultListener
from plancord.core.service import PlanningService
from plancord.storage.changes import ChangeFeed
from plancord.storage.store import SqlStore

log = logging.getLogger(__name__)

Wait = Callable[[Awaitable[list[Change]]], Awaitable[list[Change]]]


async def plain_wait(next_batch: Awaitable[list[Change]]) -> list[Change]:
    return await next_batch


class RemoteChanges:
    """Follows the feed on the event loop and acts on the changes other processes made."""

    def __init__(
        self,
        feed: ChangeFeed,
        store: SqlStore,
        planning: PlanningService,
        serves: Callable[[str], Awaitable[bool]],
        *,
        front_end: PlanningListener | None = None,
        runtime: AgentRuntime | None = None,
        asks: AskService | None = None,
    ) -> None:
        self.feed = feed
        self._store = store
        self._planning = planning
        self._serves = serves
        self._front_end = front_end
        self._results = front_end if isinstance(front_end, ResultListener) else None
        self._runtime = runtime
        self._asks = asks
        self._opened: list[Callable[[], None]] = []
        self._task: asyncio.Task[None] | None = None
        self.heard: list[tuple[Change, float]] = []
        """The last changes acted on, with the ``time.monotonic()`` they were done at
        (bounded; tests and the benchmark read it)."""

    def on_result_opened(self, callback: Callable[[], None]) -> None:
        self._opened.append(callback)

    async def start(self, wait: Wait = plain_wait) -> None:
        """Follow from the newest change now, until ``stop``. ``wait`` awaits each next
        batch (a simulated world declares it as an outside input)."""
        if self._task is not None:
            return
        await self.feed.start()
        self._task = asyncio.create_task(self._follow(wait), name="plancord-change-feed")

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await self.feed.close()

    async def _follow(self, wait: Wait) -> None:
        while True:
            for change in await wait(self.feed.next()):
                if change.origin == self.feed.origin:
                    continue
                try:
                    await self.changed(change)
                except asyncio.CancelledError:
                    raise
                except Exception:
                    log.exception("acting on change %s (%s) failed", change.id, change.kind)

    async def changed(self, change: Change) -> None:
        """Act on ``change``, made by another process, when this one serves its agent."""
        if not await self._serves(change.agent):
            return
        if change.kind is ChangeKind.PLAN:
            await self._planning_changed(change)
        elif change.kind is ChangeKind.RESULT:
            await self._result_changed(change)
        elif change.kind is ChangeKind.ASK and self._asks is not None:
            # An answer from the shell or another process: the waiter here wakes now,
            # not at its next look at the row.
            await self._asks.settled_elsewhere(change.subject)
        self.heard = [*self.heard[-99:], (change, time.monotonic())]

    async def _planning_changed(self, change: Change) -> None:
        payload = change.payload
        after = payload.get("after") or {}
        plan_id, number = after.get("plan_id") or change.subject, after.get("revision") or 0
        before = payload.get("before") or {}
        if not number:
            plan_id, number = before.get("plan_id") or plan_id, before.get("revision") or 0
        revision = await self._store.get_revision(plan_id, number) if number else None
        planning = planning_change(payload, revision)
        # The turn first: a stop must not wait behind a redraw that waits on Discord.
        if self._runtime is not None and planning.action in ENDINGS:
            join_ending(self._runtime.session(change.agent), planning)
        self._planning.changed_elsewhere()
        if self._front_end is not None:
            await self._front_end.planning_changed(planning)

    async def _result_changed(self, change: Change) -> None:
        if change.payload.get("what") == "opened":
            for callback in self._opened:
                callback()
        elif self._results is not None:
            await self._results.result_changed(change.agent, change.subject)
