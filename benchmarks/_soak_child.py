"""The process ``soak_crash.py`` kills: scripted plan cycles over one database, forever.

Why a separate process: SIGKILL is the only honest crash. This child does what the bot does
to the database, through the real ``PlanningService`` and ``ConversationStore``: enter,
submit (sometimes an invalid plan), approve through two connections racing each other (and
sometimes against the deadline scheduler), ask for changes, update steps, complete, and let
sessions time out by moving a clock it controls. After a restart it carries on from whatever
the database holds, as the bot would.

``--db`` is a SQLite file or a ``postgresql://`` URL. With ``--prefix`` several children share
one PostgreSQL, each with agents of its own (as processes serving different shards do) and a
deadline scheduler that, like the bot's, fires any agent's overdue deadline: a move another
process made first (it timed the plan out, say) is a lost race, counted, never a crash.

Protocol on stdout, one line each, flushed: ``READY`` once started; ``ACK <plan_id> <revision>
<sha256>`` after an approval committed (the parent treats it as a promise that the approval
is durable); ``DONE <cycles>`` when ``--cycles`` plans have been completed, then it exits 0.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from plancord.core.agents import AgentRecord
from plancord.core.errors import (
    AlreadyDecided,
    InvalidTransition,
    PlanValidationError,
    StalePlan,
    VersionConflict,
)
from plancord.core.planning import (
    Actor,
    EntrySource,
    Phase,
    PlanRef,
    StepStatus,
)
from plancord.core.ports import StaticSettings
from plancord.core.service import PlanningService
from plancord.core.settings import PlanModeSettings
from plancord.storage.backend import Backend
from plancord.storage.conversations import ConversationStore
from plancord.storage.engines import open_database
from plancord.storage.store import AgentExists, SqlStore

#: What another process's move looks like from here: the state moved on under us.
PRE_EMPTED = (AlreadyDecided, VersionConflict, InvalidTransition, StalePlan)
ANA = Actor.user(42, "ana")
ROOT = Actor.user(1, "root", is_admin=True)
START = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
SETTINGS = PlanModeSettings(approval_timeout=timedelta(minutes=30))


class ChildClock:
    """Moves forward 10 ms per reading; jumps when the child wants a deadline to pass.

    It starts after the newest audit row, so time never runs backwards across restarts.
    """

    def __init__(self, start: datetime) -> None:
        self.current = start

    def now(self) -> datetime:
        self.current += timedelta(milliseconds=10)
        return self.current

    def jump(self, delta: timedelta) -> None:
        self.current += delta


def say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def plan_for(rng: random.Random, cycle: int) -> dict[str, Any]:
    steps = [
        {"description": f"Step {n} of cycle {cycle}: edit module_{n}.py", "risk": "low"}
        for n in range(1, rng.randint(1, 4) + 1)
    ]
    plan: dict[str, Any] = {"summary": f"Cycle {cycle}: refactor", "steps": steps}
    if rng.random() < 0.1:
        plan["steps"] = []
    return plan


class Child:
    def __init__(
        self,
        rng: random.Random,
        first: PlanningService,
        second: PlanningService,
        conversations: ConversationStore,
        clock: ChildClock,
    ) -> None:
        self.rng = rng
        self.first = first
        self.second = second
        self.conversations = conversations
        self.clock = clock
        self.pre_empted = 0

    async def last_message(self, agent: str) -> dict[str, Any] | None:
        row = await self.conversations.db.fetchone(
            "SELECT role, content FROM messages WHERE agent = ? ORDER BY seq DESC LIMIT 1",
            (agent,),
        )
        return {"role": row["role"], "content": json.loads(row["content"])} if row else None

    def service(self) -> PlanningService:
        return self.first if self.rng.random() < 0.5 else self.second

    async def converse(self, agent: str, text: str) -> None:
        """Record a host line, merged into a trailing user turn, then maybe a reply."""
        last = await self.last_message(agent)
        block = {"type": "text", "text": text}
        if last is not None and last["role"] == "user":
            merged = {"role": "user", "content": [*last["content"], block]}
            await self.conversations.replace_last(agent, merged)
        else:
            await self.conversations.append(
                agent, {"role": "user", "content": [block]}, self.clock.now()
            )
        if self.rng.random() < 0.6:
            reply = {"role": "assistant", "content": [{"type": "text", "text": f"ok: {text}"}]}
            await self.conversations.append(agent, reply, self.clock.now())

    async def step(self, agent: str) -> None:
        """One move for ``agent``, chosen from the phase the database holds now."""
        state = await self.first.store.load_state(agent)
        rng = self.rng
        if state.phase is Phase.INACTIVE:
            await self.service().enter(agent, source=EntrySource.USER, actor=ANA, task="refactor")
            await self.converse(agent, "entered plan mode")
        elif state.phase is Phase.GATHERING:
            if rng.random() < 0.05:
                await self.time_out(state.idle_deadline)
                await self.converse(agent, "planning timed out")
                return
            try:
                revision = await self.service().submit(agent, plan_for(rng, state.version))
            except PlanValidationError:
                await self.converse(agent, "invalid plan refused")
                return
            await self.converse(agent, f"submitted v{revision.revision}")
        elif state.phase is Phase.SUBMITTED:
            ref = PlanRef(
                agent=agent,
                plan_id=state.plan_id or "",
                revision=state.revision,
                sha256=state.plan_sha,
            )
            roll = rng.random()
            if roll < 0.05:
                await self.time_out(state.approval_deadline)
                await self.converse(agent, "approval timed out")
            elif roll < 0.15:
                await self.service().request_changes(ref, ANA, "smaller steps please")
                await self.converse(agent, "changes requested")
            elif roll < 0.25:
                await self.approve_against_the_scheduler(ref, state.approval_deadline)
            else:
                await self.approve_race(ref)
        elif state.phase is Phase.EXECUTING:
            for number, progress in enumerate(state.steps, start=1):
                if progress.status is StepStatus.PENDING:
                    await self.service().update_step(agent, number, StepStatus.IN_PROGRESS)
                    await self.converse(agent, f"step {number} started")
                    return
                if progress.status is StepStatus.IN_PROGRESS:
                    await self.service().update_step(agent, number, StepStatus.DONE, "done")
                    await self.converse(agent, f"step {number} done")
                    return
            await self.service().complete(agent, Actor.agent(agent), "all steps done")
            await self.converse(agent, "plan complete")

    async def approve_race(self, ref: PlanRef) -> None:
        """Two approvers click at once on two connections: one wins, the other is told so."""
        results = await asyncio.gather(
            self.first.approve(ref, ANA),
            self.second.approve(ref, ROOT),
            return_exceptions=True,
        )
        won = [r for r in results if not isinstance(r, BaseException)]
        lost = [r for r in results if isinstance(r, BaseException)]
        for error in lost:
            if not isinstance(error, AlreadyDecided | VersionConflict):
                raise error
        if len(won) > 1:
            raise RuntimeError(f"{len(won)} approvals of one revision succeeded")
        if not won:  # another process decided it first (its scheduler timed it out)
            raise lost[0]
        self.acknowledge(ref)
        await self.converse(ref.agent, f"v{ref.revision} approved")

    async def approve_against_the_scheduler(self, ref: PlanRef, deadline: datetime | None) -> None:
        """The approval deadline passes while a human clicks Approve: exactly one wins."""
        if deadline is not None:
            self.clock.current = max(self.clock.current, deadline)
        results = await asyncio.gather(
            self.first.approve(ref, ANA), self.second.fire_due(), return_exceptions=True
        )
        approval, fired = results
        if isinstance(fired, BaseException):
            raise fired
        if isinstance(approval, BaseException):
            if not isinstance(approval, AlreadyDecided):
                raise approval
            await self.converse(ref.agent, "timed out before the approval")
            return
        if any(change.after.agent == ref.agent for change in fired):
            raise RuntimeError("the plan was both approved and timed out")
        self.acknowledge(ref)
        await self.converse(ref.agent, f"v{ref.revision} approved at the deadline")

    def acknowledge(self, ref: PlanRef) -> None:
        say(f"ACK {ref.plan_id} {ref.revision} {ref.sha256}")

    async def time_out(self, deadline: datetime | None) -> None:
        if deadline is not None:
            self.clock.current = max(self.clock.current, deadline)
        await self.service().fire_due()


async def completed(db: Backend, prefix: str) -> int:
    row = await db.fetchone(
        "SELECT count(*) FROM audit_log WHERE action = 'completed' AND agent LIKE ?",
        (f"{prefix}agent-%",),
    )
    return int(row[0]) if row else 0


async def main(args: argparse.Namespace) -> int:
    rng = random.Random(args.seed)
    target = args.db if args.db.startswith("postgresql://") else Path(args.db)
    first_db = await open_database(target)
    second_db = await open_database(target, migrate=False)
    try:
        store = SqlStore(first_db)
        names = [f"{args.prefix}agent-{n}" for n in range(args.agents)]
        channels = 100 + 1000 * args.channel_block
        for number, name in enumerate(names):
            record = AgentRecord(
                name=name, model="m", channel_id=channels + number, created_at=START
            )
            with contextlib.suppress(AgentExists):
                await store.create_agent(record)
        newest = await first_db.fetchone("SELECT max(at) FROM audit_log")
        clock = ChildClock(datetime.fromisoformat(newest[0]) if newest and newest[0] else START)
        settings = StaticSettings(SETTINGS)
        first = PlanningService(store, clock, settings)
        second = PlanningService(SqlStore(second_db), clock, settings)
        child = Child(rng, first, second, ConversationStore(first_db), clock)
        say("READY")
        await first.fire_due()
        while (done := await completed(first_db, args.prefix)) < args.cycles:
            try:
                await child.step(rng.choice(names))
            except PRE_EMPTED:
                if not args.prefix:
                    raise  # alone on its database, nobody else can move first
                child.pre_empted += 1
            if rng.random() < 0.3:
                await asyncio.sleep(rng.random() * 0.003)
        say(f"DONE {done} pre-empted {child.pre_empted}")
    finally:
        await second_db.close()
        await first_db.close()
    return 0


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--db", required=True)
    parser.add_argument("--cycles", type=int, required=True)
    parser.add_argument("--agents", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--prefix", default="", help="agent names' prefix, one per process")
    parser.add_argument("--channel-block", type=int, default=0, help="keeps channel ids apart")
    return parser.parse_args(argv)


if __name__ == "__main__":
    sys.exit(asyncio.run(main(parse(sys.argv[1:]))))
