"""One long-lived aiosqlite connection per database file, and the transaction discipline.

aiosqlite runs SQLite on a worker thread, so the event loop never blocks on disk. All access
to the shared connection goes through one ``asyncio.Lock``: a coroutine never sees another's
uncommitted writes. SQLite failures (locked, disk full, corrupt) become ``StorageError`` with a
message a user can read; the transaction is rolled back, so nothing is half-written.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager, suppress
from pathlib import Path
from typing import Any

import aiosqlite

from plancord.core.errors import StorageError

BUSY_TIMEOUT_MS = 5000


def storage_error(exc: sqlite3.Error, path: Path) -> StorageError:
    """Translate a SQLite error into a message that says what happened and that nothing changed."""
    text = str(exc).lower()
    kind = "other"
    if "locked" in text or "busy" in text:
        kind = "locked"
        message = (
            f"The database {path} is locked by another process; nothing was changed. "
            "Try again in a moment."
        )
    elif "full" in text:
        kind = "full"
        message = (
            f"The disk holding {path} is full; nothing was changed. Free some space and retry."
        )
    elif "readonly" in text or "read-only" in text:
        kind = "readonly"
        message = f"The database {path} is read-only; nothing was changed."
    elif "malformed" in text or "not a database" in text:
        kind = "damaged"
        message = f"The database {path} is damaged or not a plancord database ({exc})."
    else:
        message = f"Database error on {path}: {exc}; nothing was changed."
    return StorageError(message, kind)


class Database:
    """An open plancord database. Use ``async with await Database.open(path)`` or ``close()``."""

    def __init__(self, conn: aiosqlite.Connection, path: Path) -> None:
        self.conn = conn
        self.path = path
        self.lock = asyncio.Lock()

    @classmethod
    async def open(
        cls,
        path: Path,
        *,
        migrate: bool = True,
        migrations_dir: Path | None = None,
        busy_timeout_ms: int = BUSY_TIMEOUT_MS,
    ) -> Database:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            conn = await aiosqlite.connect(path, isolation_level=None)
        except sqlite3.Error as exc:
            raise storage_error(exc, path) from exc
        conn.row_factory = aiosqlite.Row
        db = cls(conn, path)
        try:
            for pragma in (
                f"PRAGMA busy_timeout = {int(busy_timeout_ms)}",
                "PRAGMA journal_mode = WAL",
                "PRAGMA foreign_keys = ON",
                "PRAGMA synchronous = NORMAL",
            ):
                async with conn.execute(pragma):
                    pass
            if migrate:
                from plancord.storage.migrations import apply_migrations

                await apply_migrations(db, migrations_dir)
        except BaseException as exc:
            await conn.close()
            if isinstance(exc, sqlite3.Error):
                raise storage_error(exc, path) from exc
            raise
        return db

    async def close(self) -> None:
        await self.conn.close()

    async def __aenter__(self) -> Database:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[aiosqlite.Connection]:
        """``BEGIN IMMEDIATE`` … ``COMMIT``; errors roll back and surface as ``StorageError``."""
        async with self.lock:
            try:
                await self.conn.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as exc:
                raise storage_error(exc, self.path) from exc
            try:
                yield self.conn
                await self.conn.execute("COMMIT")
            except BaseException as exc:
                await self.rollback_quietly()
                if isinstance(exc, sqlite3.Error):
                    raise storage_error(exc, self.path) from exc
                raise

    async def rollback_quietly(self) -> None:
        """Roll back whatever is open; SQLite may already have rolled back on its own."""
        with suppress(sqlite3.Error):
            await self.conn.execute("ROLLBACK")

    async def fetchall(self, sql: str, params: Iterable[Any] = ()) -> list[sqlite3.Row]:
        async with self.lock:
            try:
                return list(await self.conn.execute_fetchall(sql, tuple(params)))
            except sqlite3.Error as exc:
                raise storage_error(exc, self.path) from exc

    async def fetchone(self, sql: str, params: Iterable[Any] = ()) -> sqlite3.Row | None:
        rows = await self.fetchall(sql, params)
        return rows[0] if rows else None
