"""Crashes: a short run of the SIGKILL soak, its checker on broken databases, and a restart
in the middle of a tool call.

``benchmarks/soak_crash.py`` kills a child running plan cycles and checks the database after
every kill; the full soak (200 cycles) is a benchmark, this is the same thing small enough
for every test run. The checker is tested on databases broken on purpose, so a soak that
reports no violations means something.
"""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, closing
from pathlib import Path

import pytest
from benchmarks.soak_crash import (
    Ack,
    check_invariants,
    check_result_invariants,
    check_start_invariants,
    make_result_workspace,
    make_start_workspace,
)

from plancord.agent.manager import AgentManager
from plancord.agent.runtime import AgentRuntime
from plancord.core.planning import Actor
from plancord.core.ports import Question
from plancord.llm.anthropic_client import AnthropicModelClient
from plancord.storage.db import Database
from plancord.testing.postgres_server import PostgresServer
from tests.conftest import ManualClock
from tests.fakes.anthropic_server import FakeAnthropicServer, ToolCall, text_turn, tool_turn
from tests.runtime.builders import build_runtime, plain_core
from tests.runtime.conftest import MODEL, ChannelRecorder

REPO = Path(__file__).resolve().parents[2]
SOAK = REPO / "benchmarks" / "soak_crash.py"
CHILD = REPO / "benchmarks" / "_soak_child.py"
ANA = Actor.user(42, "ana")


