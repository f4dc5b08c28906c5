"""Two aiosqlite connections per database file, and the transaction discipline.

aiosqlite runs each SQLite connection on its own worker thread, so the event loop never
blocks on disk. Writes go through the writer connection, and each write is one function run
on the writer's thread between ``BEGIN IMMEDIATE`` and ``COMMIT`` (``Database.write``): one
round trip from the event loop per transaction, never a transaction left open between two
awaits, and writes applied in the order they were asked for. Reads go through a second,
``query_only`` connection, which WAL lets read committed data while a write is in progress,
so a read never waits behind the writers. SQLite failures (locked, disk full, corrupt)
become ``StorageError`` with a message a user can read; the transaction is rolled back, so
nothing is half-written.
"""

from __future__ import annotations

import os
import secrets
import sqlite3
from collections.abc import Awaitable, Callable, Iterable
from contextlib import suppress
from pathlib import Path
from typing import Any, TypeVar, cast

import aiosqlite

from plancord.core.errors import StorageError
from plancord.storage.backend import Tx
from plancord.storage.migrations import apply_migrations

BUSY_TIMEOUT_MS = 5000
T = TypeVar("T")


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


def _create_private(path: Path) -> None:
    """Create the database file empty and 0600 (its folder 0700) when it does not exist yet,
    so SQLite, which gives its ``-wal`` and ``-shm`` files the database's mode, keeps the
    conversations and plans readable by the bot's user alone."""
    if path.exists():
        return
    if not path.parent.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.parent.chmod(0o700)
    with suppress(FileExistsError):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))


class Database:
    """An open SQLite plancord database (``backend.Backend``). Use
    ``async with await Database.open(path)`` or ``close()``.

    ``conn`` is the writer connection and ``raw`` the ``sqlite3.Connection`` under it, used
    only on the writer's thread (inside ``write``); ``reader`` serves ``fetchall``.
    """

    def __init__(
        self,
        conn: aiosqlite.Connection,
        raw: sqlite3.Connection,
        path: Path,
        reader: aiosqlite.Connection | None = None,
    ) -> None:
        self.conn = conn
        self.raw = raw
        self.path = path
        self.where = str(path)
        self.reader = reader
        self.origin = secrets.token_hex(8)

    dialect = "sqlite"
    integrity_errors: tuple[type[Exception], ...] = (sqlite3.IntegrityError,)

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
        _create_private(path)
        both = (
            f"PRAGMA busy_timeout = {int(busy_timeout_ms)}",
            "PRAGMA foreign_keys = ON",
            "PRAGMA synchronous = NORMAL",
        )
        try:
            # WAL is a property of the file, set by the writer; the reader can never write.
            conn, raw = await _connect(path, ("PRAGMA journal_mode = WAL", *both))
        except sqlite3.Error as exc:
            raise storage_error(exc, path) from exc
        db = cls(conn, raw, path)
        try:
            if migrate:
                await apply_migrations(db, migrations_dir)
            db.reader, _ = await _connect(path, (*both, "PRAGMA query_only = ON"))
        except BaseException as exc:
            await db.close()
            if isinstance(exc, sqlite3.Error):
                raise storage_error(exc, path) from exc
            raise
        return db

    async def close(self) -> None:
        reader, self.reader = self.reader, None
        try:
            if reader is not None:
                await reader.close()
        finally:
            await self.conn.close()

    async def __aenter__(self) -> Database:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def write(self, work: Callable[[Tx], T]) -> T:
        """Run ``work(connection)`` as one transaction on the writer's thread; its result.

        ``BEGIN IMMEDIATE``, ``work``, ``COMMIT``, all in one round trip. If ``work`` raises,
        the transaction is rolled back and the exception propagates, SQLite's own errors as
        ``StorageError``. ``work`` runs on another thread: it must only use the connection
        it is given and values it closes over, never the event loop. A caller cancelled
        while its work is queued or running gets ``CancelledError`` at once, and the
        transaction still ends on the writer's thread, committed or rolled back as a whole.
        """

        def transaction() -> T:
            raw = self.raw
            raw.execute("BEGIN IMMEDIATE")
            try:
                result = work(raw)
                raw.execute("COMMIT")
            except BaseException:
                with suppress(sqlite3.Error):
                    raw.execute("ROLLBACK")
                raise
            return result

        return await self._on_writer(transaction)

    async def execute(self, sql: str, params: Iterable[Any] = ()) -> int:
        """One statement as its own transaction (``write``); the number of rows it changed."""
        values = tuple(params)

        def run(conn: Tx) -> int:
            cursor = conn.execute(sql, values)
            try:
                return cursor.rowcount
            finally:
                cursor.close()

        return await self.write(run)

    async def execute_script(self, script: str) -> None:
        """Run a SQL script on the writer; a failure rolls back whatever it left open."""

        def run() -> None:
            try:
                self.raw.executescript(script)
            except BaseException:
                if self.raw.in_transaction:
                    with suppress(sqlite3.Error):
                        self.raw.execute("ROLLBACK")
                raise

        await self._on_writer(run)

    async def schema_version(self) -> int:
        row = await self.fetchone("PRAGMA user_version")
        return int(row[0]) if row else 0

    async def apply_migration(self, version: int, sql: str) -> None:
        """``sql`` and the version bump as one transaction."""
        bump = f"PRAGMA user_version = {int(version)};"
        await self.execute_script(f"BEGIN IMMEDIATE;\n{sql}\n{bump}\nCOMMIT;")

    async def _on_writer(self, function: Callable[[], T]) -> T:
        # aiosqlite has no public way to run a function on its thread; ``_execute`` (queue
        # the call, await its result) is that, and the pinned aiosqlite version keeps it.
        run = cast(Callable[[Callable[[], T]], Awaitable[T]], self.conn._execute)
        try:
            return await run(function)
        except sqlite3.Error as exc:
            raise storage_error(exc, self.path) from exc

    async def fetchall(self, sql: str, params: Iterable[Any] = ()) -> list[sqlite3.Row]:
        """Rows of committed data, from the reader (the writer until the reader is open)."""
        conn = self.reader or self.conn
        try:
            return list(await conn.execute_fetchall(sql, tuple(params)))
        except sqlite3.Error as exc:
            raise storage_error(exc, self.path) from exc

    async def fetchone(self, sql: str, params: Iterable[Any] = ()) -> sqlite3.Row | None:
        rows = await self.fetchall(sql, params)
        return rows[0] if rows else None


async def _connect(
    path: Path, pragmas: Iterable[str]
) -> tuple[aiosqlite.Connection, sqlite3.Connection]:
    """An aiosqlite connection in autocommit mode with ``pragmas`` applied, and its sqlite3
    connection (created by our connector, so ``write`` can use it on the worker thread)."""
    made: list[sqlite3.Connection] = []

    def connector() -> sqlite3.Connection:
        raw = sqlite3.connect(path, isolation_level=None)
        raw.row_factory = aiosqlite.Row
        for pragma in pragmas:
            raw.execute(pragma).close()
        made.append(raw)
        return raw

    conn = await aiosqlite.Connection(connector, 64)
    return conn, made[0]
