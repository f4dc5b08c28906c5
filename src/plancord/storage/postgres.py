"""PostgreSQL through psycopg 3: a small pool of connections, each on its own thread.

The discipline is SQLite's (``storage.db``): a write is one function run between ``BEGIN``
and ``COMMIT`` on a connection's thread, one round trip from the event loop, never a
transaction left open between two awaits. Unlike SQLite's single writer, the pool's
connections run transactions side by side, and the version column still decides races:
two processes updating one agent's state both issue ``UPDATE … WHERE version = ?``; the
second waits for the first's row lock, sees the new version and changes nothing, which the
store reports as a ``VersionConflict``.

A connection that breaks (the server restarted, or dropped its sessions) is replaced, and
the work that hit the break is run once more on the fresh connection when nothing of it can
have been committed: a read (every statement outside a write runs in a read-only
transaction, so a read never commits anything), or a write that broke before its ``COMMIT``
was sent. A write that broke during its ``COMMIT`` may have committed, so it is never
repeated: it fails as a ``StorageError``, as does a second break.
"""

from __future__ import annotations

import asyncio
import re
import secrets
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from pathlib import Path
from typing import Any, TypeVar

import psycopg
from psycopg import errors as pg_errors
from psycopg.rows import RowMaker

from plancord.core.errors import StorageError
from plancord.storage.backend import Backend, Cursor, Tx, redact
from plancord.storage.migrations import apply_migrations

T = TypeVar("T")

POOL_SIZE = 8
LOCK_TIMEOUT_MS = 5000
CONNECT_TIMEOUT_S = 10
# Every migration takes this lock, so two processes starting at once migrate one by one.
MIGRATION_LOCK = 0x706C616E636F7264  # "plancord"

_TOKENS = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|--[^\n]*|\?|%")


@lru_cache(maxsize=512)
def to_pyformat(sql: str) -> str:
    """``sql`` with its ``?`` placeholders as psycopg's ``%s`` and literal ``%`` doubled;
    text inside quotes and comments keeps its ``?``."""

    def swap(match: re.Match[str]) -> str:
        piece = match.group(0)
        if piece == "?":
            return "%s"
        return piece.replace("%", "%%")

    return _TOKENS.sub(swap, sql)


class Row(Sequence[Any]):
    """A result row read by position or by column name, as ``sqlite3.Row`` is."""

    __slots__ = ("_names", "_values")

    def __init__(self, values: Sequence[Any], names: dict[str, int]) -> None:
        self._values = tuple(values)
        self._names = names

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, str):
            return self._values[self._names[key]]
        return self._values[key]

    def __len__(self) -> int:
        return len(self._values)

    def __iter__(self) -> Iterator[Any]:
        return iter(self._values)

    def keys(self) -> list[str]:
        return list(self._names)

    def __repr__(self) -> str:
        return f"Row({dict(zip(self._names, self._values, strict=True))!r})"


def _row_factory(cursor: psycopg.Cursor[Any]) -> RowMaker[Row]:
    names = {column.name: i for i, column in enumerate(cursor.description or ())}
    return lambda values: Row(values, names)


class _PgTx:
    """A connection as the store's write functions see it (``backend.Tx``)."""

    def __init__(self, conn: psycopg.Connection[Row]) -> None:
        self.conn = conn

    def execute(self, sql: str, parameters: Any = (), /) -> Cursor:
        return self.conn.execute(to_pyformat(sql), tuple(parameters))

    def executemany(self, sql: str, parameters: Iterable[Any], /) -> Cursor:
        cursor = self.conn.cursor()
        cursor.executemany(to_pyformat(sql), [tuple(p) for p in parameters])
        return cursor


_NO_DATABASE = re.compile(r'database "([^"]+)" does not exist')


