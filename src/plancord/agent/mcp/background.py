"""The event loop the MCP clients live on: a thread of its own, never the bot's loop.

Why this exists: an MCP client holds a server open for the agent's whole life with tasks
that wait on its pipes (or its HTTP stream) forever. On the loop that serves every agent
and the Discord connection those waits would be work nobody can account for, and a slow
server's I/O would share its time. So connections run on one background loop, and the
agent's calls cross over and wait for their result; cancelling the caller cancels the
call on the other side.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class BackgroundLoop:
    def __init__(self, name: str = "plancord-mcp") -> None:
        self._name = name
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._guard = threading.Lock()

    def _started(self) -> asyncio.AbstractEventLoop:
        with self._guard:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                thread = threading.Thread(target=loop.run_forever, name=self._name, daemon=True)
                thread.start()
                self._loop, self._thread = loop, thread
            return self._loop

    async def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """Run ``coroutine`` on the background loop and wait for its result here.

        It runs in a fresh context: nothing the caller's context carries (a test world's
        virtual clock, a request's scope) leaks into the connections' loop.
        """
        loop = self._started()
        future: concurrent.futures.Future[T] = concurrent.futures.Future()
        tasks: list[asyncio.Task[T]] = []

        def copy(task: asyncio.Task[T]) -> None:
            if future.done():
                return
            if task.cancelled():
                future.cancel()
            elif (error := task.exception()) is not None:
                future.set_exception(error)
            else:
                future.set_result(task.result())

        def start() -> None:
            if future.done():
                coroutine.close()
                return
            task = loop.create_task(coroutine)
            tasks.append(task)
            task.add_done_callback(copy)

        loop.call_soon_threadsafe(start, context=contextvars.Context())
        try:
            return await asyncio.wrap_future(future)
        except asyncio.CancelledError:
            future.cancel()
            loop.call_soon_threadsafe(lambda: [task.cancel() for task in tasks])
            raise

    def close(self) -> None:
        """Stop the loop once what runs on it has been closed; idempotent."""
        with self._guard:
            loop, thread = self._loop, self._thread
            self._loop = self._thread = None
        if loop is None or thread is None:
            return
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10)
        if not thread.is_alive():
            loop.close()
