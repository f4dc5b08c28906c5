"""Coalesced edits of one message: the progress message of an executing plan is redrawn
after every step, faster than Discord's edit rate limit allows, and only its latest content
matters; so at most one edit is in flight per message and newer contents replace older
ones while it waits."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import discord

log = logging.getLogger(__name__)


class CoalescedEdits:
    """At most one edit in flight per message; while one is in flight (or waiting out the
    debounce), newer contents replace older ones, so only the latest is ever sent next."""

    def __init__(self, debounce: Callable[[], float]) -> None:
        self._debounce = debounce
        self._latest: dict[int, Callable[[], Awaitable[Any]]] = {}
        self._workers: dict[int, asyncio.Task[None]] = {}

    def submit(self, message_id: int, edit: Callable[[], Awaitable[Any]]) -> None:
        self._latest[message_id] = edit
        worker = self._workers.get(message_id)
        if worker is None or worker.done():
            self._workers[message_id] = asyncio.create_task(
                self._drain(message_id), name=f"plancord-progress-{message_id}"
            )

    async def flush(self, message_id: int) -> None:
        """Wait until the latest submitted content for ``message_id`` has been sent."""
        worker = self._workers.get(message_id)
        if worker is not None:
            await asyncio.shield(worker)

    async def _drain(self, message_id: int) -> None:
        try:
            while message_id in self._latest:
                delay = self._debounce()
                if delay > 0:
                    await asyncio.sleep(delay)
                edit = self._latest.pop(message_id)
                try:
                    await edit()
                except discord.HTTPException:
                    log.warning("could not update progress message %s", message_id, exc_info=True)
        finally:
            self._workers.pop(message_id, None)
