"""``plancord migrate`` against PostgreSQL, and ``--from sqlite:PATH`` moving a live SQLite
database into it, through the real command line."""

from __future__ import annotations

from pathlib import Path

from plancord.core.planning import Actor, AuditEntry, EntrySource
from plancord.core.ports import StaticSettings
from plancord.core.service import PlanningService
from plancord.core.settings import PlanModeSettings
from plancord.storage.conversations import ConversationStore
from plancord.storage.engines import open_database
from plancord.storage.migrations import discover
from plancord.storage.store import SqlStore
from plancord.testing.postgres_server import PostgresServer
from tests.conftest import ManualClock, agent_record
from tests.storage.cli import run_cli

ANA = Actor.user(42, "ana")
PLAN = {
    "summary": "Add a health endpoint",
    "steps": [{"description": "Read the router", "tools": ["view"]}],
}


def config_for(tmp_path: Path, url: str) -> Path:
    path = tmp_path / "config.yaml"
    path.write_text(f"database: {url}\n")
    return path


async def a_used_sqlite_database(path: Path) -> None:
    """A SQLite file with an agent, a submitted plan, its audit, a conversation and usage."""
    async with await open_database(path) as db:
        store = SqlStore(db)
        await store.create_agent(agent_record())
        service = PlanningService(store, ManualClock(), StaticSettings(PlanModeSettings()))
        await service.enter("ada", source=EntrySource.USER, actor=ANA, task="health")
        await service.submit("ada", PLAN)
        await ConversationStore(db).append(
            "ada", {"role": "user", "content": "hello"}, ManualClock().now()
        )


def test_plancord_migrate_creates_and_then_keeps_a_postgres_schema(
    tmp_path: Path, postgres_server: PostgresServer
) -> None:
    url = postgres_server.url(postgres_server.create_database())
    config = config_for(tmp_path, url)
    first = run_cli("migrate", "--config", str(config), cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    latest = len(discover())
    assert f"migrated from version 0 to {latest}" in first.stdout
    assert postgres_server.password not in first.stdout
    again = run_cli("migrate", "--config", str(config), cwd=tmp_path)
    assert again.returncode == 0
    assert f"is up to date (version {latest})" in again.stdout


async def test_migrate_from_sqlite_copies_every_row_and_keeps_the_history(
    tmp_path: Path, postgres_server: PostgresServer
) -> None:
    source = tmp_path / "old.db"
    await a_used_sqlite_database(source)
    url = postgres_server.url(postgres_server.create_database())
    config = config_for(tmp_path, url)

    done = run_cli("migrate", "--config", str(config), "--from", f"sqlite:{source}", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "1 agents" in done.stdout and "1 plan_revisions" in done.stdout

    async with await open_database(source) as lite, await open_database(url) as pg:
        old, new = SqlStore(lite), SqlStore(pg)
        assert await new.list_agents() == await old.list_agents()
        assert await new.load_state("ada") == await old.load_state("ada")
        state = await new.load_state("ada")
        assert await new.list_revisions(state.plan_id or "") == await old.list_revisions(
            state.plan_id or ""
        )
        assert await new.list_audit("ada") == await old.list_audit("ada")
        assert await ConversationStore(pg).load("ada") == await ConversationStore(lite).load("ada")
        # The audit continues after the copied ids: the newest entry is still the newest.
        await new.append_audit(
            AuditEntry(at=ManualClock().now(), agent="ada", actor="operator", action="copied")
        )
        assert (await new.list_audit("ada", limit=1))[0].action == "copied"

    listed = run_cli("agents", "list", "--json", "--config", str(config), cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert '"name": "ada"' in listed.stdout and '"phase": "submitted"' in listed.stdout

    twice = run_cli("migrate", "--config", str(config), "--from", f"sqlite:{source}", cwd=tmp_path)
    assert twice.returncode == 2
    assert "already holds agents or audit entries" in twice.stderr


def test_migrate_from_needs_a_postgres_target_and_an_existing_file(tmp_path: Path) -> None:
    to_sqlite = run_cli("migrate", "--from", f"sqlite:{tmp_path / 'x.db'}", cwd=tmp_path)
    assert to_sqlite.returncode == 2
    assert "set database: postgresql://" in to_sqlite.stderr
    bad = run_cli("migrate", "--from", "mysql:x", cwd=tmp_path)
    assert bad.returncode == 2 and "--from takes sqlite:PATH" in bad.stderr


def test_migrate_from_a_missing_file_creates_nothing(
    tmp_path: Path, postgres_server: PostgresServer
) -> None:
    config = config_for(tmp_path, postgres_server.url(postgres_server.create_database()))
    missing = tmp_path / "nope.db"
    done = run_cli("migrate", "--config", str(config), "--from", f"sqlite:{missing}", cwd=tmp_path)
    assert done.returncode == 2
    assert f"no SQLite database at {missing}" in done.stderr
    assert not missing.exists()
