"""What PostgreSQL does that SQLite's tests cannot show: its schema history, the audit log's
triggers, connections that break, and the translation of the shared SQL."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path

import psycopg
import pytest

from plancord.core.agents import AgentRecord
from plancord.core.errors import StorageError
from plancord.storage.backend import Tx, redact
from plancord.storage.engines import open_database
from plancord.storage.migrations import MigrationError, discover
from plancord.storage.postgres import PgDatabase, to_pyformat
from plancord.storage.store import SqlStore
from plancord.testing.postgres_server import PostgresServer


@pytest.fixture
def empty_url(postgres_server: PostgresServer) -> str:
    """A database with nothing in it, not even the schema."""
    return postgres_server.url(postgres_server.create_database())


def test_placeholders_become_psycopg_s_and_literals_keep_theirs() -> None:
    assert to_pyformat("SELECT ? WHERE a = ?") == "SELECT %s WHERE a = %s"
    assert to_pyformat("SELECT '?', 'it''s ?', ? -- why?\n") == (
        "SELECT '?', 'it''s ?', %s -- why?\n"
    )
    assert to_pyformat("SELECT 'a%' LIKE ?") == "SELECT 'a%%' LIKE %s"
    assert to_pyformat('SELECT "odd?name" FROM t') == 'SELECT "odd?name" FROM t'


def test_a_password_never_reaches_a_message() -> None:
    assert redact("postgresql://bot:s3cret@db:5432/plancord") == (
        "postgresql://bot:***@db:5432/plancord"
    )
    assert redact("postgresql://db/plancord") == "postgresql://db/plancord"
    assert redact("postgresql://bot@db/plancord?sslmode=require&password=s3cret") == (
        "postgresql://bot@db/plancord?sslmode=require&password=***"
    )


async def test_migrating_creates_the_same_tables_as_sqlite(empty_url: str, tmp_path: Path) -> None:
    async with await open_database(empty_url) as pg, await open_database(tmp_path / "p.db") as lite:
        assert await pg.schema_version() == await lite.schema_version() == len(discover())
        pg_tables = {
            r[0]
            for r in await pg.fetchall(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'"
            )
        }
        lite_tables = {
            r[0]
            for r in await lite.fetchall(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
            )
        }
    assert pg_tables - {"plancord_schema"} == lite_tables


async def test_the_audit_log_is_append_only_in_postgres(postgres_url: str) -> None:
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute("INSERT INTO audit_log (at, agent, actor, action) VALUES ('t', 'a', 'x', 'y')")
        for statement in ("UPDATE audit_log SET action = 'z'", "DELETE FROM audit_log"):
            with pytest.raises(psycopg.errors.IntegrityConstraintViolation, match="append-only"):
                conn.execute(statement)
        with pytest.raises(psycopg.errors.IntegrityConstraintViolation, match="append-only"):
            conn.execute("TRUNCATE audit_log")
        row = conn.execute("SELECT action FROM audit_log").fetchone()
        assert row == ("y",)


async def test_a_newer_postgres_database_is_refused(postgres_url: str) -> None:
    latest = len(discover())
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute("INSERT INTO plancord_schema (version) VALUES (%s)", (latest + 3,))
    with pytest.raises(MigrationError, match=f"schema version {latest + 3}, newer than"):
        await open_database(postgres_url)


async def test_each_postgres_migration_is_its_own_transaction(
    empty_url: str, tmp_path: Path
) -> None:
    folder = tmp_path / "migrations"
    (folder / "postgresql").mkdir(parents=True)
    (folder / "0001_first.sql").write_text("CREATE TABLE a (x INTEGER);")
    (folder / "0002_broken.sql").write_text("CREATE TABLE b (x INTEGER);")
    (folder / "postgresql" / "0002_broken.sql").write_text(
        "CREATE TABLE b (x INTEGER);\nTHIS IS NOT SQL;"
    )
    with pytest.raises(MigrationError, match=r"0002_broken\.sql failed") as info:
        await open_database(empty_url, migrations_dir=folder)
    assert "stays at version 1" in str(info.value)
    with psycopg.connect(empty_url) as conn:
        names = {r[0] for r in conn.execute("SELECT tablename FROM pg_tables").fetchall()}
        assert "a" in names and "b" not in names
    (folder / "postgresql" / "0002_broken.sql").unlink()
    async with await open_database(empty_url, migrations_dir=folder) as db:
        assert await db.schema_version() == 2


async def test_two_processes_starting_at_once_migrate_once(empty_url: str) -> None:
    first, second = await asyncio.gather(open_database(empty_url), open_database(empty_url))
    try:
        assert await first.schema_version() == await second.schema_version() == len(discover())
        rows = await first.fetchall("SELECT version FROM plancord_schema ORDER BY version")
        assert [r[0] for r in rows] == list(range(1, len(discover()) + 1))
    finally:
        await first.close()
        await second.close()


def terminate_plancord_sessions(url: str) -> int:
    """What PostgreSQL does when an administrator (or a failover) drops every session."""
    with psycopg.connect(url, autocommit=True) as admin:
        rows = admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE application_name = 'plancord' AND pid <> pg_backend_pid()"
        ).fetchall()
    return len(rows)


INSERT_AUDIT = "INSERT INTO audit_log (at, agent, actor, action) VALUES (?, ?, ?, ?)"


async def test_after_every_session_is_dropped_each_next_call_succeeds(postgres_url: str) -> None:
    async with await PgDatabase.open(postgres_url, pool_size=8) as db:
        await asyncio.gather(*(db.fetchone("SELECT pg_sleep(0.05)") for _ in range(8)))
        assert terminate_plancord_sessions(postgres_url) == 8
        for click in range(8):
            await db.execute(INSERT_AUDIT, ("t", "a", "x", f"click {click}"))
        assert terminate_plancord_sessions(postgres_url) == 8
        assert (await db.fetchone("SELECT count(*) FROM audit_log"))[0] == 8


async def test_a_write_that_broke_before_commit_runs_once_more(postgres_url: str) -> None:
    async with await PgDatabase.open(postgres_url, pool_size=1) as db:
        runs: list[int] = []

        def work(tx: Tx) -> None:
            runs.append(1)
            tx.execute(INSERT_AUDIT, ("t", "a", "x", f"run {len(runs)}"))
            if len(runs) == 1:
                tx.execute("SELECT pg_terminate_backend(pg_backend_pid())")

        await db.write(work)
        assert len(runs) == 2
        assert [r[0] for r in await db.fetchall("SELECT action FROM audit_log")] == ["run 2"]


async def test_a_second_break_fails_closed(postgres_url: str) -> None:
    async with await PgDatabase.open(postgres_url, pool_size=1) as db:

        def work(tx: Tx) -> None:
            tx.execute(INSERT_AUDIT, ("t", "a", "x", "lost"))
            tx.execute("SELECT pg_terminate_backend(pg_backend_pid())")

        with pytest.raises(StorageError, match="nothing was changed") as info:
            await db.write(work)
        assert info.value.kind == "unavailable"
        password = postgres_url.split("@")[0].rsplit(":", 1)[1]
        assert password not in str(info.value)
        assert await db.fetchall("SELECT action FROM audit_log") == []


async def test_a_break_during_commit_is_never_repeated(postgres_url: str) -> None:
    """The session dies inside COMMIT (a deferred trigger ends it): the write may have been
    committed as far as the client can tell, so it is not run again."""
    with psycopg.connect(postgres_url, autocommit=True) as admin:
        admin.execute("CREATE TABLE bomb (n integer)")
        admin.execute(
            "CREATE FUNCTION explode() RETURNS trigger LANGUAGE plpgsql AS "
            "$$ BEGIN PERFORM pg_terminate_backend(pg_backend_pid()); RETURN NULL; END $$"
        )
        admin.execute(
            "CREATE CONSTRAINT TRIGGER at_commit AFTER INSERT ON bomb "
            "DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION explode()"
        )
    async with await PgDatabase.open(postgres_url, pool_size=1) as db:
        runs: list[int] = []

        def work(tx: Tx) -> None:
            runs.append(1)
            tx.execute("INSERT INTO bomb VALUES (1)")

        with pytest.raises(StorageError):
            await db.write(work)
        assert runs == [1]
        assert (await db.fetchone("SELECT 1"))[0] == 1


async def test_a_read_cannot_write(postgres_url: str) -> None:
    async with await PgDatabase.open(postgres_url) as db:
        with pytest.raises(StorageError, match="read-only"):
            await db.fetchall(
                "INSERT INTO audit_log (at, agent, actor, action) VALUES "
                "('t', 'a', 'x', 'y') RETURNING id"
            )
        assert await db.fetchall("SELECT action FROM audit_log") == []


async def test_discord_ids_past_32_bits_round_trip(store: SqlStore) -> None:
    """Snowflakes are 64-bit: PostgreSQL's schema gives them bigint, SQLite's integer is 64-bit."""
    record = AgentRecord(
        name="ada",
        model="claude-test",
        channel_id=1_234_567_890_123_456_789,
        guild_id=987_654_321_098_765_432,
        created_at=datetime(2026, 1, 5, tzinfo=UTC),
    )
    await store.create_agent(record)
    fresh = SqlStore(store.db)
    assert await fresh.find_agent_by_channel(1_234_567_890_123_456_789) == record
