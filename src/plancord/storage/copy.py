"""Moving an existing SQLite database into PostgreSQL: ``plancord migrate --from sqlite:PATH``.

The file is first brought to the newest schema (as ``plancord run`` would), then every row of
every table is copied into an empty, migrated PostgreSQL database in one transaction: the
copy is whole or it is not there. Audit and usage ids are kept, so the history reads the
same; their sequences continue after the copied ids. A target that already holds agents or
audit entries is refused rather than merged into.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from plancord.core.errors import PlancordError
from plancord.storage.backend import Tx
from plancord.storage.engines import open_database

# Parents before children, so foreign keys hold at every insert.
FIRST = ("agents", "planning_state")
IDENTITY_TABLES = ("audit_log", "model_usage")


class CopyRefused(PlancordError):
    pass


@dataclass(frozen=True, slots=True)
class TableCopy:
    table: str
    rows: int


async def copy_sqlite_to_postgres(source: Path, target: str) -> list[TableCopy]:
    """Copy ``source`` into the PostgreSQL database ``target``; what was copied, per table."""
    if not await asyncio.to_thread(source.is_file):
        raise CopyRefused(f"no SQLite database at {source}")
    lite = await open_database(source)
    try:
        names = [
            r[0]
            for r in await lite.fetchall(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
                "ORDER BY name"
            )
        ]
        tables = [t for t in FIRST if t in names] + [t for t in names if t not in FIRST]
        data: dict[str, tuple[list[str], list[tuple[Any, ...]]]] = {}
        for table in tables:
            rows = await lite.fetchall(f'SELECT * FROM "{table}"')  # noqa: S608 - names from the schema
            columns = list(rows[0].keys()) if rows else []
            data[table] = (columns, [tuple(r) for r in rows])
    finally:
        await lite.close()

    pg = await open_database(target)
    try:
        held = await pg.fetchone(
            "SELECT (SELECT count(*) FROM agents) + (SELECT count(*) FROM audit_log)"
        )
        if held and held[0]:
            raise CopyRefused(
                f"{pg.where} already holds agents or audit entries; copy into an empty database"
            )
        known = {r[0] for r in await pg.fetchall("SELECT tablename FROM pg_tables")}
        missing = [t for t in tables if t not in known]
        if missing:
            raise CopyRefused(
                f"{pg.where} has no table {missing[0]}: the SQLite file is from a newer plancord"
            )

        def copy(tx: Tx) -> list[TableCopy]:
            done: list[TableCopy] = []
            for table in tables:
                columns, rows = data[table]
                if rows:
                    listed = ", ".join(f'"{c}"' for c in columns)
                    marks = ", ".join("?" for _ in columns)
                    overriding = " OVERRIDING SYSTEM VALUE" if table in IDENTITY_TABLES else ""
                    tx.executemany(
                        f'INSERT INTO "{table}" ({listed}){overriding} VALUES ({marks})',  # noqa: S608
                        rows,
                    )
                done.append(TableCopy(table, len(rows)))
            for table in IDENTITY_TABLES:
                tx.execute(
                    f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), "  # noqa: S608
                    f"(SELECT coalesce(max(id), 0) + 1 FROM {table}), false)"
                )
            return done

        return await pg.write(copy)
    finally:
        await pg.close()
