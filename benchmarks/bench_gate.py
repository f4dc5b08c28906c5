"""What the gate adds to a tool call, next to what the tool itself costs.

Why: every tool call goes through ``AgentRuntime.dispatch``, which validates the input, loads
the agent and its planning state from the store, runs the read-only classifier for shell
commands, asks ``gate.decide`` and, while gathering, pushes the idle deadline back. That must
stay small next to the tools it guards, or plan mode would make agents slow.

Run with ``.venv/bin/python benchmarks/bench_gate.py [RUNS]``. For ``view`` of a 4 KB file and
``bash_execute`` of ``ls`` (plain while executing, in the Landlock sandbox while gathering) it
times ``dispatch`` and the tool's own ``run`` with the same context, alternately, and prints
the medians, the gate's share (dispatch minus run) and its ratio to the run. It then times
the gate's parts on their own: ``decide``, the read-only filter, the drift check against an
approved plan (and loading that plan while executing), the state loads, a plan budget's
check before each model call, and the deadline push. The machine's other load shows in
every figure; compare the columns of one run, not runs with each other.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import ANA, Bench, median_ms, open_bench, timed
from plancord.agent.call_log import CallLog
from plancord.agent.runtime import AgentSession
from plancord.agent.tools.base import ToolContext, ToolResult
from plancord.core.call_records import RecordBounds
from plancord.core.errors import ModelCallFailed
from plancord.core.execution import StepIndex
from plancord.core.gate import GateRequest, ToolKind, decide
from plancord.core.holding import hold_to_step
from plancord.core.permissions import PermissionProfile
from plancord.core.plan import Plan
from plancord.core.planning import EntrySource, Phase, PlanRef
from plancord.core.ports import ModelReply, ModelRequest
from plancord.core.settings import ShellSandbox
from plancord.core.shell.readonly import classify
from plancord.sandbox import landlock_abi
from plancord.storage.call_records import CallRecordStore

PLAN = {"summary": "Read the app", "steps": [{"description": "Read src/app.py"}]}
DRIFT_PLAN = {
    "summary": "Refactor the handlers",
    "steps": [
        {"description": "Split the handlers", "tools": ["str_replace"], "files": ["src/**/*.py"]},
        {"description": "Update the docs", "tools": ["create_file"], "files": ["docs/"]},
        {"description": "Commit", "tools": ["git_commit"]},
    ],
}


class NoModel:
    """The gate never calls the model."""

    async def create(self, request: ModelRequest) -> ModelReply:
        raise ModelCallFailed("the gate benchmark makes no model calls")


def context_for(bench: Bench, session: AgentSession, phase: Phase, sandbox: bool) -> Any:
    async def build() -> ToolContext:
        record = await bench.store.get_agent("ada")
        return ToolContext(
            agent=record,
            workspace=bench.runtime.workspace_of("ada"),
            phase=phase,
            planning=bench.service,
            store=bench.store,
            notifier=bench.channel,
            requester=session.requester,
            interactive=True,
            inner_wall=sandbox,
            shell=bench.runtime.settings.shell,
        )

    return build()


async def compare(
    bench: Bench, session: AgentSession, call: dict[str, Any], phase: Phase, runs: int
) -> tuple[float, float]:
    """Median seconds of ``dispatch`` and of the tool's own ``run``, measured alternately."""
    tool = bench.runtime.registry.get(call["name"])
    if tool is None:
        raise RuntimeError(f"no tool {call['name']}")
    args = tool.Input.model_validate(call["input"])
    settings = await bench.runtime.plan_settings.plan_mode_for("ada")
    sandbox = phase.is_planning and settings.shell_sandbox is ShellSandbox.REQUIRED
    sandbox = sandbox and tool.kind is ToolKind.MUTATING
    ctx = await context_for(bench, session, phase, sandbox)

    async def dispatch() -> ToolResult:
        return await bench.runtime.dispatch(session, call)

    async def run() -> ToolResult:
        return await tool.run(args, ctx)

    for action in (dispatch, run):
        result = await action()
        if result.is_error:
            raise RuntimeError(f"{call['name']} failed: {result.content}")
    via_dispatch, direct = [], []
    for _ in range(runs):
        via_dispatch.append(await timed(dispatch))
        direct.append(await timed(run))
    return median_ms(via_dispatch), median_ms(direct)


async def with_records(
    bench: Bench, session: AgentSession, call: dict[str, Any], runs: int
) -> tuple[float, float]:
    """Median milliseconds of ``dispatch`` without a decision record and with one (noted,
    written in the background in batches), measured alternately."""
    dispatcher = bench.runtime.dispatcher
    log = CallLog(CallRecordStore(bench.store.db), bench.clock, RecordBounds())
    without, with_log = [], []

    async def dispatch() -> ToolResult:
        return await bench.runtime.dispatch(session, call)

    for _ in range(runs):
        dispatcher.calls = None
        without.append(await timed(dispatch))
        dispatcher.calls = log
        with_log.append(await timed(dispatch))
    await log.flush()
    dispatcher.calls = None
    return median_ms(without), median_ms(with_log)


