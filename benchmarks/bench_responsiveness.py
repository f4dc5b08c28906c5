"""Whether the bot stays responsive while many agents run their tool loops at once.

Why: every agent, every Discord interaction and every database round trip share one event
loop. One synchronous call on it (file I/O, a git subprocess waited on synchronously, SQLite
outside its worker thread) delays everything else, and Discord fails an interaction that is
not acknowledged within 3 s. The goals: the loop never stalls for more than 50 ms, and every
interaction is acknowledged within 100 ms of its dispatch.

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
``Database`` every 50 ms with the number of tasks already queued on its lock, the lock's hold
times, garbage-collection pauses, and the cost of building the tool schemas.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import os
import random
import statistics
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

# isort: split

from tests.discord_bot.conftest import SimClock, make_bot
from tests.fakes.anthropic_server import FakeAnthropicServer, ToolCall, text_turn, tool_turn

from plancord.config import Config
from plancord.core.planning import Actor, Phase

MODEL = "claude-fake-test-model"
LATENCY = (0.05, 0.5)
LOADS = (0, 50, 200)
PHASE_SECONDS = 4.0
STATUS_PER_CYCLE = 6
CYCLES = 2
TICK = 0.010
STALL_GOAL = 0.050
ACK_GOAL = 0.100
PLANNER_TAG = "PLANNER"
PLAN = {
    "summary": "Read the workspace",
    "steps": [{"description": "List the files", "tools": ["glob"], "risk": "low"}],
}
SRC = str(REPO_ROOT / "src")


def pct(samples: list[float], fraction: float) -> float:
    if not samples:
        return float("nan")
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, max(0, round(fraction * len(ordered)) - 1))] * 1000


# -- the model -----------------------------------------------------------------------------


class Model:
    """The script every agent plays, with a random latency per call.

    A load agent's turn: create a file, glob, grep, ``git log``, then a closing text. A
    planner (its system prompt carries ``PLANNER``) explores and submits ``PLAN`` while
    ``preparing`` (before the load starts, without latency); afterwards it answers each turn
    with one text, so a measured ``/plan start`` or Approve costs the bot one model call.
    """

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.preparing = True
        self.calls = 0
        self.server: FakeAnthropicServer | None = None

    @staticmethod
    def _since_human(messages: list[dict[str, Any]]) -> int:
        """Assistant turns since the newest user turn that is not only tool results."""
        count = 0
        for message in reversed(messages):
            content = message["content"]
            if message["role"] == "assistant":
                count += 1
                continue
            blocks = content if isinstance(content, list) else [{"type": "text"}]
            if not any(b.get("type") == "tool_result" for b in blocks):
                return count
        return count

    async def __call__(self, body: dict[str, Any]) -> Any:
        if self.server is not None:
            self.server.requests.clear()
            self.server.responses.clear()
            self.server.usages.clear()
        step = self._since_human(body["messages"])
        if PLANNER_TAG in json.dumps(body.get("system", "")):
            if self.preparing:
                if step == 0:
                    return tool_turn(ToolCall("glob", {"pattern": "*"}))
                return tool_turn(ToolCall("submit_plan", {"plan": PLAN}))
            await asyncio.sleep(self.rng.uniform(*LATENCY))
            return text_turn("On it.")
        self.calls += 1
        await asyncio.sleep(self.rng.uniform(*LATENCY))
        turn = len(body["messages"])
        return [
            lambda: tool_turn(
                ToolCall("create_file", {"path": f"notes/n{turn}.md", "content": "load\n" * 40})
            ),
            lambda: tool_turn(ToolCall("glob", {"pattern": "**/*.md"})),
            lambda: tool_turn(ToolCall("grep", {"pattern": "load"})),
            lambda: tool_turn(ToolCall("bash_execute", {"command": "git log --oneline -3"})),
            lambda: text_turn("Checked the notes."),
        ][min(step, 4)]()


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
        """A trivial read every 50 ms: how long the store makes anyone wait for a read."""
        while True:
            await asyncio.sleep(0.05)
            queued = len(db.lock._waiters or ())
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


class TimedLock(asyncio.Lock):
    """``Database.lock`` (every read and every transaction takes it) with its hold times."""

    def __init__(self) -> None:
        super().__init__()
        self.holds: list[float] = []
        self.recording = False
        self._since = 0.0

    async def acquire(self) -> bool:
        await super().acquire()
        self._since = time.perf_counter()
        return True

    def release(self) -> None:
        if self.recording:
            self.holds.append(time.perf_counter() - self._since)
        super().release()


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
    lock_holds: list[float] = field(default_factory=list)
    objects: int = 0
    queued: list[int] = field(default_factory=list)
    gc_pauses: list[tuple[int, float]] = field(default_factory=list)
    model_calls: int = 0
    stalls: Counter[str] = field(default_factory=Counter)


class Scene:
    def __init__(self, env: Any, model: Model, acks: AckClock) -> None:
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
        self.model.preparing = False

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


class ServerThread:
    """The fake Messages API on its own thread and event loop, as the real API is elsewhere:
    its request handling and latency must not be charged to the bot's loop."""

    def __init__(self, model: Model) -> None:
        self.model = model
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.server: FakeAnthropicServer | None = None

    def start(self) -> FakeAnthropicServer:
        self.thread.start()
        started = asyncio.run_coroutine_threadsafe(
            FakeAnthropicServer(self.model).start(), self.loop
        )
        self.server = self.model.server = started.result(10)
        return self.server

    def stop(self) -> None:
        if self.server is not None:
            asyncio.run_coroutine_threadsafe(self.server.stop(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()


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
    lock = scene.app.db.lock
    lock.holds = []
    lock.recording = monitor.recording = True
    calls_before = scene.model.calls
    window = time.perf_counter()
    await scene.interactions(phase, window + PHASE_SECONDS, CYCLES)
    lock.recording = monitor.recording = False
    phase.lock_holds = lock.holds
    phase.objects = len(gc.get_objects())
    phase.seconds = time.perf_counter() - window
    phase.lag = monitor.samples
    phase.stalls = monitor.stalls
    phase.db_waits = monitor.db_waits
    phase.queued = monitor.queued
    phase.gc_pauses = monitor.gc_pauses
    phase.model_calls = scene.model.calls - calls_before
    stop.set()
    return phase


# -- report --------------------------------------------------------------------------------


def report(phases: list[PhaseFigures], schema_seconds: float) -> bool:
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
    print(
        f"\nbuilding the tool schemas ({schema_seconds * 1000:.1f} ms for every model call) takes "
        "this share of the loop's time:"
    )
    for phase in phases:
        share = phase.model_calls / phase.seconds * schema_seconds
        print(f"  {phase.load:>3} agents: {share:.0%}")
    print("\nDatabase.lock (taken by every read and every transaction), during the window:")
    for phase in phases:
        holds = phase.lock_holds or [0.0]
        print(
            f"  {phase.load:>3} agents: {len(phase.lock_holds) / phase.seconds:6.0f} holds/s, "
            f"held {sum(holds) / phase.seconds:4.0%} of the time, hold p50 {pct(holds, 0.5):.2f} "
            f"/ p99 {pct(holds, 0.99):.1f} / max {max(holds) * 1000:.1f} ms; waiting for it "
            f"when a read arrives: median {statistics.median(phase.queued or [0]):.0f}, "
            f"max {max(phase.queued or [0])}"
        )
    print("\ngarbage collections during the window (count, longest) and objects the gc tracks:")
    for phase in phases:
        by_generation = [[p for g, p in phase.gc_pauses if g == gen] or [0.0] for gen in (0, 1, 2)]
        print(
            f"  {phase.load:>3} agents: "
            + ", ".join(
                f"gen {gen} {len(p) if p != [0.0] else 0} / {max(p) * 1000:.1f} ms"
                for gen, p in enumerate(by_generation)
            )
            + f"; {phase.objects:,} objects"
        )
    print("\ntime to acknowledge by kind, p50 / max (ms):")
    for phase in phases:
        parts = [
            f"{kind} {pct(v, 0.5):.0f} / {max(v) * 1000:.0f} (n={len(v)})"
            for kind, v in phase.acks.items()
        ]
        print(f"  {phase.load:>3} agents: " + "; ".join(parts))
    print()
    ok = True
    for phase in phases:
        acks = [a for values in phase.acks.values() for a in values]
        stalls = [lag for lag in phase.lag if lag > STALL_GOAL]
        slow = [a for a in acks if a > ACK_GOAL]
        late = [a for a in acks if a > 3.0]
        lag_ok = not stalls
        ack_ok = phase.unacked == 0 and not slow
        ok = ok and lag_ok and ack_ok
        gc_long = sum(1 for _, pause in phase.gc_pauses if pause > STALL_GOAL)
        print(
            f"{phase.load:>3} agents: loop never stalls over 50 ms: "
            + ("met" if lag_ok else f"NOT met ({len(stalls)} of {len(phase.lag)} ticks)")
            + "; every interaction acknowledged within 100 ms: "
            + ("met" if ack_ok else f"NOT met ({len(slow)} of {len(acks)} later)")
            + (f"; {len(late)} past Discord's 3 s" if late else "")
            + (f"; {phase.unacked} never acknowledged" if phase.unacked else "")
            + (f"; {gc_long} collections over 50 ms" if gc_long else "")
        )
    for phase in phases:
        if phase.stalls:
            print(
                f"\n{phase.load} agents: where the loop thread was when it had not run the "
                "monitor for 50 ms:"
            )
            for place, count in phase.stalls.most_common(8):
                print(f"  {count:>4} × {place}")
    return ok


async def main(seed: int) -> int:
    started = time.perf_counter()
    model = Model(seed)
    server_thread = ServerThread(model)
    server = server_thread.start()
    acks = AckClock()
    acks.install()
    with tempfile.TemporaryDirectory() as tmp:
        config = Config.model_validate(
            {"data_dir": str(Path(tmp) / "data"), "anthropic": {"model": MODEL}}
        )
        clock = SimClock()
        env = simcord.Env(make_bot(config, server, clock), settle_timeout=30.0)
        clock.env = env
        await env.start()
        scene = Scene(env, model, acks)
        env.bot.app.db.lock = TimedLock()
        setup = time.perf_counter()
        planners = 2 * CYCLES * len(LOADS)
        await scene.create_agents(max(LOADS), planners)
        await scene.prepare_plans(planners // 2)
        print(
            f"set up {max(LOADS)} load agents and {planners} planners in "
            f"{time.perf_counter() - setup:.1f} s; model latency {LATENCY[0] * 1000:.0f}–"
            f"{LATENCY[1] * 1000:.0f} ms per call (seed {seed}); {PHASE_SECONDS:.0f} s per phase"
        )
        registry = scene.app.runtime.registry
        runs = []
        for _ in range(20):
            began = time.perf_counter()
            registry.schemas()
            runs.append(time.perf_counter() - began)
        schema_seconds = pct(runs, 0.5) / 1000
        print(
            f"building the tool schemas, done for every model call: median "
            f"{schema_seconds * 1000:.1f} ms ({len(registry.schemas())} tools)"
        )
        monitor = LagMonitor()
        monitor.start(scene.app.db)
        phases = []
        try:
            for load in LOADS:
                phase = await run_phase(scene, monitor, load)
                phases.append(phase)
                print(f"  phase with {load} agents done ({time.perf_counter() - started:.0f} s)")
        finally:
            await monitor.stop()
            for worker in scene.workers:
                worker.cancel()
            await asyncio.gather(*scene.workers, return_exceptions=True)
            await env.settle()
            await env.bot.close()
            await env.shutdown()
            server_thread.stop()
            acks.uninstall()
        env.raise_errors()
    ok = report(phases, schema_seconds)
    print(f"\ntotal {time.perf_counter() - started:.1f} s")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 1)))
