"""How fast plan transitions are made durable, and how fast planning state comes back.

Why: every transition (enter, submit, approve, complete, ...) is one SQLite transaction that
writes the state row, its audit row and, on submit, the plan revision, so that a crash can
never leave half a decision. This script checks that durability is cheap enough: a bot with
many agents must not be slowed by it, and a restart must restore every agent at once.

Run with ``.venv/bin/python benchmarks/bench_durability.py``. It prints:

* transitions per second through ``PlanningService`` over a real SQLite file (WAL, one
  transaction each) for 2,000 cycles enter -> submit -> approve -> complete spread over 50
  agents, once one call at a time and once with every agent working concurrently, and the
  median latency of each kind of transition;
* the time to restore 10,000 agents at startup: open the database, ``store.list_states()``,
  then ``service.fire_due()``, which times out the sessions whose deadline passed while the
  bot was down (1% of those planning). Median of 5 restores, each from a fresh copy.

Goals: more than 1,000 transitions per second; restore in under 1 second. The 10,000-agent
database is written in bulk with the store's own row encoding (``_state_values``), since
creating it one transaction at a time is not what is measured.
"""

from __future__ import annotations

import asyncio
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TypeVar

from _common import ANA, MODEL, StepClock, median_ms, percentile_ms
from plancord.agent.manager import StoredSettings
from plancord.config import Config
from plancord.core.agents import AgentRecord
from plancord.core.plan import validate_plan
from plancord.core.planning import (
    Actor,
    ApprovalMode,
    EntrySource,
    Phase,
    PlanningState,
    PlanRef,
    StepProgress,
    StepStatus,
)
from plancord.core.service import PlanningService
from plancord.storage.db import Database
from plancord.storage.store import _STATE_COLUMNS, SqlStore, _state_values, ts

CYCLES = 2000
ROUND = 200
AGENTS = 50
RESTORE_AGENTS = 10_000
RESTORE_RUNS = 5
T = TypeVar("T")
PLAN = {
    "summary": "Add a health endpoint",
    "steps": [
        {"description": "Read the router", "tools": ["view"]},
        {"description": "Add /health", "tools": ["str_replace"], "risk": "medium"},
        {"description": "Test it", "tools": ["bash_execute"]},
    ],
    "context_notes": "The router lives in app/routes.py.",
}


def record(name: str, channel: int) -> AgentRecord:
    return AgentRecord(
        name=name,
        model=MODEL,
        channel_id=channel,
        created_at=datetime(2026, 1, 5, 8, 0, tzinfo=UTC),
    )


class RoundTripsDatabase(Database):
    """Baseline: a transaction as aiosqlite's public API writes it, ``BEGIN IMMEDIATE``, the
    statements and ``COMMIT`` each awaited in turn (three round trips to the worker thread
    here; the store before ``Database.write`` made one per statement, four or five), with an
    ``asyncio.Lock`` so that no other coroutine's statements land inside the transaction.
    Shown next to the shipped one-trip ``write``; not used by plancord."""

    lock: asyncio.Lock | None = None

    async def write(self, work: Callable[[sqlite3.Connection], T]) -> T:
        if self.lock is None:
            self.lock = asyncio.Lock()
        async with self.lock:
            await self.conn.execute("BEGIN IMMEDIATE")
            try:
                result = await self._on_writer(lambda: work(self.raw))
                await self.conn.execute("COMMIT")
            except BaseException:
                with suppress(sqlite3.Error):
                    await self.conn.execute("ROLLBACK")
                raise
            return result


@dataclass
class Subject:
    """One database under test and what was measured on it."""

    name: str
    service: PlanningService
    db: Database
    agents: list[str]
    clock: StepClock = field(default_factory=StepClock)
    elapsed: float = 0.0
    cpu: float = 0.0
    cycles: int = 0
    timings: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))

    @property
    def rate(self) -> float:
        return 4 * self.cycles / self.elapsed

    @property
    def cpu_rate(self) -> float:
        """Transitions per second of this process's CPU time (event loop and SQLite thread)."""
        return 4 * self.cycles / self.cpu


async def open_subject(name: str, path: Path, database: type[Database]) -> Subject:
    db = await database.open(path)
    store = SqlStore(db)
    clock = StepClock()
    names = [f"agent-{n:03d}" for n in range(AGENTS)]
    for number, agent in enumerate(names):
        await store.create_agent(record(agent, 5000 + number))
    service = PlanningService(store, clock, StoredSettings(Config(), store))
    return Subject(name, service, db, names, clock)


