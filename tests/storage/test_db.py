"""Both engines' databases: one-trip write transactions, rolled back as a whole on any
failure; SQLite's writes in order and its reads on a query-only reader."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest

from plancord.core.errors import StorageError
from plancord.storage.backend import Backend, Tx
from plancord.storage.db import Database
from plancord.storage.engines import open_database


class Refused(Exception):
    pass


async def open_db(target: str | Path) -> Backend:
    db = await open_database(target, migrate=False)
    await db.write(lambda conn: conn.execute("CREATE TABLE t (k TEXT PRIMARY KEY, v INTEGER)"))
    return db


async def rows(db: Backend) -> list[tuple[str, int]]:
    return [(r[0], r[1]) for r in await db.fetchall("SELECT k, v FROM t ORDER BY k")]


async def test_a_write_commits_everything_it_did_and_returns_its_result(
    db_target: str | Path,
) -> None:
    async with await open_db(db_target) as db:

        def work(conn: Tx) -> int:
            conn.execute("INSERT INTO t VALUES ('a', 1)")
            conn.execute("INSERT INTO t VALUES ('b', 2)")
            return int(conn.execute("SELECT sum(v) FROM t").fetchone()[0])

        assert await db.write(work) == 3
        assert await rows(db) == [("a", 1), ("b", 2)]
    async with await open_database(db_target, migrate=False) as other:
        assert await rows(other) == [("a", 1), ("b", 2)]


async def test_a_failing_write_rolls_back_and_raises_its_own_error(db_target: str | Path) -> None:
    async with await open_db(db_target) as db:

        def work(conn: Tx) -> None:
            conn.execute("INSERT INTO t VALUES ('a', 1)")
            raise Refused

        with pytest.raises(Refused):
            await db.write(work)
        assert await rows(db) == []
        await db.write(lambda conn: conn.execute("INSERT INTO t VALUES ('a', 1)"))
        assert await rows(db) == [("a", 1)]


async def test_a_database_failure_is_a_storage_error_and_changes_nothing(
    db_target: str | Path,
) -> None:
    async with await open_db(db_target) as db:
        await db.write(lambda conn: conn.execute("INSERT INTO t VALUES ('a', 1)"))

        def work(conn: Tx) -> None:
            conn.execute("INSERT INTO t VALUES ('b', 2)")
            conn.execute("INSERT INTO t VALUES ('a', 3)")

        with pytest.raises(StorageError, match="nothing was changed"):
            await db.write(work)
        assert await rows(db) == [("a", 1)]


async def test_writes_apply_in_the_order_they_were_asked_for(db_path: Path) -> None:
    async with await open_db(db_path) as db:
        await db.write(lambda conn: conn.execute("INSERT INTO t VALUES ('n', 0)"))

        def bump(expected: int) -> None:
            async def go() -> None:
                def work(conn: Tx) -> None:
                    seen = conn.execute("SELECT v FROM t WHERE k = 'n'").fetchone()[0]
                    assert seen == expected
                    conn.execute("UPDATE t SET v = v + 1 WHERE k = 'n'")

                await db.write(work)

            tasks.append(asyncio.ensure_future(go()))

        tasks: list[asyncio.Future[None]] = []
        for n in range(50):
            bump(n)
        await asyncio.gather(*tasks)
        assert await rows(db) == [("n", 50)]


async def test_a_read_does_not_wait_for_another_process_holding_the_write_lock(
    db_path: Path,
) -> None:
    path = db_path
    async with await open_db(path) as db:
        await db.write(lambda conn: conn.execute("INSERT INTO t VALUES ('a', 1)"))
        blocker = sqlite3.connect(path, isolation_level=None)
        try:
            blocker.execute("BEGIN IMMEDIATE")
            blocker.execute("INSERT INTO t VALUES ('b', 2)")
            # Uncommitted: not seen, and the read is answered at once, not after busy_timeout.
            assert await asyncio.wait_for(rows(db), timeout=1) == [("a", 1)]
            blocker.execute("COMMIT")
        finally:
            blocker.close()
        assert await rows(db) == [("a", 1), ("b", 2)]


async def test_the_reader_cannot_write(db_path: Path) -> None:
    async with await open_db(db_path) as db:
        assert isinstance(db, Database)
        assert db.reader is not None
        with pytest.raises(StorageError):
            await db.fetchall("INSERT INTO t VALUES ('x', 1)")
        assert await rows(db) == []


async def test_a_cancelled_write_is_all_or_nothing(db_target: str | Path) -> None:
    async with await open_db(db_target) as db:

        def work(conn: Tx) -> None:
            for n in range(200):
                conn.execute("INSERT INTO t VALUES (?, ?)", (f"k{n:03d}", n))

        for _ in range(20):
            task = asyncio.ensure_future(db.write(work))
            await asyncio.sleep(0)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            await db.write(lambda conn: None)  # the cancelled one has finished by now
            count = len(await rows(db))
            assert count in (0, 200)
            await db.write(lambda conn: conn.execute("DELETE FROM t"))


async def test_one_statement_is_its_own_transaction_and_says_what_it_changed(
    db_target: str | Path,
) -> None:
    async with await open_db(db_target) as db:
        assert await db.execute("INSERT INTO t VALUES (?, ?), (?, ?)", ("a", 1, "b", 2)) == 2
        assert await db.execute("UPDATE t SET v = v + 1 WHERE k = ?", ("zz",)) == 0
        with pytest.raises(StorageError, match="nothing was changed"):
            await db.execute("INSERT INTO t VALUES ('a', 9)")
        assert await rows(db) == [("a", 1), ("b", 2)]
