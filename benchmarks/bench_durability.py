"""How fast plan transitions are made durable on each engine, and how fast planning state
comes back.

Why: every transition (enter, submit, approve, complete, ...) is one database transaction
that writes the state row, its audit row and, on submit, the plan revision, so that a crash
can never leave half a decision. A bot with many agents must not be slowed by that, a team
that outgrows one machine needs the store to serve several callers and several processes at
once, and a restart must restore every agent at once.

Run with ``.venv/bin/python benchmarks/bench_durability.py``. It prints:

* durable transitions per second through ``PlanningService``, cycles enter -> submit ->
  approve -> complete, with 1, 4 and 16 concurrent callers (each on its own agents), on a
  SQLite file (WAL, one writer) and on a real PostgreSQL server started for the run (fsync
  and synchronous commit on, as shipped), side by side, each as a ratio of SQLite with one
  caller; then two processes of 8 callers each against the one PostgreSQL;
* the time to restore 10,000 agents at startup from SQLite: open the database,
  ``store.list_states()``, then ``service.fire_due()``, which times out the sessions whose
  deadline passed while the bot was down (1% of those planning). Median of 5 restores.

Goals: more than 1,000 transitions per second on SQLite with one caller; restore in under
1 second. The 10,000-agent database is written in bulk with the store's own row encoding
(``codec.state_values``), since creating it one transaction at a time is not what is
measured. Without PostgreSQL's server binaries the PostgreSQL lines say how to get them.
"""

from __future__ import annotations

import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from _common import ANA, MODEL, StepClock
from _restore import PLAN, RESTORE_RUNS, restore
from plancord.agent.manager import StoredSettings
from plancord.config import Config
from plancord.core.agents import AgentRecord
from plancord.core.planning import (
    Actor,
    EntrySource,
    PlanRef,
)
from plancord.core.service import PlanningService
from plancord.storage.backend import Backend
from plancord.storage.engines import open_database
from plancord.storage.store import SqlStore
from plancord.testing.postgres_server import PostgresServer, PostgresUnavailable

CALLERS = (1, 4, 16)
CYCLES = 320  # per measurement, shared among the callers: 1,280 transitions
AGENTS_PER_CALLER = 2
PROCESSES = 2
PROCESS_CALLERS = 8


def record(name: str, channel: int) -> AgentRecord:
    return AgentRecord(
        name=name,
        model=MODEL,
        channel_id=channel,
        created_at=datetime(2026, 1, 5, 8, 0, tzinfo=UTC),
    )


async def cycle(service: PlanningService, agent: str) -> None:
    """One cycle: four transitions, each its own transaction with its audit row."""
    await service.enter(agent, source=EntrySource.USER, actor=ANA, task="health endpoint")
    revision = await service.submit(agent, PLAN)
    ref = PlanRef(agent=agent, plan_id=revision.plan_id, revision=revision.revision)
    await service.approve(ref, ANA)
    await service.complete(agent, Actor.agent(agent), "done")


async def prepared(
    db: Backend, prefix: str, callers: int, first_channel: int
) -> tuple[PlanningService, list[list[str]]]:
    """The service over ``db`` and, per caller, the agents it alone works on."""
    store = SqlStore(db)
    service = PlanningService(store, StepClock(), StoredSettings(Config(), store))
    groups: list[list[str]] = []
    channel = first_channel
    for caller in range(callers):
        group = []
        for n in range(AGENTS_PER_CALLER):
            name = f"{prefix}{caller:02d}{n}"
            await store.create_agent(record(name, channel))
            channel += 1
            group.append(name)
        groups.append(group)
    return service, groups


async def run_callers(service: PlanningService, groups: list[list[str]], cycles: int) -> float:
    """``cycles`` cycles shared among the callers, all at once; the wall time they took."""
    each = cycles // len(groups)

    async def caller(agents: list[str]) -> None:
        for n in range(each):
            await cycle(service, agents[n % len(agents)])

    began = time.perf_counter()
    await asyncio.gather(*(caller(g) for g in groups))
    return time.perf_counter() - began


async def measure(target: str | Path, callers: int, prefix: str) -> float:
    """Transitions per second with ``callers`` concurrent callers on ``target``."""
    db = await open_database(target)
    try:
        service, groups = await prepared(db, prefix, callers, 10_000 * (callers + 1))
        took = await run_callers(service, groups, CYCLES)
        rows = await db.fetchone(
            "SELECT count(*) FROM audit_log WHERE agent LIKE ?", (f"{prefix}%",)
        )
        if rows is None or rows[0] != 4 * CYCLES:
            raise RuntimeError(f"{prefix}: expected {4 * CYCLES} audit rows, found {rows}")
    finally:
        await db.close()
    return 4 * CYCLES / took


