from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from plancord.core.errors import StorageError
from plancord.storage.db import Database
from plancord.storage.engines import migrate_database
from plancord.storage.migrations import (
    MigrationError,
    discover,
    schema_version,
)
from tests.storage.cli import run_cli

TABLES = {"agents", "planning_state", "plan_revisions", "audit_log"}


def tables(path: Path) -> set[str]:
    with sqlite3.connect(path) as conn:
        rows = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
    return {r[0] for r in rows}


async def test_migrating_from_empty_creates_every_table(tmp_path: Path) -> None:
    path = tmp_path / "p.db"
    before, after = await migrate_database(path)
    assert before == 0
    assert after == len(discover()) >= 1
    assert tables(path) >= TABLES


async def test_rerunning_is_a_no_op(tmp_path: Path) -> None:
    path = tmp_path / "p.db"
    _, version = await migrate_database(path)
    assert await migrate_database(path) == (version, version)


async def test_connection_settings(tmp_path: Path) -> None:
    async with await Database.open(tmp_path / "p.db") as db:
        assert (await db.fetchone("PRAGMA journal_mode"))[0] == "wal"  # type: ignore[index]
        assert (await db.fetchone("PRAGMA foreign_keys"))[0] == 1  # type: ignore[index]
        assert (await db.fetchone("PRAGMA busy_timeout"))[0] == 5000  # type: ignore[index]


async def test_a_newer_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "p.db"
    _, version = await migrate_database(path)
    with sqlite3.connect(path) as conn:
        conn.execute(f"PRAGMA user_version = {version + 3}")
    with pytest.raises(MigrationError, match=f"schema version {version + 3}, newer than"):
        await migrate_database(path)


async def test_each_file_is_applied_in_its_own_transaction(tmp_path: Path) -> None:
    folder = tmp_path / "migrations"
    folder.mkdir()
    (folder / "0001_first.sql").write_text("CREATE TABLE a (x INTEGER);")
    (folder / "0002_broken.sql").write_text("CREATE TABLE b (x INTEGER);\nTHIS IS NOT SQL;")
    path = tmp_path / "p.db"
    with pytest.raises(MigrationError, match=r"0002_broken\.sql failed") as info:
        await migrate_database(path, folder)
    assert "stays at version 1" in str(info.value)
    assert tables(path) >= {"a"}
    assert "b" not in tables(path)
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 1
    (folder / "0002_broken.sql").write_text("CREATE TABLE b (x INTEGER);")
    assert await migrate_database(path, folder) == (1, 2)


def test_gaps_in_numbering_are_refused(tmp_path: Path) -> None:
    (tmp_path / "0001_a.sql").write_text("SELECT 1;")
    (tmp_path / "0003_c.sql").write_text("SELECT 1;")
    with pytest.raises(MigrationError, match="out of sequence"):
        discover(tmp_path)


async def test_a_locked_database_is_a_storage_error(tmp_path: Path) -> None:
    path = tmp_path / "p.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE x (y)")
    blocker = sqlite3.connect(path, isolation_level=None)
    blocker.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(StorageError, match="locked by another process") as info:
            await Database.open(path, busy_timeout_ms=20)
        assert info.value.kind == "locked"
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    async with await Database.open(path) as db:
        assert await schema_version(db) >= 1


def test_the_audit_log_is_append_only(tmp_path: Path) -> None:
    import asyncio

    path = tmp_path / "p.db"
    asyncio.run(migrate_database(path))
    with sqlite3.connect(path) as conn:
        conn.execute("INSERT INTO audit_log (at, agent, actor, action) VALUES ('t', 'a', 'x', 'y')")
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            conn.execute("UPDATE audit_log SET action = 'z'")
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            conn.execute("DELETE FROM audit_log")


def test_plancord_migrate_command(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text("data_dir: state\n")
    first = run_cli("migrate", "--config", str(config), cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert "migrated from version 0 to" in first.stdout
    assert (tmp_path / "state" / "plancord.db").exists()
    second = run_cli("migrate", "--config", str(config), cwd=tmp_path)
    assert second.returncode == 0
    assert "is up to date" in second.stdout


def test_plancord_migrate_refuses_a_newer_database(tmp_path: Path) -> None:
    db = tmp_path / "data" / "plancord.db"
    db.parent.mkdir()
    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA user_version = 999")
    result = run_cli("migrate", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.startswith("plancord: the database")
    assert "Traceback" not in result.stderr
