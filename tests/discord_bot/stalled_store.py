"""A store that answers late in real time, and a stopwatch for an interaction's first answer.

SimCord runs Discord's 3-second deadline for the first answer on its virtual clock, which
moves only when a test advances it, and it replaces ``time.monotonic`` too: a handler that
blocked 3.5 s of real time before answering is accepted. So these helpers measure the real
time themselves, with ``time.perf_counter`` (which SimCord leaves alone):

- :func:`stalled` makes the store slow for ``STALL_SECONDS`` of real time, as a busy store
  is: another connection holds SQLite's write lock (``BEGIN IMMEDIATE``), so every write the
  bot starts meanwhile waits in ``busy_timeout``; and every read started meanwhile waits
  until the lock is let go, as a read behind a loaded PostgreSQL does (SQLite's own reader
  would not wait, in WAL).
- :func:`first_answer` runs an interaction and says how long after it was sent the bot's
  first answer (the interaction callback: reply, defer, modal or update) reached Discord.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import threading
import time
from collections.abc import Awaitable, Iterator
from typing import Any, TypeVar

import pytest

from plancord.app import App
from plancord.storage.db import Database

STALL_SECONDS = 3.5
"""How long the store is stalled: past Discord's 3 s for a first answer."""
FIRST_ANSWER_BUDGET = 1.0
"""How soon the first answer must reach Discord, stall or not: well within its 3 s."""

T = TypeVar("T")


class _TimedRequests(list[Any]):
    """The simulated Discord's request log, with the real time each request arrived."""

    def __init__(self, entries: list[Any]) -> None:
        super().__init__(entries)
        self.at: list[float | None] = [None] * len(entries)

    def append(self, entry: Any) -> None:
        super().append(entry)
        self.at.append(time.perf_counter())


def _timed(env: Any, monkeypatch: pytest.MonkeyPatch) -> _TimedRequests:
    log = env.backend.http_requests
    if not isinstance(log, _TimedRequests):
        log = _TimedRequests(log)
        monkeypatch.setattr(env.backend, "http_requests", log)
    return log


async def first_answer(
    env: Any, monkeypatch: pytest.MonkeyPatch, interaction: Awaitable[T]
) -> tuple[T, float]:
    """``interaction``'s result, and the real seconds from sending it to its first answer."""
    log = _timed(env, monkeypatch)
    start = len(log)
    sent = time.perf_counter()
    result = await interaction
    for index in range(start, len(log)):
        entry = log[index]
        if entry.method == "POST" and entry.path.endswith("/callback"):
            at = log.at[index]
            assert at is not None
            return result, at - sent
    raise AssertionError(f"the interaction got no first answer: {result!r}")


def _hold_write_lock(path: str, until: float, held: threading.Event) -> None:
    locker = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    try:
        locker.execute("BEGIN IMMEDIATE")
        held.set()
        time.sleep(max(0.0, until - time.perf_counter()))
        locker.execute("COMMIT")
    finally:
        held.set()
        locker.close()


@contextlib.contextmanager
def stalled(
    app: App, monkeypatch: pytest.MonkeyPatch, seconds: float = STALL_SECONDS
) -> Iterator[None]:
    """For ``seconds`` of real time from now, the bot's store answers nothing: its writes
    wait behind SQLite's write lock, held by another connection, and its reads wait for the
    lock to go. Leaving the block waits for the lock to be let go."""
    db = app.db
    assert isinstance(db, Database), "the stall holds SQLite's write lock"
    until = time.perf_counter() + seconds
    held = threading.Event()
    locker = threading.Thread(
        target=_hold_write_lock, args=(str(db.path), until, held), name="write-lock-holder"
    )
    locker.start()
    held.wait()
    read = db.fetchall

    async def late_read(sql: str, params: Any = ()) -> list[sqlite3.Row]:
        left = until - time.perf_counter()
        if left > 0:
            await asyncio.to_thread(time.sleep, left)
        return await read(sql, params)

    monkeypatch.setattr(db, "fetchall", late_read)
    try:
        yield
    finally:
        locker.join()
        monkeypatch.setattr(db, "fetchall", read)