def test_a_short_soak_with_kills_breaks_no_invariant(tmp_path: Path) -> None:
    db = tmp_path / "soak.db"
    done = subprocess.run(
        [
            sys.executable,
            str(SOAK),
            "--cycles=15",
            "--kills=4",
            "--max-delay=0.15",
            "--seed=7",
            f"--db={db}",
            "--time-limit=90",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    found = re.findall(r"(cycles|kills|violations|invariant checks) (\d+)", done.stdout)
    figures = {name: int(value) for name, value in found}
    assert figures["cycles"] == 15
    assert figures["violations"] == 0
    assert 1 <= figures["kills"] <= 4
    assert figures["invariant checks"] == figures["kills"] + 1
    assert check_invariants(db) == []


def kills_inside(phase: str, kills: int) -> None:
    """A short soak of ``phase`` (result or start) with ``kills`` kills: no violation, and a
    check after every kill."""
    done = subprocess.run(
        [sys.executable, str(SOAK), f"--phase={phase}", f"--cycles={kills}", "--seed=5"],
        capture_output=True,
        text=True,
        timeout=240,
        cwd=REPO,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    found = re.findall(r"(kills|violations|invariant checks) (\d+)", done.stdout)
    figures = {name: int(value) for name, value in found}
    assert figures["kills"] == kills
    assert figures["violations"] == 0
    assert figures["invariant checks"] >= figures["kills"]


def test_a_short_result_soak_killed_inside_decisions_leaves_git_and_the_record_agreeing() -> None:
    """Merge, Discard and Roll back killed at random moments, each kill followed by a restart
    that recovers: the record, the branch, the base and the working tree agree every time."""
    kills_inside("result", 3)


def test_the_result_checker_sees_a_record_that_disagrees_with_git(tmp_path: Path) -> None:
    """A merge git did while the record still waits (what a crash without intents leaves)."""
    workspace = make_result_workspace(tmp_path)
    base = git_out(workspace, "rev-parse", "main")
    with closing(sqlite3.connect(tmp_path / "soak.db")) as conn:
        conn.executescript(
            "CREATE TABLE executions (plan_id, started_at, result, branch, result_commit, "
            "base_commit, reviewed_commit);"
            "CREATE TABLE result_intents (plan_id, action, state);"
        )
        conn.execute(
            "INSERT INTO executions VALUES ('p1', '1', 'waiting', 'plancord/p1-v1', ?, ?, ?)",
            ("f" * 40, base, base),
        )
        conn.execute("INSERT INTO result_intents VALUES ('p1', 'result-merge', 'open')")
        conn.commit()

    problems = check_result_invariants(tmp_path)

    assert "intent result-merge of p1 still open" in problems
    assert any("HEAD is refs/heads/main, the record says" in p for p in problems)


def test_a_short_start_soak_killed_inside_approvals_leaves_git_and_the_plan_agreeing() -> None:
    """Approvals killed at random moments, each kill followed by a restart that undoes what
    it interrupted: the plan, the executions, the starts and git agree every time."""
    kills_inside("start", 4)


def test_the_start_checker_sees_a_waiting_plan_whose_branch_git_kept(tmp_path: Path) -> None:
    """The workspace on an execution branch while the plan still waits and its start is
    open (what a crash between git and the approval leaves before the restart)."""
    workspace = make_start_workspace(tmp_path)
    git_out(workspace, "switch", "--quiet", "-c", "plancord/p1-v1")
    with closing(sqlite3.connect(tmp_path / "soak.db")) as conn:
        conn.executescript(
            "CREATE TABLE start_intents (plan_id, state);"
            "CREATE TABLE executions (plan_id, branch);"
            "CREATE TABLE planning_state (agent, phase, plan_id);"
        )
        conn.execute("INSERT INTO start_intents VALUES ('p1', 'open')")
        conn.execute("INSERT INTO planning_state VALUES ('ada', 'submitted', 'p1')")
        conn.commit()

    problems = check_start_invariants(tmp_path)

    assert "the start of p1 is still open" in problems
    assert any(
        "HEAD is 'refs/heads/plancord/p1-v1', expected 'refs/heads/main'" in p for p in problems
    )
    assert any("the execution branches is 'refs/heads/plancord/p1-v1'" in p for p in problems)


def git_out(workspace: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(workspace), *args], capture_output=True, text=True, check=True
    ).stdout.strip()


def test_two_processes_on_postgres_one_killed_break_no_invariant(
    postgres_server: PostgresServer,
) -> None:
    """The soak's PostgreSQL mode starts its own server; this one only proves one is there
    (and fails the run where CI requires it)."""
    assert postgres_server.port
    done = subprocess.run(
        [
            sys.executable,
            str(SOAK),
            "--postgres",
            "--cycles=10",
            "--kills=4",
            "--max-delay=0.15",
            "--seed=11",
            "--time-limit=90",
        ],
        capture_output=True,
        text=True,
        timeout=150,
        cwd=REPO,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "two processes" in done.stdout
    found = re.findall(r"(cycles|kills|violations|acknowledged approvals) (\d+)", done.stdout)
    figures = {name: int(value) for name, value in found}
    assert figures["cycles"] == 20  # ten by each process
    assert figures["violations"] == 0
    assert 1 <= figures["kills"] <= 4
    # every completed cycle was approved; a kill may fall between a commit and its ACK
    assert figures["acknowledged approvals"] >= figures["cycles"] - figures["kills"]


@pytest.fixture(scope="module")
def healthy_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A database after a few uninterrupted cycles, with acknowledged approvals."""
    db = tmp_path_factory.mktemp("soak") / "healthy.db"
    subprocess.run(
        [sys.executable, str(CHILD), f"--db={db}", "--cycles=4", "--seed=3"],
        capture_output=True,
        timeout=60,
        check=True,
    )
    return db


def broken(healthy: Path, target: Path, sql: str) -> Path:
    shutil.copyfile(healthy, target)
    with closing(sqlite3.connect(target)) as conn, conn:
        changed = conn.execute(sql).rowcount
    assert changed == 1, sql
    return target


def one(db: Path, sql: str) -> tuple[object, ...]:
    with closing(sqlite3.connect(db)) as conn:
        return tuple(conn.execute(sql).fetchone())


APPROVED = "SELECT plan_id, revision, detail FROM audit_log WHERE action = 'approved' LIMIT 1"


def test_the_checker_passes_a_healthy_database(healthy_db: Path) -> None:
    plan_id, revision, detail = one(healthy_db, APPROVED)
    ack = Ack(str(plan_id), int(str(revision)), json.loads(str(detail))["sha256"])
    assert check_invariants(healthy_db, {ack}) == []


#: name -> (the SQL that breaks a healthy database, what the checker must then report)
CORRUPTIONS: dict[str, tuple[str, str]] = {
    "approved twice": (
        "INSERT INTO audit_log (at, agent, actor, action, plan_id, revision, detail) "
        "SELECT at, agent, actor, action, plan_id, revision, detail FROM audit_log "
        "WHERE action = 'approved' LIMIT 1",
        "decided 2 times",
    ),
    "approved and timed out": (
        "INSERT INTO audit_log (at, agent, actor, action, plan_id, revision, detail) "
        "SELECT at, agent, 'scheduler', 'timed-out', plan_id, revision, "
        "'{\"deadline\": \"approval\"}' FROM audit_log WHERE action = 'approved' LIMIT 1",
        "decided 2 times",
    ),
    "approval of another sha": (
        "INSERT INTO audit_log (at, agent, actor, action, plan_id, revision, detail) "
        "SELECT at, agent, actor, 'approved', plan_id, revision, '{\"sha256\": \"0\"}' "
        "FROM audit_log WHERE action = 'submitted' ORDER BY id DESC LIMIT 1",
        "carries sha 0",
    ),
    "executing without approval": (
        "UPDATE planning_state SET phase = 'executing', plan_id = 'nope', revision = 1, "
        "plan_sha = 'x', approved_by = '42', idle_deadline = NULL, approval_deadline = NULL "
        "WHERE agent = 'agent-0'",
        "agent-0 executes ('nope', 1) without an approval",
    ),
    "completed without approval": (
        "INSERT INTO audit_log (at, agent, actor, action, plan_id, revision) "
        "VALUES ('2026-01-01', 'agent-0', 'agent:agent-0', 'completed', 'ghost', 1)",
        "completed (audit",
    ),
    "gathering without deadline": (
        "UPDATE planning_state SET phase = 'gathering', idle_deadline = NULL, "
        "approval_deadline = NULL, approved_by = NULL WHERE agent = 'agent-1'",
        "agent-1 is gathering with no deadline",
    ),
    "waiting without deadline": (
        "UPDATE planning_state SET phase = 'submitted', approval_deadline = NULL, "
        "idle_deadline = NULL, approved_by = NULL WHERE agent = 'agent-2'",
        "agent-2 waits for approval with no deadline",
    ),
    "a gap in the conversation": (
        "DELETE FROM messages WHERE agent = 'agent-0' AND seq = 1",
        "agent-0: message 2 follows 0",
    ),
    "two user turns in a row": (
        "UPDATE messages SET role = 'user' WHERE agent = 'agent-0' AND seq = 1",
        "agent-0: message 1 is user, expected assistant",
    ),
    "content that is not JSON": (
        "UPDATE messages SET content = '{oops' WHERE agent = 'agent-0' AND seq = 0",
        "agent-0: message 0 is not JSON",
    ),
}


@pytest.mark.parametrize("name", list(CORRUPTIONS))
def test_the_checker_finds_each_kind_of_violation(
    healthy_db: Path, tmp_path: Path, name: str
) -> None:
    sql, expected = CORRUPTIONS[name]
    db = broken(healthy_db, tmp_path / "broken.db", sql)
    problems = check_invariants(db)
    assert any(expected in p for p in problems), problems


def test_the_checker_misses_no_acknowledged_approval(healthy_db: Path) -> None:
    missing = Ack("never-approved", 1, "0" * 64)
    problems = check_invariants(healthy_db, {missing})
    assert problems == ["acknowledged approval of ('never-approved', 1) is missing"]


# -- a restart while a tool call waits for a human ----------------------------------------------


class NobodyAnswers(ChannelRecorder):
    """The question is posted and never answered: the bot is restarted meanwhile."""

    def __init__(self) -> None:
        super().__init__()
        self.asked = asyncio.Event()

    async def ask_user(self, question: Question) -> str | None:
        self.questions.append(question)
        self.asked.set()
        await asyncio.Event().wait()
        return None


@asynccontextmanager
async def runtime_over(
    data: Path, server: FakeAnthropicServer, channel: ChannelRecorder
) -> AsyncIterator[AgentRuntime]:
    db = await Database.open(data / "plancord.db")
    model = AnthropicModelClient(api_key="test-key", base_url=server.url, max_retries=0)
    clock = ManualClock()
    agents_dir = data / "agents"
    core = plain_core(db, clock, agents_dir)
    runtime = build_runtime(core, notifier=channel, model=model, clock=clock)
    if not (agents_dir / "ada").exists():
        await AgentManager(core.store, agents_dir, MODEL, clock).create("ada", actor=ANA)
    try:
        yield runtime
    finally:
        await runtime.shutdown()
        await model.close()
        await db.close()


async def test_a_restart_while_a_question_is_open_does_not_wedge_the_agent(
    tmp_path: Path,
) -> None:
    waiting = NobodyAnswers()
    async with (
        FakeAnthropicServer(
            [tool_turn(ToolCall("ask_user", {"question": "Which database?"}))]
        ) as server,
        runtime_over(tmp_path, server, waiting) as runtime,
    ):
        await runtime.handle_message("ada", "set up storage", ANA)
        await asyncio.wait_for(waiting.asked.wait(), 10)
    after = ChannelRecorder()
    async with (
        FakeAnthropicServer([text_turn("Back. Which database should I use?")]) as server,
        runtime_over(tmp_path, server, after) as runtime,
    ):
        await runtime.handle_message("ada", "are you still there?", ANA)
        await runtime.wait_idle("ada")
        assert server.rejections == []
        assert after.said == ["Back. Which database should I use?"]
