"""The process ``soak_crash.py --phase result`` kills: executions decided by Merge, Discard and
Roll back, with real git in the sandbox, over one database and one workspace, forever.

Why a separate process: SIGKILL is the only honest crash. This child does what the bot does
when a completion card is clicked, through the real ``ExecutionResults``: on start it
recovers every open intent (as the bot does before it connects), then, cycle after cycle, it
has the operator approve a two-step plan (the real ``PlanningService``, which starts the
execution branch through ``BranchStarter``), commits two steps, ends the execution and the
plan, opens its result, and decides it with a random choice of Merge, Discard or Roll back
(a roll back leaves the result waiting, decided again next). The workspace keeps an ignored file, so
Discard has a kept copy to put back.

With ``--approvals`` (``soak_crash.py --phase start``) the decisions are approvals instead:
each cycle brings the agent back to a plan waiting for a decision with nothing running (the
execution before ended, its result discarded), then the operator approves it through the
real ``PlanningService``, which starts the branch under an intent its transaction completes.
On start the child undoes the approvals a kill interrupted (``BranchStarter.recover``), as
the bot does before it connects.

Protocol: ``READY`` once recovered; ``DECIDING <action>`` just before a decision and
``DECIDED <seconds>`` after it, then the child waits for a line on stdin before going on (so
the parent kills only inside decisions, and checks while nothing runs); ``DONE`` when
``--cycles`` results are decided, then it exits 0. ``--recover-only`` recovers and exits.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import random
import sys
import time
from pathlib import Path

from plancord.agent.execution.lease import ProcessLease
from plancord.agent.execution.results import ExecutionResults
from plancord.agent.execution.starter import BranchStarter, branch_record
from plancord.agent.home import AgentHome, AgentHomes
from plancord.core.agents import AgentRecord
from plancord.core.errors import PlancordError
from plancord.core.execution import ExecutionRecord, StepNumber, StepOutcome
from plancord.core.planning import Actor, EntrySource, Phase, PlanRef
from plancord.core.ports import StaticSettings, SystemClock
from plancord.core.sandbox_policy import SandboxSettings
from plancord.core.service import PlanningService
from plancord.core.settings import PlanModeSettings
from plancord.storage.engines import open_database
from plancord.storage.executions import ExecutionStore
from plancord.storage.step_commits import StepCommitStore
from plancord.storage.store import AgentExists, SqlStore

AGENT = "ada"
ANA = Actor.user(42, "ana")
OPERATOR = Actor.operator()
PLAN = {
    "summary": "Write two files",
    "steps": [
        {"description": "Write the first file", "tools": ["create_file"], "files": ["*"]},
        {"description": "Write the second file", "tools": ["create_file"], "files": ["*"]},
    ],
}


def say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


async def next_line() -> None:
    await asyncio.to_thread(sys.stdin.readline)


async def decided_count(executions: ExecutionStore) -> int:
    rows = await executions.db.fetchall(
        "SELECT count(*) AS n FROM executions WHERE result IN ('merged', 'discarded')"
    )
    return int(rows[0]["n"])


async def approved(planning: PlanningService) -> str:
    """A two-step plan entered, submitted and approved by the operator: its plan id."""
    await planning.enter(AGENT, source=EntrySource.OPERATOR, actor=OPERATOR, task="soak")
    revision = await planning.submit(AGENT, PLAN)
    await planning.approve(
        PlanRef(agent=AGENT, plan_id=revision.plan_id, revision=revision.revision), OPERATOR
    )
    return revision.plan_id


async def new_result(
    planning: PlanningService,
    executions: ExecutionStore,
    commits: StepCommitStore,
    home: AgentHome,
) -> ExecutionRecord:
    """An execution of two steps, each writing a file, ended, its result waiting."""
    plan_id = await approved(planning)
    record = await executions.get(plan_id)
    if record is None:
        raise RuntimeError(f"the execution {plan_id} was not recorded")
    branch = home.branch
    workspace = home.workspace
    parent = record.reviewed_commit
    for step in (StepNumber(1), StepNumber(2)):
        (workspace / f"{plan_id}-{step}.txt").write_text(f"step {step} of {plan_id}\n")
        commit = await branch.commit_step(branch_record(record), f"step {step}", parent)
        await commits.committed(plan_id, step, commit)
        parent = commit or parent
    clock = SystemClock()
    await executions.end(plan_id, clock.now(), "completed", (StepOutcome.DONE,) * 2)
    await planning.complete(AGENT, OPERATOR, "soak")
    await executions.open_result(plan_id, ANA.id, ANA.name, parent)
    opened = await executions.get(plan_id)
    if opened is None:
        raise RuntimeError(f"the execution {plan_id} is gone")
    return opened


async def started_count(executions: ExecutionStore) -> int:
    rows = await executions.db.fetchall("SELECT count(*) AS n FROM executions")
    return int(rows[0]["n"])


async def waiting_for_approval(
    store: SqlStore,
    planning: PlanningService,
    results: ExecutionResults,
    executions: ExecutionStore,
) -> PlanRef:
    """The agent back to a plan waiting for a decision with nothing running: the execution
    before ended and its result discarded (the workspace as reviewed), a new plan submitted."""
    now = SystemClock().now()
    latest = await executions.latest(AGENT)
    if latest is not None and latest.ended_at is None:
        await executions.end(latest.plan_id, now, "completed", (StepOutcome.DONE,) * 2)
    if (await store.load_state(AGENT)).phase is Phase.EXECUTING:
        await planning.complete(AGENT, OPERATOR, "soak")
    latest = await executions.latest(AGENT)
    if latest is not None and latest.result is None:
        await executions.open_result(latest.plan_id, ANA.id, ANA.name, latest.reviewed_commit)
    waiting = await executions.waiting_result(AGENT)
    if waiting is not None:
        await results.discard(waiting.plan_id, waiting.result_version, ANA)
    state = await store.load_state(AGENT)
    if state.phase is Phase.INACTIVE:
        await planning.enter(AGENT, source=EntrySource.OPERATOR, actor=OPERATOR, task="soak")
        await planning.submit(AGENT, PLAN)
        state = await store.load_state(AGENT)
    return PlanRef(agent=AGENT, plan_id=state.plan_id or "", revision=state.revision)


async def approvals(
    args: argparse.Namespace,
    store: SqlStore,
    planning: PlanningService,
    results: ExecutionResults,
    executions: ExecutionStore,
) -> None:
    """Approve plans, one per cycle, until ``--cycles`` executions were started."""
    while await started_count(executions) < args.cycles:
        ref = await waiting_for_approval(store, planning, results, executions)
        say("DECIDING approve")
        started = time.monotonic()
        try:
            await planning.approve(ref, OPERATOR)
        except PlancordError as exc:
            say(f"REFUSED {' '.join(str(exc).split())[:300]}")
        say(f"DECIDED {time.monotonic() - started:.3f}")
        await next_line()


async def run(args: argparse.Namespace) -> int:
    data = Path(args.data)
    rng = random.Random(args.seed)
    db = await open_database(data / "soak.db")
    try:
        store = SqlStore(db)
        with contextlib.suppress(AgentExists):
            await store.create_agent(
                AgentRecord(name=AGENT, model="soak", created_at=SystemClock().now())
            )
        executions = ExecutionStore(db)
        commits = StepCommitStore(db)
        sandbox = SandboxSettings()
        clock = SystemClock()
        agents = data / "agents"
        homes = AgentHomes(agents, sandbox)
        lease = ProcessLease(db, seconds=args.lease_seconds)
        results = ExecutionResults(
            executions=executions,
            store=store,
            plan_settings=StaticSettings(PlanModeSettings()),
            members=None,
            clock=clock,
            homes=homes,
            lease=lease,
        )
        starter = BranchStarter(homes, executions, clock, lease)
        settings = StaticSettings(PlanModeSettings())
        planning = PlanningService(store, clock, settings, executions=starter)
        try:
            await recover_all(starter, results, executions, lease)
            say("READY")
            if args.recover_only:
                return 0
            if args.approvals:
                await approvals(args, store, planning, results, executions)
            while not args.approvals and await decided_count(executions) < args.cycles:
                record = await executions.waiting_result(AGENT)
                if record is None:
                    home = homes.of(AGENT)
                    record = await new_result(planning, executions, commits, home)
                kept = await commits.commits(record.plan_id)
                actions = ["merge", "discard"] + (["roll back"] if kept else [])
                action = rng.choice(actions)
                say(f"DECIDING {action.replace(' ', '-')}")
                started = time.monotonic()
                try:
                    if action == "merge":
                        await results.merge(record.plan_id, record.result_version, ANA)
                    elif action == "discard":
                        await results.discard(record.plan_id, record.result_version, ANA)
                    else:
                        step = rng.choice(kept).step
                        await results.roll_back(
                            record.plan_id, record.result_version, StepNumber(step), ANA
                        )
                except PlancordError as exc:
                    say(f"REFUSED {' '.join(str(exc).split())[:300]}")
                say(f"DECIDED {time.monotonic() - started:.3f}")
                await next_line()
            say("DONE")
            return 0
        finally:
            await results.close()
            await lease.close()
    finally:
        await db.close()


async def recover_all(
    starter: BranchStarter,
    results: ExecutionResults,
    executions: ExecutionStore,
    lease: ProcessLease,
) -> None:
    """Undo or finish what a killed child left open: its lease runs out first (a killed
    process gives nothing up), so the passes repeat until no intent is open."""
    while True:
        await starter.recover()
        await results.recover()
        if not await open_intents(executions):
            return
        await asyncio.sleep(lease.seconds / 4)


async def open_intents(executions: ExecutionStore) -> int:
    row = await executions.db.fetchone(
        "SELECT (SELECT count(*) FROM result_intents WHERE state = 'open') + "
        "(SELECT count(*) FROM start_intents WHERE state = 'open')"
    )
    return int(row[0]) if row else 0


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", required=True)
    parser.add_argument("--cycles", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--recover-only", action="store_true")
    parser.add_argument(
        "--lease-seconds", type=float, default=2.0, help="how long a killed child's lease lasts"
    )
    parser.add_argument("--approvals", action="store_true", help="soak approvals instead")
    return parser.parse_args(argv)


if __name__ == "__main__":
    sys.exit(asyncio.run(run(parse(sys.argv[1:]))))