def create_database_fix(exc: psycopg.Error, url: str) -> str | None:
    """When ``exc`` says the database ``url`` names does not exist, how to create it (the
    URL's user owning it); None for any other error."""
    missing = _NO_DATABASE.search(str(exc))
    if missing is None:
        return None
    try:
        user = psycopg.conninfo.conninfo_to_dict(url).get("user")
    except psycopg.ProgrammingError:
        user = None
    owner = f" -O {user}" if user else ""
    return (
        f"the database {missing.group(1)} does not exist on that server: create it (on the "
        f"database host: sudo -u postgres createdb{owner} {missing.group(1)}), then run "
        "plancord migrate"
    )


def storage_error(exc: psycopg.Error, where: str) -> StorageError:
    """A psycopg error as a message that says what happened and that nothing changed."""
    if isinstance(exc, pg_errors.LockNotAvailable | pg_errors.QueryCanceled):
        return StorageError(
            f"The database {where} is locked by another session; nothing was changed. "
            "Try again in a moment.",
            "locked",
        )
    if isinstance(exc, pg_errors.DiskFull | pg_errors.OutOfMemory):
        return StorageError(
            f"The database server {where} is out of space; nothing was changed.", "full"
        )
    if isinstance(exc, pg_errors.ReadOnlySqlTransaction):
        return StorageError(f"The database {where} is read-only; nothing was changed.", "readonly")
    create = create_database_fix(exc, where)
    if create is not None:
        return StorageError(f"At {where}, {create}; nothing was changed.", "unavailable")
    if isinstance(exc, psycopg.OperationalError):
        return StorageError(
            f"The database server {where} cannot be reached ({_first_line(exc)}); nothing was "
            "changed.",
            "unavailable",
        )
    return StorageError(f"Database error on {where}: {_first_line(exc)}; nothing was changed.")


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


class _Progress:
    """How far one run of a write got: once ``committing`` is set, its ``COMMIT`` may have
    reached the server, and the run must never be repeated."""

    __slots__ = ("committing",)

    def __init__(self) -> None:
        self.committing = False


class _Connection:
    """One psycopg connection and the one thread that uses it."""

    def __init__(self, url: str, index: int, lock_timeout_ms: int) -> None:
        self.url = url
        self.lock_timeout_ms = lock_timeout_ms
        self.executor = ThreadPoolExecutor(1, thread_name_prefix=f"plancord-pg-{index}")
        self.conn: psycopg.Connection[Row] | None = None

    def connection(self) -> psycopg.Connection[Row]:
        """The live connection, opened again if it was never opened or has broken."""
        conn = self.conn
        if conn is None or conn.closed or conn.broken:
            if conn is not None:
                conn.close()
            self.conn = None
            conn = psycopg.connect(
                self.url,
                autocommit=True,
                row_factory=_row_factory,
                connect_timeout=CONNECT_TIMEOUT_S,
                application_name="plancord",
            )
            conn.execute(f"SET lock_timeout = {int(self.lock_timeout_ms)}")
            conn.execute("SET TIME ZONE 'UTC'")
            # A statement outside a write's transaction can change nothing; a write's
            # transaction says READ WRITE.
            conn.execute("SET default_transaction_read_only = on")
            conn.read_only = False
            self.conn = conn
        return conn

    def close(self) -> None:
        def shut() -> None:
            if self.conn is not None:
                self.conn.close()
                self.conn = None

        self.executor.submit(shut).result()
        self.executor.shutdown(wait=True)


def _once(
    connection: _Connection, function: Callable[[psycopg.Connection[Row], _Progress], T]
) -> T:
    """``function`` on ``connection``'s thread; when the connection turns out broken before
    any ``COMMIT`` of the function's was sent, once more on a fresh connection in its place.
    A second break, or a break once a ``COMMIT`` was sent, raises."""
    progress = _Progress()
    conn = connection.connection()
    try:
        return function(conn, progress)
    except psycopg.OperationalError:
        if not conn.broken or progress.committing:
            raise
    return function(connection.connection(), _Progress())


