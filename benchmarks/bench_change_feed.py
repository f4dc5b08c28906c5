"""How soon one process hears a decision another process made, and what following costs.

Why: a plan timed out, cancelled or decided by one process (another bot process, the
operator's shell) must reach the process that shows its card or runs its turn promptly
(``storage.changes``, ``app.remote_changes``), without a polling load on the event loop.

Run with ``.venv/bin/python benchmarks/bench_change_feed.py [DECISIONS]``. For each engine
(a SQLite file; a PostgreSQL server started for the run), a child process makes DECISIONS
planning transitions (default 200: enter, cancel, enter, ...), 20 to 100 ms apart, through
``PlanningService``; this process follows the feed with ``RemoteChanges`` exactly as the bot
does, its front end a recorder. Latency is from the decision (the transition's
``updated_at``, the deciding process's clock, taken before its transaction) to the front
end's ``planning_changed`` here, on one host's wall clock: median, p99 and max. Then, idle
(no decisions) for IDLE_SECONDS: the event loop thread's CPU seconds per second while the
feed follows, against the same loop with no feed (side by side, alternating), the
follower thread's own CPU per second, and its reads per second.

Goal: p99 under 1 s on both engines; the loop's CPU per second with the feed within
0.0005 s of the loop's without it (the loop never polls; the follower thread does).
"""

from __future__ import annotations

import asyncio
import random
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

from _common import ANA, MODEL, percentile
from plancord.agent.manager import StoredSettings
from plancord.app.remote_changes import RemoteChanges
from plancord.config import Config
from plancord.core.agents import AgentRecord
from plancord.core.planning import EntrySource
from plancord.core.ports import PlanningChange, SystemClock
from plancord.core.service import PlanningService
from plancord.storage.changes import ChangeFeed
from plancord.storage.engines import open_database
from plancord.storage.store import SqlStore
from plancord.testing.postgres_server import PostgresServer, PostgresUnavailable

DECISIONS = 200
IDLE_SECONDS = 5.0
IDLE_ROUNDS = 2
AGENT = "ada"


class Recorder:
    """The front end: when each change was heard, as a delay since its decision."""

    def __init__(self, expected: int) -> None:
        self.delays: list[float] = []
        self.expected = expected
        self.all_heard = asyncio.Event()

    async def planning_changed(self, change: PlanningChange) -> None:
        updated = change.after.updated_at
        assert updated is not None, "a transition the store wrote has its time"
        self.delays.append(time.time() - updated.timestamp())
        if len(self.delays) >= self.expected:
            self.all_heard.set()


async def decide(target: str, decisions: int) -> None:
    """The child: ``decisions`` transitions on ``AGENT``, each a while after the last."""
    db = await open_database(target)
    try:
        store = SqlStore(db)
        service = PlanningService(store, SystemClock(), StoredSettings(Config(), store))
        rng = random.Random(7)
        for n in range(decisions):
            await asyncio.sleep(rng.uniform(0.02, 0.1))
            if n % 2 == 0:
                await service.enter(AGENT, source=EntrySource.USER, actor=ANA, task="t")
            else:
                await service.cancel(AGENT, ANA, "bench")
    finally:
        await db.close()


def thread_cpu(thread: threading.Thread | None) -> float:
    if thread is None or thread.ident is None:
        return 0.0
    return time.clock_gettime(time.pthread_getcpuclockid(thread.ident))


async def loop_cpu_per_second(seconds: float) -> float:
    """CPU seconds per second the loop thread spends while this coroutine sleeps."""
    began, cpu = time.monotonic(), time.thread_time()
    await asyncio.sleep(seconds)
    return (time.thread_time() - cpu) / (time.monotonic() - began)


async def measure(target: str, decisions: int) -> dict[str, float]:
    db = await open_database(target)
    try:
        store = SqlStore(db)
        await store.create_agent(
            AgentRecord(name=AGENT, model=MODEL, channel_id=1, created_at=datetime.now(UTC))
        )
        recorder = Recorder(decisions)
        service = PlanningService(store, SystemClock(), StoredSettings(Config(), store))

        async def serves(agent: str) -> bool:
            return True

        changes = RemoteChanges(ChangeFeed(db), store, service, serves, front_end=recorder)
        await changes.start()
        child = await asyncio.create_subprocess_exec(
            sys.executable, __file__, "--decide", target, str(decisions)
        )
        await child.wait()
        await asyncio.wait_for(recorder.all_heard.wait(), timeout=30)

        with_feed: list[float] = []
        without: list[float] = []
        follower = changes.feed.follower
        assert follower is not None
        feed_thread = next(t for t in threading.enumerate() if t.name == "plancord-changes")
        reads, thread_began = follower.reads, thread_cpu(feed_thread)
        idle_began = time.monotonic()
        for _ in range(IDLE_ROUNDS):
            with_feed.append(await loop_cpu_per_second(IDLE_SECONDS))
        idle = time.monotonic() - idle_began
        reads_per_second = (follower.reads - reads) / idle
        follower_cpu = (thread_cpu(feed_thread) - thread_began) / idle
        await changes.stop()
        for _ in range(IDLE_ROUNDS):
            without.append(await loop_cpu_per_second(IDLE_SECONDS))
    finally:
        await db.close()
    delays = recorder.delays
    return {
        "median": percentile(delays, 0.5),
        "p99": percentile(delays, 0.99),
        "max": max(delays),
        "heard": len(delays),
        "loop_with": sum(with_feed) / len(with_feed),
        "loop_without": sum(without) / len(without),
        "follower_cpu": follower_cpu,
        "reads": reads_per_second,
    }


def line(engine: str, figures: dict[str, float]) -> str:
    return (
        f"{engine:<11} heard {int(figures['heard']):>4}  median {figures['median'] * 1000:6.1f} ms"
        f"  p99 {figures['p99'] * 1000:6.1f} ms  max {figures['max'] * 1000:6.1f} ms"
        f"  | idle: loop CPU/s {figures['loop_with'] * 1000:.3f} ms with the feed,"
        f" {figures['loop_without'] * 1000:.3f} ms without;"
        f" follower thread {figures['follower_cpu'] * 1000:.3f} ms/s,"
        f" {figures['reads']:.1f} reads/s"
    )


async def main(decisions: int) -> int:
    failed = False
    results: list[tuple[str, dict[str, float]]] = []
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "plancord.db"
        results.append(("sqlite", await measure(str(path), decisions)))
    try:
        server = PostgresServer.start()
    except PostgresUnavailable as exc:
        print(f"postgresql  skipped: {exc}")
        server = None
    if server is not None:
        try:
            name = server.create_database()
            results.append(("postgresql", await measure(server.url(name), decisions)))
        finally:
            server.stop()
    for engine, figures in results:
        print(line(engine, figures))
        if figures["p99"] >= 1.0 or figures["heard"] < decisions:
            failed = True
        if figures["loop_with"] - figures["loop_without"] > 0.0005:
            failed = True
    print("FAIL" if failed else "PASS")
    return 1 if failed else 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--decide":
        asyncio.run(decide(sys.argv[2], int(sys.argv[3])))
        sys.exit(0)
    count = int(sys.argv[1]) if len(sys.argv) > 1 else DECISIONS
    sys.exit(asyncio.run(main(count)))
