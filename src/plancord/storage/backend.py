"""What the store needs of a database, whichever engine holds it (``storage.engines`` opens
the one a config names).

Two engines implement ``Backend``: SQLite in one file (``storage.db.Database``, the embedded
default) and PostgreSQL (``storage.postgres.PgDatabase``, for several processes over one
store). Both keep the same discipline: a write is one function run as one transaction on a
connection's own thread, so the event loop never blocks and no transaction stays open between
two awaits. Queries are written once with ``?`` placeholders in the SQL both engines share;
the PostgreSQL side translates them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Protocol, TypeVar

from plancord.config.database_url import is_postgres, redact

T = TypeVar("T")

__all__ = [
    "Backend",
    "Cursor",
    "Tx",
    "is_postgres",
    "redact",
]


class Cursor(Protocol):
    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...

    def close(self) -> None: ...


class Tx(Protocol):
    """The connection a write's function is given: statements inside one transaction."""

    def execute(self, sql: str, parameters: Any = ..., /) -> Cursor: ...

    def executemany(self, sql: str, parameters: Iterable[Any], /) -> Cursor: ...


class Backend(Protocol):
    """An open plancord database."""

    dialect: str
    where: str
    #: This open database's id, the ``origin`` of the changes it appends (``storage.changes``).
    origin: str
    #: What a unique or foreign-key violation inside a write raises on this engine.
    integrity_errors: tuple[type[Exception], ...]

    async def write(self, work: Callable[[Tx], T]) -> T: ...

    async def execute(self, sql: str, params: Iterable[Any] = ()) -> int: ...

    async def fetchall(self, sql: str, params: Iterable[Any] = ()) -> list[Any]: ...

    async def fetchone(self, sql: str, params: Iterable[Any] = ()) -> Any: ...

    async def schema_version(self) -> int: ...

    async def apply_migration(self, version: int, sql: str) -> None: ...

    async def close(self) -> None: ...

    async def __aenter__(self) -> Backend: ...

    async def __aexit__(self, *exc: object) -> None: ...
