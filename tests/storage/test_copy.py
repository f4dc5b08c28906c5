"""``plancord migrate`` against PostgreSQL, and ``--from sqlite:PATH`` moving a live SQLite
database into it, through the real command line."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest

from plancord.core.ballot import ApprovalVote, VoteWrite
from plancord.core.intents import ResultIntent
from plancord.core.plan_answers import AnswerOutcome, PlanAnswer
from plancord.core.plan_comments import PlanComments
from plancord.core.planning import Actor, AuditEntry, EntrySource
from plancord.core.ports import StaticSettings
from plancord.core.results import ResultAction
from plancord.core.service import PlanningService
from plancord.core.settings import PlanModeSettings
from plancord.storage.approval_votes import ApprovalVoteStore
from plancord.storage.conversations import ConversationStore
from plancord.storage.copy import CopyRefused, parents_first
from plancord.storage.engines import open_database
from plancord.storage.executions import ExecutionStore
from plancord.storage.leases import LeaseStore
from plancord.storage.migrations import discover
from plancord.storage.owed_duties import OwedDuty, OwedDutyStore
from plancord.storage.pending_asks import PendingAskStore, StoredAsk
from plancord.storage.plan_answers import PlanAnswerStore
from plancord.storage.plan_comments import PlanCommentStore
from plancord.storage.plan_reviews import PlanReviewStore, ReviewKind
from plancord.storage.result_intents import ResultIntentStore
from plancord.storage.result_votes import ResultVoteStore
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

    # A relative sqlite:PATH resolves as data_dir does, against the config's folder, from
    # wherever the command runs.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    relative = source.relative_to(config.parent)
    done = run_cli(
        "migrate", "--config", str(config), "--from", f"sqlite:{relative}", cwd=elsewhere
    )
    assert done.returncode == 0, done.stderr
    assert "agents: 1" in done.stdout and "plan_revisions: 1" in done.stdout

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


async def a_sqlite_database_with_every_table_filled(data_dir: Path) -> Path:
    """The demo's database (a plan revised, approved and executed, its result waiting), and
    what the demo leaves empty added through the stores: a Merge vote on that result and a
    Merge under way on it, and a
    second agent whose submitted plan has an answered question, an approval vote, a review
    under way and a question pending."""
    demo = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-m", "plancord.command.main", "demo", "--keep", str(data_dir)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert demo.returncode == 0, demo.stdout + demo.stderr
    path = data_dir / "plancord.db"
    clock = ManualClock()
    async with await open_database(path) as db:
        store = SqlStore(db)
        executed = await ExecutionStore(db).latest("ada")
        assert executed is not None and executed.result_version is not None
        assert executed.result_commit is not None
        vote = ApprovalVote(
            plan_id=executed.plan_id,
            revision=executed.result_version,
            sha256=executed.result_commit,
            voter_id="user:7",
            voter_name="cara",
            at=clock.now(),
        )
        merge_vote = AuditEntry(at=clock.now(), agent="ada", actor="user:7", action="merge-vote")
        assert await ResultVoteStore(db).record(vote, merge_vote) is VoteWrite.RECORDED
        merging = ResultIntent(
            id="intent-1",
            plan_id=executed.plan_id,
            agent="ada",
            version=executed.result_version,
            action=ResultAction.MERGE,
            actor="user:7(cara)",
            actor_name="cara",
            detail={"commit": executed.result_commit},
            owner="elsewhere:1:1:x",
            opened_at=clock.now(),
        )
        assert (await ResultIntentStore(db).open(merging)).opened
        await LeaseStore(db).take("elsewhere:1:x", "elsewhere", 1, 30.0)
        await LeaseStore(db).hold("ada", "elsewhere:1:x")

        await store.create_agent(agent_record("bea", channel_id=1002))
        service = PlanningService(store, clock, StaticSettings(PlanModeSettings()))
        await service.enter("bea", source=EntrySource.USER, actor=ANA, task="health")
        await service.submit("bea", PLAN)
        state = await store.load_state("bea")
        plan_id = state.plan_id or ""
        answer = PlanAnswer(
            plan_id=plan_id,
            revision=1,
            question=0,
            answer="staging",
            by=ANA.label,
            by_name="ana",
            at=clock.now(),
        )
        assert await PlanAnswerStore(db).record(answer, "bea", "Where?") is AnswerOutcome.KEPT
        comments = PlanComments(
            PlanCommentStore(db), store, store, StaticSettings(PlanModeSettings()), clock
        )
        assert (await comments.comment("bea", Actor.operator(), 1, "Which host?")).id == 1
        approval = vote.model_copy(
            update={"plan_id": plan_id, "revision": 1, "sha256": state.plan_sha}
        )
        voted = AuditEntry(at=clock.now(), agent="bea", actor="user:7", action="approve-vote")
        assert await ApprovalVoteStore(db).record(approval, "bea", voted) is VoteWrite.RECORDED
        assert await PlanReviewStore(db).start(plan_id, 1, ReviewKind.PLAN, clock.now())
        await PendingAskStore(db).add(
            StoredAsk(
                id="ask-1",
                agent="bea",
                kind="question",
                payload={"question": "Which port?"},
                created_at=clock.now(),
                deadline=clock.now(),
            )
        )
        at = clock.now().isoformat()
        # A schedule of bea's with one run claimed, and a rule a member remembered.
        await db.execute(
            "INSERT INTO schedules (id, agent, task, cron, anchor, tz, when_busy, "
            "max_runs_per_day, created_by, created_by_name, created_at, state, next_run_at) "
            "VALUES ('s1', 'bea', 'tidy', '0 9 * * 1', ?, 'UTC', 'skip', 4, 'user:7', 'bo', ?, "
            "'active', ?)",
            (at, at, at),
        )
        await db.execute(
            "INSERT INTO schedule_runs (schedule_id, due_at, agent, owner, claimed_at, outcome) "
            "VALUES ('s1', ?, 'bea', 'owner-1', ?, 'started')",
            (at, at),
        )
        await db.execute(
            "INSERT INTO call_rules (id, agent, tool, decision, scope, created_by, created_at) "
            "VALUES ('r1', 'bea', 'bash_execute', 'allow', '{\"argv\": [\"npm\", \"test\"]}', "
            "'user:7', ?)",
            (at,),
        )
        await OwedDutyStore(db).owe(OwedDuty("open-result", plan_id, {}, attempts=1))
    return path


async def table_counts(url_or_path: Path | str) -> dict[str, int]:
    async with await open_database(url_or_path) as db:
        if isinstance(url_or_path, Path):
            listed = (
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
            )
        else:
            listed = (
                "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() "
                "AND tablename <> 'plancord_schema'"
            )
        names = [row[0] for row in await db.fetchall(listed)]
        counts = {}
        for name in names:
            row = await db.fetchone(f'SELECT count(*) FROM "{name}"')
            counts[name] = int(row[0])
        return counts


async def test_migrate_from_sqlite_copies_a_database_with_every_table_filled(
    tmp_path: Path, postgres_server: PostgresServer
) -> None:
    """An executed plan's rows (executions, then its events and votes) arrive whole: the copy
    follows the schema's foreign keys, and ids PostgreSQL generates are kept in every table."""
    source = await a_sqlite_database_with_every_table_filled(tmp_path / "demo")
    before = await table_counts(source)
    assert [table for table, rows in before.items() if rows == 0] == []
    url = postgres_server.url(postgres_server.create_database())
    config = config_for(tmp_path, url)

    done = run_cli("migrate", "--config", str(config), "--from", f"sqlite:{source}", cwd=tmp_path)

    assert done.returncode == 0, done.stderr
    assert await table_counts(url) == before
    async with await open_database(source) as lite, await open_database(url) as pg:
        old, new = ExecutionStore(lite), ExecutionStore(pg)
        executed = await old.latest("ada")
        assert executed is not None
        assert await new.latest("ada") == executed
        assert await new.events(executed.plan_id) == await old.events(executed.plan_id)
    status = run_cli("plan", "status", "--agent", "bea", "--config", str(config), cwd=tmp_path)
    assert status.returncode == 0, status.stderr
    assert "submitted" in status.stdout


def test_tables_are_ordered_parents_first_and_a_cycle_is_refused() -> None:
    references = [("execution_events", "executions"), ("executions", "agents"), ("t", "t")]
    assert parents_first(["t", "execution_events", "executions", "agents"], references) == [
        "agents",
        "t",
        "executions",
        "execution_events",
    ]
    with pytest.raises(CopyRefused, match="cycle"):
        parents_first(["a", "b"], [("a", "b"), ("b", "a")])


def test_migrate_into_a_database_not_created_yet_says_how_to_create_it(
    tmp_path: Path, postgres_server: PostgresServer
) -> None:
    config = config_for(tmp_path, postgres_server.url("not_created_yet"))
    done = run_cli("migrate", "--config", str(config), cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1
    assert "the database not_created_yet does not exist on that server" in done.stderr
    assert f"sudo -u postgres createdb -O {postgres_server.user} not_created_yet" in done.stderr
    assert "cannot be reached" not in done.stderr
