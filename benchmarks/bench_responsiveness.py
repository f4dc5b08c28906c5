"""Whether the bot stays responsive while many agents run their tool loops at once.

Why: every agent, every Discord interaction and every database round trip share one event
loop. One synchronous call on it (file I/O, a git subprocess waited on synchronously, SQLite
outside its worker thread) delays everything else, and Discord fails an interaction that is
not acknowledged within 3 s. The goals: the loop never stalls for more than 50 ms, and every
interaction is acknowledged within 100 ms of its dispatch, and database writes take under
100 ms from asking to done (p99). Each goal is printed with PASS or FAIL for every phase, and
the script exits with status 1 when any is not met.

Run with ``.venv/bin/python benchmarks/bench_responsiveness.py [SEED]``. The real bot (cogs,
views, runtime, SQLite, git workspaces) runs under SimCord with the model played by the fake
Messages API, which answers each call after a random 50–500 ms (seeded) on a thread and event
loop of its own, as the real API is elsewhere. Three phases, one after the other in one run:
no load, 50 agents, 200 agents, each running scripted tool loops (create a file, glob, grep,
``git log`` in the shell, then a closing text) over and over.

SimCord settles the whole loop after every simulated action, so it cannot inject interactions
concurrently with each other: the agent load is driven through the same bot's
``AgentRuntime.handle_message`` from tasks SimCord does not own (real timers, never waited
for by a settle), while a member acts through SimCord one action at a time during the load:
``/plan status`` in a busy agent's channel, ``/plan start`` for an idle planner agent, and
Approve on a plan a planner submitted before the load began. Time to acknowledge runs from
just before the action is handed to SimCord to the first interaction response the bot sends
(``InteractionResponse`` methods are wrapped to note the time).

Event-loop lag comes from a task that sleeps 10 ms and records how late it wakes. A watchdog
thread samples the loop thread's stack whenever the loop has not run that task for 50 ms, so
a blocking call can be named by file and line. Next to them: a trivial read through the bot's
``Database`` every 50 ms with the number of writes then queued for the writer's thread, how
long each write took from asking to done, and garbage-collection pauses. The loop thread's
own CPU time per model call is printed too: unlike the lag, it hardly depends on what else the
machine runs, so it compares runs on a shared machine. The load average is printed at the
start and the end; figures from a loaded machine say so.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import discord
import simcord

from _common import REPO_ROOT
from _model_server import LATENCY, PLANNER_TAG

# isort: split

from plancord.config import Config
from plancord.core.planning import Actor, Phase
from plancord.process.gc_tuning import GcTuning
from plancord.testing.sim import SimClock, make_bot

MODEL = "claude-fake-test-model"
LOADS = (0, 50, 200)
PHASE_SECONDS = 4.0
STATUS_PER_CYCLE = 6
CYCLES = 2
TICK = 0.010
STALL_GOAL = 0.050
ACK_GOAL = 0.100
WRITE_P99_GOAL = 0.100
SRC = str(REPO_ROOT / "src")


def pct(samples: list[float], fraction: float) -> float:
    if not samples:
        return float("nan")
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, max(0, round(fraction * len(ordered)) - 1))] * 1000


# -- the model -----------------------------------------------------------------------------


# -- measurement ---------------------------------------------------------------------------


class LagMonitor:
    """Sleeps ``TICK`` over and over and records how late each wake is; a watchdog thread
    samples the loop thread's stack whenever the monitor has not run for ``STALL_GOAL``."""

    def __init__(self) -> None:
        self.samples: list[float] = []
        self.db_waits: list[float] = []
        self.queued: list[int] = []
        self.gc_pauses: list[tuple[int, float]] = []
        self._gc_started = 0.0
        self.heartbeat = time.perf_counter()
        self.recording = False
        self.stalls: Counter[str] = Counter()
        self._stop = threading.Event()
        self._loop_thread = threading.get_ident()
        self._tasks: list[asyncio.Task[None]] = []
        self._thread = threading.Thread(target=self._watch, daemon=True)

    async def _run(self) -> None:
        while True:
            before = time.perf_counter()
            self.heartbeat = before
            await asyncio.sleep(TICK)
            after = time.perf_counter()
            self.heartbeat = after
            if self.recording:
                self.samples.append(max(0.0, after - before - TICK))

    def _gc(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._gc_started = time.perf_counter()
        elif self.recording:
            self.gc_pauses.append((info["generation"], time.perf_counter() - self._gc_started))

    async def probe_db(self, db: Any) -> None:
        """A trivial read every 50 ms: how long the store makes anyone wait for a read, and
        how many writes were queued for the writer's thread at that moment."""
        while True:
            await asyncio.sleep(0.05)
            queued = db.conn._tx.qsize()
            began = time.perf_counter()
            await db.fetchall("SELECT 1")
            if self.recording:
                self.db_waits.append(time.perf_counter() - began)
                self.queued.append(queued)

    def _watch(self) -> None:
        sampled_for = 0.0
        while not self._stop.wait(0.005):
            beat = self.heartbeat
            if not self.recording or beat == sampled_for:
                continue
            if time.perf_counter() - beat > STALL_GOAL + TICK:
                sampled_for = beat
                frame = sys._current_frames().get(self._loop_thread)
                if frame is not None:
                    self.stalls[where(frame)] += 1

    def start(self, db: Any) -> None:
        loop = asyncio.get_running_loop()
        self._tasks = [loop.create_task(self._run()), loop.create_task(self.probe_db(db))]
        gc.callbacks.append(self._gc)
        self._thread.start()

    def reset(self) -> None:
        self.samples, self.db_waits, self.gc_pauses, self.queued = [], [], [], []
        self.stalls = Counter()

    async def stop(self) -> None:
        self._stop.set()
        gc.callbacks.remove(self._gc)
        for task in self._tasks:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task


def where(frame: Any) -> str:
    """The innermost plancord frame of a stack and the innermost frame overall."""
    stack = traceback.extract_stack(frame)
    ours = [f for f in stack if f.filename.startswith(SRC)]
    inner = stack[-1]
    top = f"{Path(inner.filename).name}:{inner.lineno} {inner.name}"
    if not ours:
        return top
    own = ours[-1]
    return f"{os.path.relpath(own.filename, REPO_ROOT)}:{own.lineno} ({own.name}) → {top}"


class WriteTimer:
    """Wraps one ``Database.write``: how long each write took, from asking to done (its wait
    in the writer's queue included)."""

    def __init__(self, db: Any) -> None:
        self.durations: list[float] = []
        self.recording = False
        original = db.write

        async def write(work: Any) -> Any:
            began = time.perf_counter()
            try:
                return await original(work)
            finally:
                if self.recording:
                    self.durations.append(time.perf_counter() - began)

        db.write = write


class LoopCpu:
    """The CPU time of every pass of the event loop: the callbacks it found ready, run one
    after the other (a task's step is one), and nothing else runs on the loop meanwhile. The
    longest pass is about what the loop lag would be on a machine with nothing else to run.
    Measured with the loop thread's own CPU clock, so other processes do not lengthen it; each
    long pass is named by its longest callback and where that callback ended (the innermost
    plancord frame its task was suspended at, or the callback's name)."""

    def __init__(self) -> None:
        self.recording = False
        self.longest: list[tuple[float, int, str]] = []
        """(CPU seconds, callbacks run, the longest callback) of the three longest passes."""
        self.over_10ms = 0
        self._original = asyncio.events.Handle._run
        self._loop_thread = threading.get_ident()
        self._pass: list[tuple[float, Any]] = []

    def install(self, loop: asyncio.AbstractEventLoop) -> None:
        meter = self
        run_once = loop._run_once  # type: ignore[attr-defined]

        def one_pass() -> None:
            if not meter.recording:
                run_once()
                return
            meter._pass = []
            began = time.thread_time()
            run_once()
            spent = time.thread_time() - began
            if spent > 0.010:
                meter.over_10ms += 1
            if meter._pass and (len(meter.longest) < 3 or spent > meter.longest[-1][0]):
                _, handle = max(meter._pass, key=lambda item: item[0])
                meter.longest.append((spent, len(meter._pass), suspended_at(handle)))
                meter.longest.sort(key=lambda item: -item[0])
                del meter.longest[3:]

        def run(handle: Any) -> None:
            if not meter.recording or threading.get_ident() != meter._loop_thread:
                meter._original(handle)
                return
            began = time.thread_time()
            meter._original(handle)
            meter._pass.append((time.thread_time() - began, handle))

        loop._run_once = one_pass  # type: ignore[attr-defined]
        asyncio.events.Handle._run = run  # type: ignore[method-assign,assignment]

    def reset(self) -> None:
        self.longest, self.over_10ms = [], 0

    def uninstall(self, loop: asyncio.AbstractEventLoop) -> None:
        asyncio.events.Handle._run = self._original  # type: ignore[method-assign]
        del loop._run_once  # type: ignore[attr-defined]


def suspended_at(handle: Any) -> str:
    task = getattr(handle._callback, "__self__", None)
    coro = task.get_coro() if isinstance(task, asyncio.Task) else None
    if coro is None:
        return getattr(handle._callback, "__qualname__", repr(handle._callback))
    frames = []
    while coro is not None:
        frame = getattr(coro, "cr_frame", None) or getattr(coro, "gi_frame", None)
        if frame is not None:
            frames.append(frame)
        coro = getattr(coro, "cr_await", None) or getattr(coro, "gi_yieldfrom", None)
    ours = [f for f in frames if f.f_code.co_filename.startswith(SRC)] or frames
    if not ours:
        return repr(task)
    own = ours[-1]
    path = os.path.relpath(own.f_code.co_filename, REPO_ROOT)
    return f"{path}:{own.f_lineno} ({own.f_code.co_name})"


class AckClock:
    """Notes when the bot first answers each interaction (response, defer, modal)."""

    def __init__(self) -> None:
        self.first: dict[int, float] = {}
        self._originals: dict[str, Any] = {}

    def install(self) -> None:
        for name in ("send_message", "defer", "edit_message", "send_modal"):
            original = getattr(discord.InteractionResponse, name)
            self._originals[name] = original

            def wrapped(original: Any = original) -> Callable[..., Awaitable[Any]]:
                async def respond(response: Any, *args: Any, **kwargs: Any) -> Any:
                    result = await original(response, *args, **kwargs)
                    self.first.setdefault(response._parent.id, time.perf_counter())
                    return result

                return respond

            setattr(discord.InteractionResponse, name, wrapped())

    def uninstall(self) -> None:
        for name, original in self._originals.items():
            setattr(discord.InteractionResponse, name, original)


# -- the scene -----------------------------------------------------------------------------


@dataclass
class PhaseFigures:
    load: int
    lag: list[float] = field(default_factory=list)
    acks: dict[str, list[float]] = field(default_factory=dict)
    unacked: int = 0
    seconds: float = 0.0
    db_waits: list[float] = field(default_factory=list)
    writes: list[float] = field(default_factory=list)
    objects: int = 0
    frozen: int = 0
    queued: list[int] = field(default_factory=list)
    gc_pauses: list[tuple[int, float]] = field(default_factory=list)
    model_calls: int = 0
    loop_cpu: float = 0.0
    longest_passes: list[tuple[float, int, str]] = field(default_factory=list)
    passes_over_10ms: int = 0
    stalls: Counter[str] = field(default_factory=Counter)


class Scene:
    def __init__(self, env: Any, model: ServerProcess, acks: AckClock) -> None:
        self.env = env
        self.model = model
        self.acks = acks
        self.guild = env.create_guild("plancord")
        self.ana = self.guild.add_member(env.create_user("ana"))
        self.actor = Actor.user(self.ana.id, "ana")
        self.load_channels: list[tuple[str, Any]] = []
        self.planners: list[tuple[str, Any]] = []
        self.workers: list[asyncio.Task[None]] = []
        self.to_approve: list[discord.Message] = []
        self.to_start: list[Any] = []
        self.writes: WriteTimer
        self.calls: CallCounter
        self.loop_cpu = LoopCpu()

    @property
    def app(self) -> Any:
        return self.env.bot.app

    async def create_agents(self, loads: int, planners: int) -> None:
        async def one(name: str, prompt: str) -> tuple[str, Any]:
            channel = self.guild.create_text_channel(name)
            await self.app.manager.create(
                name,
                actor=self.actor,
                channel_id=channel.id,
                guild_id=self.guild.id,
                profile="open",
                system_prompt=prompt,
            )
            return name, channel

        names = [(f"load{i:03d}", "You check notes.") for i in range(loads)]
        names += [(f"plan{i:03d}", f"{PLANNER_TAG}:plan{i:03d}.") for i in range(planners)]
        made = await asyncio.gather(*(one(n, p) for n, p in names))
        self.load_channels = [m for m in made if m[0].startswith("load")]
        self.planners = [m for m in made if m[0].startswith("plan")]

    async def timed(self, kind: str, phase: PhaseFigures, action: Awaitable[Any]) -> Any:
        started = time.perf_counter()
        mark = len(self.acks.first)
        result = await action
        answered = list(self.acks.first.values())[mark:]
        if answered:
            phase.acks.setdefault(kind, []).append(answered[0] - started)
        else:
            phase.unacked += 1
        return result

    async def prepare_plans(self, count: int) -> None:
        """Half of the planners submit a plan now, for the Approve clicks under load; the
        other half stay inactive, for ``/plan start``."""
        self.to_approve = []
        for name, channel in self.planners[:count]:
            await self.ana.slash(channel, "plan start", task="read it")
            if (await self.app.store.load_state(name)).phase is not Phase.SUBMITTED:
                raise RuntimeError(f"{name} did not submit a plan")
            message = next(
                m
                for m in reversed(list(channel.history()))
                if m.embeds and (m.embeds[0].title or "").startswith("Plan: ")
            )
            self.to_approve.append(message)
        self.to_start = [channel for _, channel in self.planners[count:]]
        self.model.flag.unlink()
        await asyncio.sleep(0)

    async def interactions(self, phase: PhaseFigures, until: float, cycles: int) -> None:
        """Rounds of ``/plan status`` (``STATUS_PER_CYCLE`` times), ``/plan start`` and an
        Approve click, one action at a time, for ``cycles`` rounds or until ``until``,
        whichever comes first (at least one round)."""
        rng = random.Random(phase.load)

        async def status() -> None:
            target = rng.choice(self.load_channels)[1]
            await self.timed("/plan status", phase, self.ana.slash(target, "plan status"))

        for cycle in range(cycles):
            if cycle and time.perf_counter() > until:
                break
            for _ in range(STATUS_PER_CYCLE):
                await status()
            channel = self.to_start.pop()
            await self.timed(
                "/plan start", phase, self.ana.slash(channel, "plan start", task="read it")
            )
            message = self.to_approve.pop()
            await self.timed("Approve click", phase, self.ana.click(message, label="Approve"))


class ServerProcess:
    """The fake Messages API (``_model_server.py``) in a process of its own, as the real API
    is elsewhere: neither its CPU time nor its hold on the GIL is charged to the bot."""

    def __init__(self, seed: int, flag: Path) -> None:
        self.seed = seed
        self.flag = flag
        self.process: subprocess.Popen[str] | None = None
        self.url = ""

    def start(self) -> ServerProcess:
        self.flag.touch()
        self.process = subprocess.Popen(
            [
                sys.executable,
                str(Path(__file__).with_name("_model_server.py")),
                str(self.seed),
                str(self.flag),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        self.url = self.process.stdout.readline().strip()
        if not self.url.startswith("http://"):
            raise RuntimeError(f"the model server did not start: {self.url!r}")
        return self

    def stop(self) -> None:
        if self.process is not None:
            assert self.process.stdin is not None
            self.process.stdin.close()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


class CallCounter:
    """Counts the load agents' model calls (not the planners'), as the bot makes them."""

    def __init__(self, model: Any) -> None:
        self.calls = 0
        original = model.create

        async def create(request: Any) -> Any:
            if not any(PLANNER_TAG in block.get("text", "") for block in request.system):
                self.calls += 1
            return await original(request)

        model.create = create


async def load_agent(scene: Scene, name: str, stop: asyncio.Event) -> None:
    """Turn after turn until ``stop``; a turn still running then finishes during the next
    phase's warm-up, or is cancelled when the bot closes."""
    runtime = scene.app.runtime
    while not stop.is_set():
        await runtime.handle_message(name, "check the notes", scene.actor, interactive=False)
        await runtime.wait_idle(name)


async def run_phase(scene: Scene, monitor: LagMonitor, load: int) -> PhaseFigures:
    phase = PhaseFigures(load)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    scene.workers += [
        loop.create_task(load_agent(scene, name, stop)) for name, _ in scene.load_channels[:load]
    ]
    await asyncio.sleep(0.5)
    monitor.reset()
    scene.loop_cpu.reset()
    writes = scene.writes
    writes.durations = []
    writes.recording = monitor.recording = scene.loop_cpu.recording = True
    calls_before = scene.calls.calls
    window = time.perf_counter()
    cpu = time.thread_time()
    await scene.interactions(phase, window + PHASE_SECONDS, CYCLES)
    writes.recording = monitor.recording = scene.loop_cpu.recording = False
    phase.loop_cpu = time.thread_time() - cpu
    phase.longest_passes = list(scene.loop_cpu.longest)
    phase.passes_over_10ms = scene.loop_cpu.over_10ms
    phase.writes = writes.durations
    phase.objects = len(gc.get_objects())
    phase.frozen = gc.get_freeze_count()
    phase.seconds = time.perf_counter() - window
    phase.lag = monitor.samples
    phase.stalls = monitor.stalls
    phase.db_waits = monitor.db_waits
    phase.queued = monitor.queued
    phase.gc_pauses = monitor.gc_pauses
    phase.model_calls = scene.calls.calls - calls_before
    stop.set()
    return phase


# -- report --------------------------------------------------------------------------------


def report(phases: list[PhaseFigures]) -> bool:
    print(
        "\nSimCord settles the loop after every simulated action, so interactions were driven "
        "one at a time\nthrough SimCord actors while the agent load ran on the same bot's "
        "runtime, outside SimCord's control.\n"
    )
    header = (
        f"{'agents':>6} | {'model calls/s':>13} | {'per agent':>9} | {'lag p50':>7} | "
        f"{'lag p99':>7} | {'lag max':>7} | {'ack p50':>7} | {'ack p99':>7} | "
        f"{'ack max':>7} | {'acks':>4} | {'read p50':>8} | {'read p99':>8} | {'gc max':>6} | "
        f"{'window':>6}"
    )
    print(header + "\n" + "-" * len(header))
    for phase in phases:
        acks = [a for values in phase.acks.values() for a in values]
        gcs = [pause for _, pause in phase.gc_pauses] or [0.0]
        rate = phase.model_calls / phase.seconds
        print(
            f"{phase.load:>6} | {rate:>13.1f} | {rate / max(phase.load, 1):>9.2f} | "
            f"{pct(phase.lag, 0.5):>7.1f} | {pct(phase.lag, 0.99):>7.1f} | "
            f"{max(phase.lag) * 1000:>7.1f} | {pct(acks, 0.5):>7.1f} | {pct(acks, 0.99):>7.1f} | "
            f"{max(acks) * 1000:>7.1f} | {len(acks):>4} | {pct(phase.db_waits, 0.5):>8.1f} | "
            f"{pct(phase.db_waits, 0.99):>8.1f} | {max(gcs) * 1000:>6.1f} | "
            f"{phase.seconds:>5.1f}s"
        )
    print(
        "(ms; lag: how late a 10 ms sleep wakes; ack: dispatch to the first interaction "
        "response; read: a\n`SELECT 1` through the bot's Database every 50 ms; gc max: longest "
        "garbage collection;\nper agent: model calls per agent per second, at most "
        f"{2 / sum(LATENCY):.1f} if the bot added no time)"
    )
    print("\nwrites (each one transaction on the writer's thread), during the window:")
    for phase in phases:
        writes = phase.writes or [0.0]
        print(
            f"  {phase.load:>3} agents: {len(phase.writes) / phase.seconds:6.0f} writes/s, "
            f"ask to done p50 {pct(writes, 0.5):.2f} / p99 {pct(writes, 0.99):.1f} / max "
            f"{max(writes) * 1000:.1f} ms; queued for the writer when a read arrives: median "
            f"{statistics.median(phase.queued or [0]):.0f}, max {max(phase.queued or [0])}"
        )
    print(
        "\ngarbage collections during the window (count, longest), the objects a full one "
        "walks, and\nthose frozen out of its way (GcTuning):"
    )
    for phase in phases:
        by_generation = [[p for g, p in phase.gc_pauses if g == gen] or [0.0] for gen in (0, 1, 2)]
        print(
            f"  {phase.load:>3} agents: "
            + ", ".join(
                f"gen {gen} {len(p) if p != [0.0] else 0} / {max(p) * 1000:.1f} ms"
                for gen, p in enumerate(by_generation)
            )
            + f"; {phase.objects:,} objects tracked, {phase.frozen:,} frozen"
        )
    print("\ntime to acknowledge by kind, p50 / max (ms):")
    for phase in phases:
        parts = [
            f"{kind} {pct(v, 0.5):.0f} / {max(v) * 1000:.0f} (n={len(v)})"
            for kind, v in phase.acks.items()
        ]
        print(f"  {phase.load:>3} agents: " + "; ".join(parts))
    print(
        "\nthe loop thread's own CPU time during the window, and the longest passes of the "
        "loop by it\n(hardly affected by other load: the longest pass is about the lag an "
        "idle machine would show):"
    )
    for phase in phases:
        per_call = phase.loop_cpu / phase.model_calls * 1000 if phase.model_calls else 0.0
        print(
            f"  {phase.load:>3} agents: busy {phase.loop_cpu / phase.seconds:5.1%} of the window, "
            f"{per_call:.2f} ms per model call; passes over 10 ms: {phase.passes_over_10ms}; "
            "longest:"
        )
        for spent, callbacks, place in phase.longest_passes:
            print(
                f"        {spent * 1000:6.1f} ms CPU in {callbacks} callbacks, the longest "
                f"ending at {place}"
            )
    print("\ngoals:")
    ok = True
    for phase in phases:
        for goal, met in goals(phase):
            ok = ok and met
            print(f"  {'PASS' if met else 'FAIL'}  {phase.load:>3} agents: {goal}")
    for phase in phases:
        if phase.stalls:
            print(
                f"\n{phase.load} agents: where the loop thread was when it had not run the "
                "monitor for 50 ms:"
            )
            for place, count in phase.stalls.most_common(8):
                print(f"  {count:>4} × {place}")
    return ok


def goals(phase: PhaseFigures) -> list[tuple[str, bool]]:
    """Each goal for one phase, described with what was measured, and whether it was met."""
    acks = [a for values in phase.acks.values() for a in values]
    stalls = [lag for lag in phase.lag if lag > STALL_GOAL]
    slow = [a for a in acks if a > ACK_GOAL]
    late = [a for a in acks if a > 3.0]
    writes = pct(phase.writes, 0.99) if phase.writes else 0.0
    gc_long = sum(1 for _, pause in phase.gc_pauses if pause > STALL_GOAL)
    return [
        (
            f"loop lag max under {STALL_GOAL * 1000:.0f} ms: max {max(phase.lag) * 1000:.1f} ms"
            + (f", {len(stalls)} of {len(phase.lag)} ticks over" if stalls else "")
            + (f" ({gc_long} garbage collections over)" if gc_long else ""),
            not stalls,
        ),
        (
            f"every acknowledgement under {ACK_GOAL * 1000:.0f} ms: max "
            f"{max(acks, default=0.0) * 1000:.1f} ms of {len(acks)}"
            + (f", {len(slow)} later" if slow else "")
            + (f", {len(late)} past Discord's 3 s" if late else "")
            + (f", {phase.unacked} never acknowledged" if phase.unacked else ""),
            phase.unacked == 0 and not slow,
        ),
        (
            f"writes p99 under {WRITE_P99_GOAL * 1000:.0f} ms: p99 {writes:.1f} ms of "
            f"{len(phase.writes)}",
            writes < WRITE_P99_GOAL * 1000,
        ),
    ]


def load_average() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f}, {five:.2f}, {fifteen:.2f} on {os.cpu_count()} cores"


async def main(seed: int) -> int:
    started = time.perf_counter()
    print(f"at the start: {load_average()}")
    acks = AckClock()
    acks.install()
    with tempfile.TemporaryDirectory() as tmp:
        config = Config.model_validate(
            {"data_dir": str(Path(tmp) / "data"), "anthropic": {"model": MODEL}}
        )
        clock = SimClock()
        server = ServerProcess(seed, Path(tmp) / "preparing").start()
        bot = make_bot(config, server, clock)  # type: ignore[arg-type]
        env = simcord.Env(bot, settle_timeout=30.0)
        clock.env = env
        await env.start()
        scene = Scene(env, server, acks)
        scene.calls = CallCounter(bot.app.model)
        scene.writes = WriteTimer(bot.app.db)
        scene.loop_cpu.install(asyncio.get_running_loop())
        setup = time.perf_counter()
        planners = 2 * CYCLES * len(LOADS)
        await scene.create_agents(max(LOADS), planners)
        await scene.prepare_plans(planners // 2)
        print(
            f"set up {max(LOADS)} load agents and {planners} planners in "
            f"{time.perf_counter() - setup:.1f} s; model latency {LATENCY[0] * 1000:.0f}–"
            f"{LATENCY[1] * 1000:.0f} ms per call (seed {seed}); {PHASE_SECONDS:.0f} s per phase"
        )
        # The bot's own GcTuning, started here rather than in its setup hook: SimCord parks
        # the timers of tasks the bot starts, so its refreeze every 10 s would never come.
        # Started once the agents exist, as after a restart of a bot that has them.
        tuning = GcTuning(idle=lambda: not scene.app.runtime.any_busy())
        tuning.after_startup()
        tuning.start()
        monitor = LagMonitor()
        monitor.start(scene.app.db)
        phases = []
        try:
            for load in LOADS:
                phase = await run_phase(scene, monitor, load)
                phases.append(phase)
                print(f"  phase with {load} agents done ({time.perf_counter() - started:.0f} s)")
        finally:
            await tuning.stop()
            await monitor.stop()
            for worker in scene.workers:
                worker.cancel()
            await asyncio.gather(*scene.workers, return_exceptions=True)
            await env.settle()
            await env.bot.close()
            await env.shutdown()
            server.stop()
            acks.uninstall()
            scene.loop_cpu.uninstall(asyncio.get_running_loop())
        env.raise_errors()
    ok = report(phases)
    print(f"\ntotal {time.perf_counter() - started:.1f} s; at the end: {load_average()}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 1)))
