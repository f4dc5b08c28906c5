"""Starting an approved revision on its own branch, for the planning service.

Why this exists: the planning service (``core``) decides approvals but knows no git; this is
its ``ExecutionStarter`` port. At approval it says why a workspace cannot take a branch
(the approval is then refused with that reason, and nothing executes), starts the branch
from the reviewed tree (``ExecutionBranch.start``) and records the execution in the store,
with every step pending and the first one current.
"""

from __future__ import annotations

from plancord.agent.execution.branch import BranchError, BranchRecord
from plancord.agent.home import AgentHomes
from plancord.core.errors import ExecutionRefused
from plancord.core.execution import ExecutionRecord, StepIndex, StepOutcome
from plancord.core.ports import Clock
from plancord.storage.executions import ExecutionStore


class BranchStarter:
    """``core.ports.ExecutionStarter`` over git in each agent's sandbox."""

    def __init__(self, homes: AgentHomes, store: ExecutionStore, clock: Clock) -> None:
        self._homes = homes
        self._store = store
        self._clock = clock

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
        waiting = await self._store.waiting_result(agent)
        if waiting is not None:
            return (
                f"the result of its last plan (branch `{waiting.branch}`) waits for a "
                "decision; Merge or Discard it on its completion card first"
            )
        return await self._homes.of(agent).branch.refusal()

    async def start(self, agent: str, plan_id: str, revision: int, steps: int) -> None:
        try:
            branch = await self._homes.of(agent).branch.start(plan_id, revision)
        except BranchError as exc:
            raise ExecutionRefused(f"Not approved: {exc}") from exc
        outcomes = [StepOutcome.PENDING] * steps
        if outcomes:
            outcomes[0] = StepOutcome.CURRENT
        await self._store.begin(
            ExecutionRecord(
                agent=agent,
                plan_id=plan_id,
                revision=revision,
                branch=branch.branch,
                base=branch.base,
                base_commit=branch.base_commit,
                reviewed_commit=branch.reviewed_commit,
                reviewed_index=branch.reviewed_index,
                current_step=StepIndex(0),
                steps=tuple(outcomes),
                started_at=self._clock.now(),
            )
        )

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

    async def abandon(self, agent: str, plan_id: str) -> None:
        record = await self._store.get(plan_id)
        if record is None:
            return
        await self._homes.of(agent).branch.discard(branch_record(record))
        await self._store.forget(plan_id)


def branch_record(record: ExecutionRecord) -> BranchRecord:
    return BranchRecord(
        branch=record.branch,
        base=record.base,
        base_commit=record.base_commit,
        reviewed_commit=record.reviewed_commit,
        reviewed_index=record.reviewed_index,
        result_commit=record.result_commit,
    )
