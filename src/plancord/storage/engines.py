"""Opening the database a config names: a ``postgresql://`` URL, or else a SQLite file."""

from __future__ import annotations

from pathlib import Path

from plancord.storage.backend import Backend, is_postgres
from plancord.storage.db import Database
from plancord.storage.migrations import apply_migrations


async def open_database(
    target: str | Path, *, migrate: bool = True, migrations_dir: Path | None = None
) -> Backend:
    """The database ``target`` names: a ``postgresql://`` URL, else a SQLite file path."""
    if is_postgres(target):
        # The PostgreSQL driver is imported by a process that opens PostgreSQL: it costs more
        # to import than the rest of the store, and most processes use SQLite.
        from plancord.storage.postgres import PgDatabase

        return await PgDatabase.open(str(target), migrate=migrate, migrations_dir=migrations_dir)
    return await Database.open(Path(target), migrate=migrate, migrations_dir=migrations_dir)


async def migrate_database(
    target: str | Path, migrations_dir: Path | None = None
) -> tuple[int, int]:
    """Open ``target`` (creating a SQLite file), migrate, close: ``plancord migrate``."""
    db = await open_database(target, migrate=False)
    try:
        return await apply_migrations(db, migrations_dir)
    finally:
        await db.close()
