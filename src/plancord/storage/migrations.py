"""Plain-SQL migrations applied in order, one schema history for SQLite and PostgreSQL.

Files are ``plancord/migrations/NNNN_name.sql``, shipped inside the package so a plain
``pip install .`` can create and upgrade a database; they are numbered from 1 without gaps.
Where an engine needs other SQL for a step (PostgreSQL's ``bigint`` for Discord ids, its
trigger syntax), ``migrations/<dialect>/NNNN_name.sql`` replaces that step for it, so both
engines walk the same numbered versions. Each is applied in its own transaction together
with the version bump (SQLite keeps it in ``PRAGMA user_version``, PostgreSQL in the
``plancord_schema`` table), so a failing file leaves the previous version intact. A database
newer than this code is refused rather than guessed at.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from plancord.core.errors import PlancordError, StorageError

_FILE = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")


class MigrationError(PlancordError):
    pass


class Schema(Protocol):
    """What migrating needs of a database (either engine's): this module does not import the
    databases, which open through it."""

    dialect: str
    where: str

    async def schema_version(self) -> int: ...

    async def apply_migration(self, version: int, sql: str) -> None: ...


@dataclass(frozen=True, slots=True)
class Migration:
    version: int
    name: str
    sql: str


def default_migrations_dir() -> Path:
    """``$PLANCORD_MIGRATIONS_DIR``, else the ``migrations/`` folder inside the package."""
    override = os.environ.get("PLANCORD_MIGRATIONS_DIR")
    if override:
        return Path(override)
    return Path(__file__).resolve().parents[1] / "migrations"


def discover(directory: Path | None = None, dialect: str = "sqlite") -> list[Migration]:
    """The migrations for ``dialect``: the shared files, each replaced by the dialect's own
    file of the same number when there is one."""
    directory = directory or default_migrations_dir()
    if not directory.is_dir():
        raise MigrationError(
            f"migrations folder {directory} not found; set PLANCORD_MIGRATIONS_DIR to the "
            "project's migrations/ folder"
        )
    found = _files(directory)
    special = directory / dialect
    if special.is_dir():
        overrides = {m.version: m for m in _files(special)}
        stray = sorted(set(overrides) - {m.version for m in found})
        if stray:
            raise MigrationError(
                f"{dialect}/{stray[0]:04d}_{overrides[stray[0]].name}.sql replaces no shared "
                "migration of that number"
            )
        found = [overrides.get(m.version, m) for m in found]
    for expected, migration in enumerate(found, start=1):
        if migration.version != expected:
            raise MigrationError(
                f"migration {migration.version:04d}_{migration.name}.sql is out of sequence: "
                f"expected {expected:04d}"
            )
    return found


def _files(directory: Path) -> list[Migration]:
    found: list[Migration] = []
    for path in sorted(directory.iterdir()):
        match = _FILE.match(path.name)
        if match and path.is_file():
            found.append(Migration(int(match.group(1)), match.group(2), path.read_text("utf-8")))
    return found


async def schema_version(db: Schema) -> int:
    return await db.schema_version()


async def apply_migrations(db: Schema, directory: Path | None = None) -> tuple[int, int]:
    """Bring ``db`` to the newest version; returns ``(before, after)``."""
    migrations = discover(directory, db.dialect)
    latest = migrations[-1].version if migrations else 0
    before = await db.schema_version()
    if before > latest:
        raise MigrationError(
            f"the database {db.where} is at schema version {before}, newer than this plancord "
            f"knows (up to {latest}); upgrade plancord or point it at another database"
        )
    for migration in migrations[before:]:
        try:
            await db.apply_migration(migration.version, migration.sql)
        except StorageError as error:
            if error.kind == "other":
                raise MigrationError(
                    f"migration {migration.version:04d}_{migration.name}.sql failed: "
                    f"{error.__cause__}; the database stays at version {migration.version - 1}"
                ) from error.__cause__
            raise
    return before, await db.schema_version()
