"""Moving an existing SQLite database into PostgreSQL: ``plancord migrate --from sqlite:PATH``.

The file is first brought to the newest schema (as ``plancord run`` would), then every row of
every table is copied into an empty, migrated PostgreSQL database in one transaction: the
copy is whole or it is not there. Tables are copied parents first, in the order the target's
own foreign keys give, so a schema that gains a table needs no list kept here. Generated ids
(audit, usage, votes) are kept, so the history reads the same; their sequences continue
after the copied ids. A target that already holds agents or audit entries is refused rather
than merged into.
"""

from __future__ import annotations

import asyncio
import graphlib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from plancord.core.errors import PlancordError
from plancord.storage.backend import Tx
from plancord.storage.engines import open_database

_FOREIGN_KEYS = (
    "SELECT child.relname, parent.relname FROM pg_constraint AS k "
    "JOIN pg_class AS child ON child.oid = k.conrelid "
    "JOIN pg_class AS parent ON parent.oid = k.confrelid "
    "WHERE k.contype = 'f' AND child.relnamespace = current_schema()::regnamespace"
)
_IDENTITY_COLUMNS = (
    "SELECT table_name, column_name FROM information_schema.columns "
    "WHERE is_identity = 'YES' AND table_schema = current_schema()"
)


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
        data: dict[str, tuple[list[str], list[tuple[Any, ...]]]] = {}
        for table in names:
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
        known = {
            r[0]
            for r in await pg.fetchall(
                "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"
            )
        }
        missing = [t for t in names if t not in known]
        if missing:
            raise CopyRefused(
                f"{pg.where} has no table {missing[0]}: the SQLite file is from a newer plancord"
            )
        tables = parents_first(names, await pg.fetchall(_FOREIGN_KEYS))
        identities = {(r[0], r[1]) for r in await pg.fetchall(_IDENTITY_COLUMNS)}

        def copy(tx: Tx) -> list[TableCopy]:
            done: list[TableCopy] = []
            for table in tables:
                columns, rows = data[table]
                if rows:
                    listed = ", ".join(f'"{c}"' for c in columns)
                    marks = ", ".join("?" for _ in columns)
                    generated = any((table, c) in identities for c in columns)
                    overriding = " OVERRIDING SYSTEM VALUE" if generated else ""
                    tx.executemany(
                        f'INSERT INTO "{table}" ({listed}){overriding} VALUES ({marks})',  # noqa: S608
                        rows,
                    )
                done.append(TableCopy(table, len(rows)))
            for table, column in sorted(identities):
                tx.execute(
                    f"SELECT setval(pg_get_serial_sequence('{table}', '{column}'), "  # noqa: S608
                    f'(SELECT coalesce(max("{column}"), 0) + 1 FROM "{table}"), false)'
                )
            return done

        return await pg.write(copy)
    finally:
        await pg.close()


def parents_first(tables: Iterable[str], references: Iterable[tuple[str, str]]) -> list[str]:
    """``tables`` ordered so each comes after every table it references (``(child, parent)``
    pairs), so foreign keys hold at every insert; ties in name order. A cycle of references
    is refused: no order would satisfy it."""
    wanted = sorted(tables)
    graph: dict[str, set[str]] = {table: set() for table in wanted}
    for child, parent in references:
        if child in graph and parent in graph and child != parent:
            graph[child].add(parent)
    sorter = graphlib.TopologicalSorter(graph)
    try:
        sorter.prepare()
    except graphlib.CycleError as exc:
        raise CopyRefused(f"the tables' foreign keys form a cycle: {exc.args[1]}") from exc
    ordered: list[str] = []
    while sorter.is_active():
        ready = sorted(sorter.get_ready())
        ordered.extend(ready)
        sorter.done(*ready)
    return ordered
