"""Another process's write lock, taken at the moment the bot reaches one named write.

``lock_at(monkeypatch, app, Store.method)`` makes the first call of ``method`` meet SQLite's
write lock held by another connection (``BEGIN IMMEDIATE``) for ``HELD_SECONDS`` of real
time: past the store's busy timeout, so that write fails as it would behind a process
holding the database; every later call goes through. ``release()`` waits until the lock is
let go."""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from plancord.app import App
from plancord.storage.db import BUSY_TIMEOUT_MS, Database

HELD_SECONDS = BUSY_TIMEOUT_MS / 1000 + 0.5


class WriteLock:
    def __init__(self, path: str) -> None:
        self._path = path
        self._thread: threading.Thread | None = None
        self.met = 0

    def take(self) -> None:
        held = threading.Event()

        def hold() -> None:
            locker = sqlite3.connect(self._path, isolation_level=None, check_same_thread=False)
            try:
                locker.execute("BEGIN IMMEDIATE")
                held.set()
                time.sleep(HELD_SECONDS)
                locker.execute("COMMIT")
            finally:
                held.set()
                locker.close()

        self._thread = threading.Thread(target=hold, name="another-process-write-lock")
        self._thread.start()
        held.wait()
        self.met += 1

    def release(self) -> None:
        """Wait until the other connection lets the lock go."""
        if self._thread is not None:
            self._thread.join()


def lock_at(
    monkeypatch: pytest.MonkeyPatch, app: App, owner: type, method: str, times: int = 1
) -> WriteLock:
    """The first ``times`` calls of ``owner.method`` meet another connection's write lock."""
    db = app.db
    assert isinstance(db, Database), "the lock is SQLite's"
    lock = WriteLock(str(db.path))
    original: Callable[..., Any] = getattr(owner, method)

    async def locked(self: Any, *args: Any, **kwargs: Any) -> Any:
        if lock.met < times:
            lock.release()
            lock.take()
        return await original(self, *args, **kwargs)

    monkeypatch.setattr(owner, method, locked)
    return lock
