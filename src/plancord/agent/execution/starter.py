"""Starting an approved revision on its own branch, for the planning service.

Why this exists: the planning service (``core``) decides approvals but knows no git; this is
its ``ExecutionStarter`` port. At approval it says why a workspace cannot take a branch
(the approval is then refused with that reason, and nothing executes) and starts the branch
from the reviewed tree, with every step pending and the first one current. The start is an
intent (``start_intents``): opened before git runs, noted before git changes a ref, and
completed by the approval's own transaction, which records the execution; an approval that
does not commit has its branch undone (``abandon``), here or after a restart.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from plancord.agent.execution.branch import BranchRecord
from plancord.agent.execution.host_git import BranchError
from plancord.agent.execution.lease import ProcessLease
from plancord.agent.execution.start_intents import Say, StartIntents
from plancord.agent.home import AgentHomes
from plancord.core.errors import ExecutionRefused
from plancord.core.execution import ExecutionRecord, StepIndex, StepOutcome
from plancord.core.intents import Recovered, StartIntent
from plancord.core.planning import Actor
from plancord.core.ports import Clock, ExecutionStart
from plancord.storage.executions import ExecutionStore

log = logging.getLogger(__name__)


class BranchStarter:
    """``core.ports.ExecutionStarter`` over git in each agent's sandbox."""

    def __init__(
        self,
        homes: AgentHomes,
        store: ExecutionStore,
        clock: Clock,
        lease: ProcessLease,
        say: Say | None = None,
    ) -> None:
        """``say`` tells an agent's channel how an interrupted approval was undone; every
        start is owned by ``lease``."""
        self._homes = homes
        self._store = store
        self._clock = clock
        self.intents = StartIntents(db=store.db, homes=homes, clock=clock, lease=lease, say=say)

    async def refusal(self, agent: str) -> str | None:
        """Why ``agent`` cannot start a plan now: an execution of its has not ended (it
        ends, and its result opens, first), the result of its last one still waits for a
        decision (Merge or Discard first), or its workspace cannot take a branch."""
        running = await self._store.running(agent)
        if running is not None:
            return (
                f"its plan `{running.plan_id}` v{running.revision} has not finished executing "
                f"(branch `{running.branch}`); its result opens when that execution ends"
            )
        latest = await self._store.latest(agent)
        if latest is not None and latest.result is None:
            return (
                f"the result of its last plan (branch `{latest.branch}`) has not opened yet "
                "(the database was busy); its card is shown once it opens"
            )
        waiting = await self._store.waiting_result(agent)
        if waiting is not None:
            return (
                f"the result of its last plan (branch `{waiting.branch}`) waits for a "
                "decision; Merge or Discard it on its completion card first"
            )
        return await self._homes.of(agent).branch.refusal()

    async def start(
        self, agent: str, plan_id: str, revision: int, steps: int, approver: Actor
    ) -> ExecutionStart:
        intent = await self.intents.open(agent, plan_id, revision, approver, steps)
        try:
            async with self.intents.lease.holding(agent):
                record, intent = await self._branch_for(intent)
        except BaseException:
            # Refused, or failed or killed part-way: an intent left open is an orphan.
            self.intents.finished(intent.id)
            raise
        outcomes = [StepOutcome.PENDING] * steps
        if outcomes:
            outcomes[0] = StepOutcome.CURRENT
        return ExecutionStart(
            intent.id,
            owner=intent.owner,
            record=ExecutionRecord(
                agent=agent,
                plan_id=plan_id,
                revision=revision,
                branch=record.branch,
                base=record.base,
                base_commit=record.base_commit,
                reviewed_commit=record.reviewed_commit,
                reviewed_index=record.reviewed_index,
                current_step=StepIndex(0),
                steps=tuple(outcomes),
                started_at=self._clock.now(),
            ),
        )

    async def _branch_for(self, intent: StartIntent) -> tuple[BranchRecord, StartIntent]:
        """Git makes the start's branch under its lease; refused (``ExecutionRefused``) with
        the branch undone when it cannot."""
        branch = self.intents.branch(intent)
        try:
            record = await branch.prepare(intent.plan_id, intent.revision)
        except BranchError as exc:
            await self.intents.undone(intent, str(exc))
            raise ExecutionRefused(f"Not approved: {exc}") from exc
        intent = await self.intents.note(intent, record)
        try:
            await branch.switch(record)
        except BranchError as exc:
            await self._undo(intent, record, str(exc))
            raise ExecutionRefused(f"Not approved: {exc}") from exc
        return record, intent

    async def amended(self, agent: str, plan_id: str, revision: int, steps: int) -> None:
        """The amendment's steps replace the old ones: the steps before the current one
        keep their outcomes (as far as the new plan has them), the current one stays
        current when it still exists (else the amendment's last step is), the rest wait."""
        record = await self._store.get(plan_id)
        if record is None or not record.running or steps == 0:
            return
        current = StepIndex(min(record.current_step, steps - 1))
        outcomes = [
            record.steps[i] if i < current and i < len(record.steps) else StepOutcome.PENDING
            for i in range(steps)
        ]
        outcomes[current] = StepOutcome.CURRENT
        await self._store.save_steps(plan_id, current, outcomes, revision=revision)

    async def abandon(self, start: ExecutionStart, why: str) -> None:
        """Undo ``start`` when its approval did not commit (an intent the approval's
        transaction completed means it did: git stays). Anything that fails here leaves the
        intent open, for the next click or the next start to undo."""
        try:
            intent = await self.intents.still_open(start.intent)
            if intent is not None:
                await self._undo(intent, branch_record(start.record), why)
        except Exception:
            log.warning("the branch of %s stays for recovery", start.record.plan_id, exc_info=True)

    def finished(self, start: ExecutionStart) -> None:
        self.intents.finished(start.intent)

    async def recover(
        self, serves: Callable[[str], Awaitable[bool]] | None = None
    ) -> list[Recovered]:
        """Undo every start a gone process left open (of the agents ``serves`` says are
        this process's), telling each channel; run before the plan cards are restored."""
        done: list[Recovered] = []
        for intent in await self.intents.orphans():
            if serves is not None and not await serves(intent.agent):
                continue
            try:
                recovered = await self.intents.recover(intent)
            except Exception:
                log.exception("the open start of %s could not be undone", intent.plan_id)
                continue
            if recovered is not None:
                done.append(recovered)
        return done

    async def _undo(self, intent: StartIntent, record: BranchRecord, why: str) -> None:
        """Take the branch back; the intent closed as undone once git is back as it was
        (left open when git fails: the recovery tries again)."""
        try:
            await self.intents.branch(intent).undo_start(record)
        except BranchError:
            log.warning("the start of %s could not be undone", intent.plan_id, exc_info=True)
            return
        await self.intents.undone(intent, why)


def branch_record(record: ExecutionRecord) -> BranchRecord:
    return BranchRecord(
        branch=record.branch,
        base=record.base,
        base_commit=record.base_commit,
        reviewed_commit=record.reviewed_commit,
        reviewed_index=record.reviewed_index,
        result_commit=record.result_commit,
    )