class PgDatabase:
    """An open PostgreSQL plancord database (``backend.Backend``)."""

    dialect = "postgresql"
    integrity_errors: tuple[type[Exception], ...] = (psycopg.IntegrityError,)

    def __init__(
        self, url: str, pool_size: int = POOL_SIZE, lock_timeout_ms: int = LOCK_TIMEOUT_MS
    ) -> None:
        self.url = url
        self.where = redact(url)
        self.origin = secrets.token_hex(8)
        self._connections = [_Connection(url, i, lock_timeout_ms) for i in range(max(1, pool_size))]
        self._idle: asyncio.Queue[_Connection] = asyncio.Queue()
        for connection in self._connections:
            self._idle.put_nowait(connection)
        self._closed = False

    @classmethod
    async def open(
        cls,
        url: str,
        *,
        migrate: bool = True,
        migrations_dir: Path | None = None,
        pool_size: int = POOL_SIZE,
        lock_timeout_ms: int = LOCK_TIMEOUT_MS,
    ) -> PgDatabase:
        db = cls(url, pool_size, lock_timeout_ms)
        try:
            await db.fetchone("SELECT 1")
            if migrate:
                await apply_migrations(db, migrations_dir)
        except BaseException:
            await db.close()
            raise
        return db

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        loop = asyncio.get_running_loop()
        for connection in self._connections:
            await loop.run_in_executor(None, connection.close)

    async def __aenter__(self) -> Backend:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def _run(self, function: Callable[[psycopg.Connection[Row], _Progress], T]) -> T:
        """``function(connection, progress)`` on an idle connection's thread (see ``_once``
        for when it runs a second time).

        A caller cancelled while it runs gets ``CancelledError`` at once; the function still
        finishes on its thread (its transaction committed or rolled back as a whole) before
        the connection serves anyone else.
        """
        if self._closed:
            raise StorageError(f"The database {self.where} is closed.")
        connection = await self._idle.get()
        loop = asyncio.get_running_loop()
        future = loop.run_in_executor(connection.executor, lambda: _once(connection, function))
        future.add_done_callback(lambda _: self._idle.put_nowait(connection))
        try:
            return await asyncio.shield(future)
        except psycopg.Error as exc:
            raise storage_error(exc, self.where) from exc

    async def write(self, work: Callable[[Tx], T]) -> T:
        """Run ``work(connection)`` as one transaction; its result (see ``storage.db``)."""

        def transaction(conn: psycopg.Connection[Row], progress: _Progress) -> T:
            with conn.transaction():
                result = work(_PgTx(conn))
                progress.committing = True
            return result

        return await self._run(transaction)

    async def execute(self, sql: str, params: Iterable[Any] = ()) -> int:
        values = tuple(params)
        return await self.write(lambda tx: tx.execute(sql, values).rowcount)

    async def fetchall(self, sql: str, params: Iterable[Any] = ()) -> list[Any]:
        values = tuple(params)
        query = to_pyformat(sql)
        return await self._run(lambda conn, _: conn.execute(query, values).fetchall())

    async def fetchone(self, sql: str, params: Iterable[Any] = ()) -> Any:
        rows = await self.fetchall(sql, params)
        return rows[0] if rows else None

    async def schema_version(self) -> int:
        row = await self.fetchone("SELECT to_regclass('plancord_schema') IS NOT NULL")
        if not row or not row[0]:
            return 0
        version = await self.fetchone("SELECT max(version) FROM plancord_schema")
        return int(version[0]) if version and version[0] is not None else 0

    async def apply_migration(self, version: int, sql: str) -> None:
        """Apply migration ``version`` in one transaction with its version bump; a process that
        applied it first (holding the migration lock) makes this a no-op."""

        def migrate(conn: psycopg.Connection[Row], progress: _Progress) -> None:
            progress.committing = True  # DDL is never repeated
            with conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
                conn.execute(
                    "CREATE TABLE IF NOT EXISTS plancord_schema ("
                    "version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())"
                )
                done = conn.execute(
                    "SELECT 1 FROM plancord_schema WHERE version = %s", (version,)
                ).fetchone()
                if done is not None:
                    return
                conn.execute(sql.encode("utf-8"))
                conn.execute("INSERT INTO plancord_schema (version) VALUES (%s)", (version,))

        await self._run(migrate)
