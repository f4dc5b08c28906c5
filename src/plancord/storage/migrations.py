"""Plain-SQL migrations applied in order; the schema version lives in ``PRAGMA user_version``.

Files are ``plancord/migrations/NNNN_name.sql``, shipped inside the package so a plain
``pip install .`` can create and upgrade a database; they are numbered from 1 without gaps.
Each is applied in its own transaction together with the version bump, so a failing file
leaves the previous version intact. A database newer than this code is refused rather than
guessed at.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from plancord.core.errors import PlancordError, StorageError

_FILE = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")


class MigrationError(PlancordError):
    pass


class Schema(Protocol):
    """What migrating needs of a database (``storage.db.Database`` is the one): this module
    does not import the database, which opens through it."""

    path: Path

    async def fetchone(self, sql: str, params: Sequence[Any] = ()) -> Any: ...

    async def execute_script(self, script: str) -> None: ...


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


def discover(directory: Path | None = None) -> list[Migration]:
    directory = directory or default_migrations_dir()
    if not directory.is_dir():
        raise MigrationError(
            f"migrations folder {directory} not found; set PLANCORD_MIGRATIONS_DIR to the "
            "project's migrations/ folder"
        )
    found: list[Migration] = []
    for path in sorted(directory.iterdir()):
        match = _FILE.match(path.name)
        if match:
            found.append(Migration(int(match.group(1)), match.group(2), path.read_text("utf-8")))
    for expected, migration in enumerate(found, start=1):
        if migration.version != expected:
            raise MigrationError(
                f"migration {migration.version:04d}_{migration.name}.sql is out of sequence: "
                f"expected {expected:04d}"
            )
    return found


async def schema_version(db: Schema) -> int:
    row = await db.fetchone("PRAGMA user_version")
    return int(row[0]) if row else 0


async def apply_migrations(db: Schema, directory: Path | None = None) -> tuple[int, int]:
    """Bring ``db`` to the newest version; returns ``(before, after)``."""
    migrations = discover(directory)
    latest = migrations[-1].version if migrations else 0
    before = await schema_version(db)
    if before > latest:
        raise MigrationError(
            f"the database {db.path} is at schema version {before}, newer than this plancord "
            f"knows (up to {latest}); upgrade plancord or point it at another database"
        )
    for migration in migrations[before:]:
        bump = f"PRAGMA user_version = {migration.version};"
        script = f"BEGIN IMMEDIATE;\n{migration.sql}\n{bump}\nCOMMIT;"
        try:
            await db.execute_script(script)
        except StorageError as error:
            if error.kind == "other":
                raise MigrationError(
                    f"migration {migration.version:04d}_{migration.name}.sql failed: "
                    f"{error.__cause__}; the database stays at version {migration.version - 1}"
                ) from error.__cause__
            raise
    return before, await schema_version(db)