async def parts(bench: Bench, runs: int) -> dict[str, float]:
    """The gate's pieces on their own, in milliseconds (median)."""
    profile = PermissionProfile.from_stored({"preset": "open"})
    request = GateRequest(
        tool_name="bash_execute",
        tool_kind=ToolKind.MUTATING,
        action="tool:bash_execute:ls",
        phase=Phase.GATHERING,
        shell_verdict_allowed=True,
        shell_verdict_reason="ls is read-only",
    )
    pipeline = "git log --oneline -n 20 -- src/{n} | grep -i fix | head -5"
    workspace = bench.runtime.workspace_of("ada")
    plan = Plan.model_validate(DRIFT_PLAN)
    samples: dict[str, list[float]] = {
        "decide": [],
        "read-only filter('ls')": [],
        "read-only filter('ls dir_N')": [],
        "read-only filter(git log | grep | head)": [],
        "holding check (within the step)": [],
        "holding check (drift)": [],
    }
    for number in range(runs * 10):
        started = time.perf_counter()
        decide(request, profile)
        decided = time.perf_counter()
        classify("ls", workspace)
        first = time.perf_counter()
        classify(f"ls dir_{number}", workspace)
        short = time.perf_counter()
        classify(pipeline.format(n=number), workspace)
        done = time.perf_counter()
        hold_to_step(plan, StepIndex(0), "str_replace", (f"src/mod_{number}.py",))
        inside = time.perf_counter()
        hold_to_step(plan, StepIndex(0), "str_replace", (f"docs/page_{number}.md",))
        outside = time.perf_counter()
        samples["decide"].append(decided - started)
        samples["read-only filter('ls')"].append(first - decided)
        samples["read-only filter('ls dir_N')"].append(short - first)
        samples["read-only filter(git log | grep | head)"].append(done - short)
        samples["holding check (within the step)"].append(inside - done)
        samples["holding check (drift)"].append(outside - inside)

    approved = next(a for a in await bench.store.list_audit("ada") if a.action == "approved")
    assert approved.plan_id is not None
    assert approved.revision is not None
    plan_id, number = approved.plan_id, approved.revision

    async def approved_plan() -> None:
        assert await bench.store.get_revision(plan_id, number) is not None

    samples["approved plan load (executing)"] = [await timed(approved_plan) for _ in range(runs)]

    async def loads() -> None:
        await bench.store.get_agent("ada")
        await bench.store.load_state("ada")
        await bench.runtime.plan_settings.plan_mode_for("ada")

    samples["agent + state + settings loads"] = [await timed(loads) for _ in range(runs)]
    runtime = bench.runtime
    samples["budget check per model call (no budget)"] = [
        await timed(lambda: runtime.budget.stops("ada")) for _ in range(runs)
    ]
    record = await bench.store.get_agent("ada")
    budgeted = {**record.plan_mode_overrides, "budget_tokens": 10**12}
    await bench.store.update_agent(record.model_copy(update={"plan_mode_overrides": budgeted}))
    samples["budget check per model call (budget set)"] = [
        await timed(lambda: runtime.budget.stops("ada")) for _ in range(runs)
    ]
    await bench.store.update_agent(record)
    samples["idle-deadline push (gathering)"] = [
        await timed(lambda: bench.service.touch("ada")) for _ in range(runs)
    ]
    return {name: median_ms(values) for name, values in samples.items()}


async def main(runs: int) -> int:
    with tempfile.TemporaryDirectory(prefix="plancord-bench-gate-") as name:
        bench = await open_bench(Path(name), NoModel())
        try:
            workspace = bench.runtime.workspace_of("ada")
            (workspace / "src").mkdir()
            source = "".join(f"def handler_{n}(request):\n    return {n}\n" for n in range(110))
            (workspace / "src" / "app.py").write_text(source)
            session = bench.runtime.session("ada")
            session.requester = ANA
            view = {"id": "toolu_1", "name": "view", "input": {"path": "src/app.py"}}
            ls = {"id": "toolu_2", "name": "bash_execute", "input": {"command": "ls"}}
            rows: list[tuple[str, float, float]] = []

            await bench.service.enter("ada", source=EntrySource.USER, actor=ANA, task="bench")
            rows.append(
                ("view, gathering", *await compare(bench, session, view, Phase.GATHERING, runs))
            )
            if landlock_abi() > 0:
                label = "bash ls, gathering (sandboxed)"
                rows.append((label, *await compare(bench, session, ls, Phase.GATHERING, runs // 2)))
            revision = await bench.service.submit("ada", PLAN)
            ref = PlanRef(agent="ada", plan_id=revision.plan_id, revision=revision.revision)
            await bench.service.approve(ref, ANA)
            await bench.runtime.wait_idle("ada")
            rows.append(
                ("view, executing", *await compare(bench, session, view, Phase.EXECUTING, runs))
            )
            label = "bash ls, executing (no sandbox)"
            rows.append((label, *await compare(bench, session, ls, Phase.EXECUTING, runs // 2)))
            records = [
                ("view, executing", *await with_records(bench, session, view, runs)),
                ("bash ls, executing", *await with_records(bench, session, ls, runs // 2)),
            ]
            pieces = await parts(bench, runs)
        finally:
            await bench.close()
    print(f"Gate overhead per tool call, medians of {runs} (bash: {runs // 2}) alternating runs")
    print(f"{'call':<34}{'run':>9}{'dispatch':>10}{'gate':>9}{'gate/run':>10}")
    for label, dispatched, ran in rows:
        gate = dispatched - ran
        print(f"{label:<34}{ran:>7.2f}ms{dispatched:>8.2f}ms{gate:>7.2f}ms{gate / ran:>10.2f}")
    if landlock_abi() == 0:
        print("(no Landlock on this kernel: the sandboxed case was not measured)")
    print("The decision record per call: dispatch without it and with it (goal: <= 1.05x)")
    for label, without, with_log in records:
        ratio = with_log / without
        print(f"  {label:<32}{without:>7.2f}ms{with_log:>8.2f}ms{ratio:>8.3f}x")
    print("The gate's parts on their own (median)")
    for name, value in pieces.items():
        print(f"  {name:<42}{value * 1000:9.1f} us")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 200)))
