"""The connections the proxy let through, each held only while the grant it came under does.

Why this exists: a connection is decided once, when it opens, but a tunnel can outlive the
step that granted it (a long-lived process the agent caused, such as an MCP server, keeps
a CONNECT tunnel open across steps and past the execution's end). So every connection the
proxy lets through is kept here with its grant (an opaque value of the decision's, such as
"this plan's step 2, files.test"), and every :data:`RECHECK_SECONDS` the decision's
``recheck`` says, for each agent holding connections, which of their grants still hold:
the connections of every other grant are ended, sockets closed. A recheck that fails, or
a bot loop that is gone, ends them all (fail closed).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine, Hashable
from concurrent.futures import Future
from typing import TypeVar

log = logging.getLogger(__name__)
_T = TypeVar("_T")

RECHECK_SECONDS = 0.25
RECHECK_BOUND_SECONDS = 15.0

Recheck = Callable[[str, frozenset[Hashable]], Coroutine[object, object, frozenset[Hashable]]]
"""``recheck(agent, grants)``: run on the bot's loop, the grants among ``grants`` that
still hold."""


async def on_bot_loop(
    loop: asyncio.AbstractEventLoop, work: Coroutine[object, object, _T], seconds: float
) -> _T | None:
    """``work`` run on the bot's ``loop`` within ``seconds``; None when that loop is closed
    (the bot is stopping)."""
    try:
        future: Future[_T] = asyncio.run_coroutine_threadsafe(work, loop)
    except RuntimeError:
        work.close()
        return None
    try:
        return await asyncio.wait_for(asyncio.wrap_future(future), seconds)
    except BaseException:
        future.cancel()
        raise


class OpenGrants:
    """Per agent, each open connection's task and its grant; run on the proxy's loop."""

    def __init__(self, recheck: Recheck | None, bot_loop: asyncio.AbstractEventLoop) -> None:
        self._recheck = recheck
        self._bot_loop = bot_loop
        self._held: dict[str, dict[asyncio.Task[object], Hashable]] = {}
        self._watcher: asyncio.Task[None] | None = None

    def hold(self, agent: str, grant: Hashable) -> None:
        """The running connection (the current task) came under ``grant``."""
        task = asyncio.current_task()
        if task is None or self._recheck is None:
            return
        self._held.setdefault(agent, {})[task] = grant
        if self._watcher is None or self._watcher.done():
            self._watcher = asyncio.create_task(self._watch())

    def drop(self, agent: str) -> None:
        """The running connection ended."""
        task = asyncio.current_task()
        held = self._held.get(agent)
        if held is None or task is None:
            return
        held.pop(task, None)
        if not held:
            del self._held[agent]

    def stop(self) -> None:
        if self._watcher is not None:
            self._watcher.cancel()

    async def _watch(self) -> None:
        while self._held:
            await asyncio.sleep(RECHECK_SECONDS)
            for agent in list(self._held):
                await self._recheck_agent(agent)

    async def _recheck_agent(self, agent: str) -> None:
        held = self._held.get(agent)
        if not held or self._recheck is None:
            return
        grants = frozenset(held.values())
        still: frozenset[Hashable] | None
        try:
            still = await on_bot_loop(
                self._bot_loop, self._recheck(agent, grants), RECHECK_BOUND_SECONDS
            )
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise  # the proxy is closing
            log.warning("agent %s: the recheck of open connections was cancelled", agent)
            still = None  # the bot's loop cancelled it: ended, as any failure is
        except Exception:
            log.exception("agent %s: rechecking open connections failed; ending them", agent)
            still = None
        ended = [task for task, grant in held.items() if still is None or grant not in still]
        for task in ended:
            log.info("agent %s: a connection's grant ended (%s); closing it", agent, held[task])
            task.cancel()
        await asyncio.gather(*ended, return_exceptions=True)
