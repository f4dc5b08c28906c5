"""The change feed over either engine: appended inside a decision's transaction, followed by
every process from a thread of its own.

Why this exists: a decision made by one process (a bot process, the operator's shell) must
reach every other process sharing the store, with nothing but the engines' own mechanisms.
``append_change`` writes one ``changes`` row as the *last* statement of the decision's
transaction, so the change exists exactly when the decision does. ``ChangeFeed`` follows
the table from ``start``'s position (the newest id then) and hands the rows, in id order,
to the event loop (``next``):

- SQLite: one writer, so ids increase in commit order; the follower thread reads
  ``id > last`` (one range read of the primary key, no row when nothing changed) every
  ``SQLITE_INTERVAL`` seconds on a read-only connection of its own.
- PostgreSQL: the table's trigger serialises appends under an advisory lock (ids commit in
  order) and notifies ``plancord_changes``; the follower thread waits on ``LISTEN`` and
  reads ``id > last`` on each notification, after each reconnect (the catch-up of what was
  decided while the connection was down) and every ``PG_SWEEP`` seconds of silence.

The loop thread never polls: it waits on a queue the follower fills only when there is
something new. Delivery is at least once and in id order; a process's own changes are
delivered too (``Change.origin`` says whose they are).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import sqlite3
import threading
from collections.abc import Callable, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any, cast

from plancord.core.changes import Change, ChangeKind
from plancord.storage.backend import Backend, Tx
from plancord.storage.codec import ts

log = logging.getLogger(__name__)

SQLITE_INTERVAL = 0.2
"""Seconds between two reads of a SQLite feed."""
PG_SWEEP = 30.0
"""Seconds of silence after which a PostgreSQL follower reads the table all the same."""
RECONNECT_DELAY = 0.5
"""Seconds before a PostgreSQL follower whose connection broke connects again."""
KEEP = 10_000
"""Rows kept at a prune (``ChangeFeed.prune``): the feed is for processes running now."""
BATCH = 500
CHANNEL = "plancord_changes"

_APPEND = (
    "INSERT INTO changes (at, origin, kind, agent, subject, payload) VALUES (?, ?, ?, ?, ?, ?)"
)
_AFTER = (
    "SELECT id, origin, kind, agent, subject, payload FROM changes WHERE id > ? "  # noqa: S608 - a constant
    f"ORDER BY id LIMIT {BATCH}"
)


def append_change(
    conn: Tx,
    origin: str,
    kind: ChangeKind,
    agent: str,
    subject: str,
    payload: Mapping[str, Any],
    at: datetime,
) -> None:
    """Append one change inside the caller's transaction; the last statement it runs (on
    PostgreSQL the append holds the feed's lock until the commit)."""
    values = (ts(at), origin, kind.value, agent, subject, json.dumps(payload, ensure_ascii=False))
    conn.execute(_APPEND, values)


def _change(row: Any) -> Change | None:
    try:
        kind = ChangeKind(row[2])
    except ValueError:
        return None  # a kind a newer plancord appends
    payload = json.loads(row[5])
    return Change(int(row[0]), str(row[1]), kind, str(row[3]), str(row[4]), payload)


Deliver = Callable[[list[Change]], None]