async def child(url: str, prefix: str, callers: int, cycles: int) -> None:
    """One of the processes sharing a PostgreSQL: ready, wait for go, run, report."""
    db = await open_database(url)
    try:
        service, groups = await prepared(db, prefix, callers, 900_000 + 1_000 * int(prefix[-1]))
        print("ready", flush=True)
        await asyncio.to_thread(sys.stdin.readline)
        began = time.time()
        took = await run_callers(service, groups, cycles)
        print(f"{began} {took}", flush=True)
    finally:
        await db.close()


def two_processes(url: str) -> tuple[float, float]:
    """Transitions per second of ``PROCESSES`` processes of ``PROCESS_CALLERS`` callers each
    against one PostgreSQL, and the slowest process's share of it."""
    cycles = CYCLES // PROCESSES
    script = str(Path(__file__).resolve())
    children = [
        subprocess.Popen(
            [sys.executable, script, "--child", url, f"proc{n}", str(PROCESS_CALLERS), str(cycles)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for n in range(PROCESSES)
    ]
    for proc in children:
        assert proc.stdout is not None
        if proc.stdout.readline().strip() != "ready":
            raise RuntimeError("a benchmark process did not start")
    for proc in children:
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.flush()
    spans = []
    for proc in children:
        out, _ = proc.communicate(timeout=600)
        began, took = (float(v) for v in out.split())
        spans.append((began, began + took))
        if proc.returncode != 0:
            raise RuntimeError("a benchmark process failed")
    wall = max(end for _, end in spans) - min(start for start, _ in spans)
    slowest = max(end - start for start, end in spans)
    return 4 * cycles * PROCESSES / wall, 4 * cycles / slowest


async def throughput(directory: Path) -> tuple[dict[tuple[str, int], float], str]:
    """Rates by (engine, callers), SQLite and PostgreSQL alternating so both see the same
    machine; and a line for the two processes (or why PostgreSQL was not measured)."""
    rates: dict[tuple[str, int], float] = {}
    try:
        server: PostgresServer | None = PostgresServer.start(durable=True)
    except PostgresUnavailable as exc:
        server, note = None, f"  PostgreSQL not measured: {exc}"
    try:
        for callers in CALLERS:
            rates["sqlite", callers] = await measure(
                directory / f"sqlite-{callers}.db", callers, f"c{callers}-"
            )
            if server is not None:
                url = server.url(server.create_database())
                rates["postgresql", callers] = await measure(url, callers, f"c{callers}-")
        if server is not None:
            url = server.url(server.create_database())
            async with await open_database(url):
                pass  # migrated once, before the processes start
            total, slowest = await asyncio.to_thread(two_processes, url)
            base = rates["sqlite", 1]
            note = (
                f"  {PROCESSES} processes x {PROCESS_CALLERS} callers, one PostgreSQL: "
                f"{total:8,.0f} transitions/s ({total / base:.2f}x); the slower process "
                f"alone {slowest:,.0f}/s"
            )
    finally:
        if server is not None:
            server.stop()
    return rates, note


async def main() -> int:
    with tempfile.TemporaryDirectory(prefix="plancord-bench-durability-") as name:
        directory = Path(name)
        rates, processes = await throughput(directory)
        runs, restored, fired = await restore(directory)
    base = rates["sqlite", 1]
    print(
        f"Durable transitions/s: {CYCLES} cycles enter->submit->approve->complete per run, "
        "each transition one transaction with its audit row; ratio to SQLite, 1 caller"
    )
    print(f"  {'callers':>7}  {'SQLite (WAL)':>20}  {'PostgreSQL (fsync on)':>24}")
    for callers in CALLERS:
        lite = rates["sqlite", callers]
        pg = rates.get(("postgresql", callers))
        pg_text = f"{pg:8,.0f} ({pg / base:5.2f}x)" if pg else "-"
        print(f"  {callers:>7}  {lite:8,.0f} ({lite / base:5.2f}x)  {pg_text:>24}")
    print(processes)
    opened = statistics.median(r[0] for r in runs)
    listed = statistics.median(r[1] for r in runs)
    fire = statistics.median(r[2] for r in runs)
    total = statistics.median(sum(r) for r in runs)
    print(f"Restore of {restored:,} agents at startup from SQLite, median of {RESTORE_RUNS} runs")
    print(f"  open database        {opened * 1000:8.1f} ms")
    print(f"  list_states          {listed * 1000:8.1f} ms")
    print(f"  fire_due ({fired} overdue) {fire * 1000:7.1f} ms")
    print(f"  total                {total * 1000:8.1f} ms")
    rate_ok = base > 1000
    restore_ok = total < 1.0
    print(
        f"goals: > 1,000 transitions/s {'met' if rate_ok else 'NOT met'}; "
        f"restore < 1 s {'met' if restore_ok else 'NOT met'}"
    )
    return 0 if rate_ok and restore_ok else 1


if __name__ == "__main__":
    if len(sys.argv) == 6 and sys.argv[1] == "--child":
        asyncio.run(child(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])))
        sys.exit(0)
    sys.exit(asyncio.run(main()))
