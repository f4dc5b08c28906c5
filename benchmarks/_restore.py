"""``bench_durability.py``'s second part: restoring 10,000 agents at startup from SQLite.

The database is written in bulk with the store's own row encoding (``codec.state_values``),
since creating it one transaction at a time is not what is measured; each restore opens a
fresh copy, lists every state and fires what fell due while the bot was down.
"""

from __future__ import annotations

import shutil
import sqlite3
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from _common import MODEL, StepClock
from plancord.agent.manager import StoredSettings
from plancord.config import Config
from plancord.core.plan import validate_plan
from plancord.core.planning import (
    ApprovalMode,
    EntrySource,
    Phase,
    PlanningState,
    StepProgress,
    StepStatus,
)
from plancord.core.service import PlanningService
from plancord.storage.codec import STATE_COLUMNS, state_values, ts
from plancord.storage.db import Database
from plancord.storage.store import SqlStore

RESTORE_AGENTS = 10_000
RESTORE_RUNS = 5
PLAN = {
    "summary": "Add a health endpoint",
    "steps": [
        {"description": "Read the router", "tools": ["view"]},
        {"description": "Add /health", "tools": ["str_replace"], "risk": "medium"},
        {"description": "Test it", "tools": ["bash_execute"]},
    ],
    "context_notes": "The router lives in app/routes.py.",
}


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
        states.append((name, *state_values(state)))
    columns = ", ".join(("agent", *STATE_COLUMNS))
    marks = ", ".join("?" for _ in range(len(STATE_COLUMNS) + 1))
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