async def run_cycles(subject: Subject, count: int) -> None:
    """``count`` cycles enter -> submit -> approve -> complete, each transition timed."""
    service, timings = subject.service, subject.timings
    begin = time.perf_counter()
    begin_cpu = time.process_time()
    for _ in range(count):
        agent = subject.agents[subject.cycles % AGENTS]
        started = time.perf_counter()
        await service.enter(agent, source=EntrySource.USER, actor=ANA, task="health endpoint")
        entered = time.perf_counter()
        revision = await service.submit(agent, PLAN)
        submitted = time.perf_counter()
        ref = PlanRef(agent=agent, plan_id=revision.plan_id, revision=revision.revision)
        await service.approve(ref, ANA)
        approved = time.perf_counter()
        await service.complete(agent, Actor.agent(agent), "done")
        completed = time.perf_counter()
        timings["enter"].append(entered - started)
        timings["submit"].append(submitted - entered)
        timings["approve"].append(approved - submitted)
        timings["complete"].append(completed - approved)
        subject.cycles += 1
        subject.clock.advance(1)
    subject.elapsed += time.perf_counter() - begin
    subject.cpu += time.process_time() - begin_cpu


async def throughput(directory: Path) -> list[Subject]:
    """The shipped store and the baseline, alternating in rounds so both see the same load."""
    subjects = [
        await open_subject("shipped", directory / "shipped.db", Database),
        await open_subject("baseline", directory / "baseline.db", RoundTripsDatabase),
    ]
    try:
        for _ in range(CYCLES // ROUND):
            for subject in subjects:
                await run_cycles(subject, ROUND)
        for subject in subjects:
            audited = await subject.db.fetchone("SELECT count(*) FROM audit_log")
            if audited is None or audited[0] != 4 * CYCLES:
                raise RuntimeError(f"{subject.name}: expected {4 * CYCLES} audit rows")
    finally:
        for subject in subjects:
            await subject.db.close()
    return subjects


def restore_database(path: Path, now: datetime) -> int:
    """10,000 agents in every phase; returns how many planning sessions are overdue at ``now``.

    70% inactive, 10% gathering, 10% submitted (with their revision), 10% executing. One in a
    hundred of the gathering and submitted sessions has a deadline before ``now``.
    """
    plan = validate_plan(PLAN)
    plan_json = plan.model_dump_json()
    markdown = plan.to_markdown()
    sha = plan.sha256()
    created = ts(now - timedelta(days=3))
    agents, states, revisions = [], [], []
    overdue = 0
    for number in range(RESTORE_AGENTS):
        name = f"agent-{number:05d}"
        agents.append((name, MODEL, 10_000 + number, created))
        kind = number % 10
        planning = kind in (7, 8)
        late = planning and (number // 10) % 100 == 0
        overdue += late
        deadline = now - timedelta(minutes=5) if late else now + timedelta(minutes=20)
        base = PlanningState(
            agent=name,
            version=4,
            updated_at=now - timedelta(hours=1),
        )
        if kind == 7:
            state = base.model_copy(
                update={
                    "phase": Phase.GATHERING,
                    "task": "health endpoint",
                    "requested_by": "42",
                    "requested_by_name": "ana",
                    "entered_at": now - timedelta(hours=1),
                    "entry_source": EntrySource.USER,
                    "plan_id": f"p{number:015d}",
                    "idle_deadline": deadline,
                }
            )
        elif kind == 8:
            state = base.model_copy(
                update={
                    "phase": Phase.SUBMITTED,
                    "task": "health endpoint",
                    "requested_by": "42",
                    "requested_by_name": "ana",
                    "entered_at": now - timedelta(hours=1),
                    "entry_source": EntrySource.USER,
                    "plan_id": f"p{number:015d}",
                    "revision": 1,
                    "plan_sha": sha,
                    "approval_deadline": deadline,
                }
            )
            revisions.append(
                (f"p{number:015d}", 1, name, plan_json, markdown, sha, ts(now), "agent")
            )
        elif kind == 9:
            state = base.model_copy(
                update={
                    "phase": Phase.EXECUTING,
                    "task": "health endpoint",
                    "requested_by": "42",
                    "requested_by_name": "ana",
                    "entered_at": now - timedelta(hours=1),
                    "entry_source": EntrySource.USER,
                    "plan_id": f"p{number:015d}",
                    "revision": 1,
                    "plan_sha": sha,
                    "approved_by": "42",
                    "approved_by_name": "ana",
                    "approved_at": now - timedelta(minutes=30),
                    "approval_mode": ApprovalMode.NORMAL,
                    "steps": (
                        StepProgress(status=StepStatus.DONE),
                        StepProgress(status=StepStatus.IN_PROGRESS, note="half way"),
                        StepProgress(),
                    ),
                }
            )
            revisions.append(
                (f"p{number:015d}", 1, name, plan_json, markdown, sha, ts(now), "agent")
            )
        else:
            state = base
        states.append((name, *_state_values(state)))
    columns = ", ".join(("agent", *_STATE_COLUMNS))
    marks = ", ".join("?" for _ in range(len(_STATE_COLUMNS) + 1))
    with sqlite3.connect(path) as conn:
        conn.executemany(
            "INSERT INTO agents (name, model, channel_id, created_at) VALUES (?, ?, ?, ?)", agents
        )
        conn.executemany(
            f"INSERT INTO planning_state ({columns}) VALUES ({marks})",
            states,
        )
        conn.executemany(
            "INSERT INTO plan_revisions (plan_id, revision, agent, plan_json, markdown, sha256, "
            "submitted_at, author) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            revisions,
        )
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return overdue


async def restore_once(path: Path, now: datetime) -> tuple[float, float, float, int, int]:
    """Open, list every state, fire what is overdue: the three times and the counts."""
    clock = StepClock(now)
    started = time.perf_counter()
    db = await Database.open(path)
    opened = time.perf_counter()
    try:
        store = SqlStore(db)
        service = PlanningService(store, clock, StoredSettings(Config(), store))
        states = await store.list_states()
        listed = time.perf_counter()
        fired = await service.fire_due()
        done = time.perf_counter()
    finally:
        await db.close()
    return opened - started, listed - opened, done - listed, len(states), len(fired)


async def restore(directory: Path) -> tuple[list[tuple[float, float, float]], int, int]:
    template = directory / "template.db"
    async with await Database.open(template):
        pass
    now = datetime(2026, 1, 6, 12, 0, tzinfo=UTC)
    overdue = restore_database(template, now)
    runs: list[tuple[float, float, float]] = []
    restored = fired = 0
    for run in range(RESTORE_RUNS):
        copy = directory / f"restore-{run}.db"
        shutil.copyfile(template, copy)
        opened, listed, fire, restored, fired = await restore_once(copy, now)
        if fired != overdue:
            raise RuntimeError(f"fire_due timed out {fired} sessions, {overdue} were overdue")
        runs.append((opened, listed, fire))
        with sqlite3.connect(copy) as conn:
            timed_out = conn.execute(
                "SELECT count(*) FROM audit_log WHERE action = 'timed-out'"
            ).fetchone()[0]
        if timed_out != overdue:
            raise RuntimeError(f"{timed_out} timed-out audit rows, expected {overdue}")
    return runs, restored, fired


async def main() -> int:
    with tempfile.TemporaryDirectory(prefix="plancord-bench-durability-") as name:
        directory = Path(name)
        shipped, baseline = await throughput(directory)
        runs, restored, fired = await restore(directory)
    print(
        f"Transitions: {CYCLES:,} cycles enter->submit->approve->complete over {AGENTS} agents, "
        "one call at a time, each one SQLite transaction with its audit row"
    )
    for subject in (shipped, baseline):
        print(
            f"  {subject.name:<8} {subject.rate:8,.0f} transitions/s wall clock, "
            f"{subject.cpu_rate:,.0f} per CPU-second"
        )
        for kind, samples in subject.timings.items():
            print(
                f"    {kind:<9} median {median_ms(samples):6.2f} ms   "
                f"p95 {percentile_ms(samples, 0.95):6.2f} ms"
            )
    print(
        f"  shipped / baseline (three round trips per transaction) = "
        f"{shipped.rate / baseline.rate:.2f}x transitions/s"
    )
    opened = statistics.median(r[0] for r in runs)
    listed = statistics.median(r[1] for r in runs)
    fire = statistics.median(r[2] for r in runs)
    total = statistics.median(sum(r) for r in runs)
    print(f"Restore of {restored:,} agents at startup, median of {RESTORE_RUNS} runs")
    print(f"  open database        {opened * 1000:8.1f} ms")
    print(f"  list_states          {listed * 1000:8.1f} ms")
    print(f"  fire_due ({fired} overdue) {fire * 1000:7.1f} ms")
    print(f"  total                {total * 1000:8.1f} ms")
    rate_ok = shipped.rate > 1000
    restore_ok = total < 1.0
    print(
        f"goals: > 1,000 transitions/s {'met' if rate_ok else 'NOT met'}; "
        f"restore < 1 s {'met' if restore_ok else 'NOT met'}"
    )
    return 0 if rate_ok and restore_ok else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