class Follower:
    """The thread's side: reads rows after ``position`` and delivers them, until stopped."""

    def __init__(self, position: int, deliver: Deliver) -> None:
        self.position = position
        self.deliver = deliver
        self.stopping = threading.Event()
        self.reads = 0
        self.breaks = 0
        """How often the PostgreSQL connection broke."""
        self.reconnect_delay = RECONNECT_DELAY

    def read(self, execute: Callable[[str, tuple[Any, ...]], list[Any]]) -> None:
        while True:
            self.reads += 1
            rows = execute(_AFTER, (self.position,))
            changes = [c for c in (_change(row) for row in rows) if c is not None]
            if rows:
                self.position = int(rows[-1][0])
            if changes:
                self.deliver(changes)
            if len(rows) < BATCH:
                return

    def follow_sqlite(self, path: Path, interval: float) -> None:
        conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        try:
            conn.execute("PRAGMA query_only = ON")
            conn.execute("PRAGMA busy_timeout = 5000")
            while not self.stopping.is_set():
                with contextlib.suppress(sqlite3.Error):
                    self.read(lambda sql, args: conn.execute(sql, args).fetchall())
                self.stopping.wait(interval)
        finally:
            conn.close()

    def follow_postgres(self, url: str, sweep: float, on_connect: Callable[[int], None]) -> None:
        import psycopg

        from plancord.storage.postgres import to_pyformat

        while not self.stopping.is_set():
            try:
                with psycopg.connect(
                    url, autocommit=True, application_name="plancord-feed"
                ) as conn:
                    conn.execute(f"LISTEN {CHANNEL}")
                    on_connect(conn.info.backend_pid)

                    def execute(sql: str, args: tuple[Any, ...]) -> list[Any]:
                        return conn.execute(to_pyformat(sql), args).fetchall()

                    self.read(execute)  # what was decided before LISTEN took hold
                    while not self.stopping.is_set():
                        # Woken by a notification, or after a second to look at stopping.
                        woke = False
                        waited = 0.0
                        while not woke and waited < sweep and not self.stopping.is_set():
                            for _ in conn.notifies(timeout=1.0, stop_after=1):
                                woke = True
                            waited += 1.0
                        self.read(execute)
            except psycopg.Error as exc:
                self.breaks += 1
                log.warning("the change feed's connection broke (%s); connecting again", exc)
                self.stopping.wait(self.reconnect_delay)


class ChangeFeed:
    """Every change appended to ``db`` after ``start``, delivered in id order to ``next``."""

    def __init__(
        self,
        db: Backend,
        *,
        interval: float = SQLITE_INTERVAL,
        sweep: float = PG_SWEEP,
    ) -> None:
        self.db = db
        self.origin = db.origin
        self.interval = interval
        self.sweep = sweep
        self._queue: asyncio.Queue[list[Change]] = asyncio.Queue()
        self._follower: Follower | None = None
        self._thread: threading.Thread | None = None
        self.listener_pid: int | None = None
        """The PostgreSQL backend serving the follower's ``LISTEN`` (tests end it)."""
        self.connects = 0

    @property
    def follower(self) -> Follower | None:
        """The thread's side once started: its reads, its breaks, its reconnect delay."""
        return self._follower

    async def latest(self) -> int:
        row = await self.db.fetchone("SELECT max(id) FROM changes")
        return int(row[0]) if row is not None and row[0] is not None else 0

    async def prune(self, keep: int = KEEP) -> int:
        """Drop all but the newest ``keep`` rows; how many went."""
        newest = await self.latest()
        return await self.db.execute("DELETE FROM changes WHERE id <= ?", (newest - keep,))

    async def start(self) -> None:
        """Follow from the newest change now: what was decided before is in the store, which
        a starting process reads whole."""
        if self._thread is not None:
            return
        loop = asyncio.get_running_loop()
        queue = self._queue

        def deliver(changes: list[Change]) -> None:
            with contextlib.suppress(RuntimeError):  # the loop closed under us
                loop.call_soon_threadsafe(queue.put_nowait, changes)

        follower = Follower(await self.latest(), deliver)
        self._follower = follower
        target = self._target(follower)
        self._thread = threading.Thread(target=target, name="plancord-changes", daemon=True)
        self._thread.start()

    def _target(self, follower: Follower) -> Callable[[], None]:
        if self.db.dialect == "postgresql":
            from plancord.storage.postgres import PgDatabase

            url = cast(PgDatabase, self.db).url

            def connected(pid: int) -> None:
                self.listener_pid = pid
                self.connects += 1

            return lambda: follower.follow_postgres(url, self.sweep, connected)
        from plancord.storage.db import Database

        path = cast(Database, self.db).path
        return lambda: follower.follow_sqlite(path, self.interval)

    async def next(self) -> list[Change]:
        """The next changes, oldest first (waits until there are some)."""
        return await self._queue.get()

    async def close(self) -> None:
        follower, thread = self._follower, self._thread
        self._thread = None
        if follower is not None:
            follower.stopping.set()
        if thread is not None:
            await asyncio.to_thread(thread.join, 5.0)
