"""The host keeps the current step: it moves the plan on, commits each step on the branch,
asks a 🔴 step's checkpoint before the step's first call, and ends the execution record
however execution ends.

Why this exists: the agent's ``update_plan_step`` is a report, not a fact. Here the host's
own record (``core.execution.ExecutionRecord``) is what moves: when a call only a later step
covers arrives, the current step is committed (host-authored, hooks off: one commit on the
previous step's, with the agent's own ``git_commit`` message when it gave one, else the
step's description; none when the step changed nothing) and its id recorded
(``storage.step_commits``), the steps passed over are recorded skipped, and the later step
becomes current. When
execution ends (the agent completes, someone cancels, a checkpoint is stopped or expires,
the budget is spent, an amendment is rejected), the listener half of this class commits
what the current step did and records how every step ended. Should the database refuse that
end (another process holds it locked), the end is owed (``agent.owed``, kind
``end-execution``) and done, with the result's opening, when the database answers again
(``ExecutionEndings``): the agent is late to be free again, never wedged until a restart.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from plancord.agent.execution.host_git import BranchError
from plancord.agent.execution.starter import branch_record
from plancord.agent.home import AgentHomes
from plancord.agent.owed import OwedDuties
from plancord.core.authority import Answer, Subject
from plancord.core.errors import CardNotShown, PlancordError, StorageError
from plancord.core.execution import (
    ExecutionEvent,
    ExecutionEventKind,
    ExecutionRecord,
    StepIndex,
    StepOutcome,
    step_number,
)
from plancord.core.plan import Plan
from plancord.core.planning import ActorKind, AuditAction, Phase, PlanningState
from plancord.core.ports import Clock, Notifier, PermissionRequest, PlanningChange
from plancord.storage.executions import ExecutionStore
from plancord.storage.step_commits import StepCommitStore

log = logging.getLogger(__name__)

END_EXECUTION = "end-execution"
"""The owed duty of ending an execution plan mode no longer holds (its subject: the plan id;
its detail: why, whether it finished, and who asked for the plan)."""


class StepKeeper:
    """Moves, commits and ends the host's steps of each agent's running execution."""

    def __init__(
        self,
        *,
        executions: ExecutionStore,
        notifier: Notifier | None,
        clock: Clock,
        homes: AgentHomes,
        owed: OwedDuties | None = None,
    ) -> None:
        """``owed``: where an end the database refused is owed (without it the failure is
        raised, and the next start ends the execution)."""
        self._owed = owed
        self._executions = executions
        self._commits = StepCommitStore(executions.db)
        self._notifier = notifier
        self._clock = clock
        self._homes = homes

    async def checkpoint(
        self,
        record: ExecutionRecord,
        plan: Plan,
        index: StepIndex,
        *,
        requested_by: str | None,
        timeout_seconds: float,
        tool: str,
        action: str,
    ) -> Answer:
        """Ask an approver to Continue into the 🔴 step at ``index`` before ``action``
        runs (or is kept): allowed (Continue), denied (Stop) or timed out. While the card
        waits the record says so, so a restart in between ends execution. A card Discord
        would not show raises ``CardNotShown`` (recorded as a stop with its reason)."""
        if self._notifier is None:
            raise CardNotShown("checkpoint", "no channel is reachable from this process")
        await self._executions.set_waiting_checkpoint(record.plan_id, index)
        request = PermissionRequest(
            agent=record.agent,
            action=(
                f"checkpoint: start 🔴 step {step_number(index)}: "
                f"{plan.steps[index].description[:300]}\nfirst call: {action[:300]}"
            ),
            tool_name=tool,
            summary=f"start high-risk step {step_number(index)}",
            requested_by=requested_by,
            timeout_seconds=timeout_seconds,
            labels=("Continue", "Stop"),
            subject=Subject.CHECKPOINT,
        )
        try:
            answer = await self._notifier.ask_permission(request)
        except CardNotShown as exc:
            # Not an answer: the card never reached anyone.
            await self._executions.set_waiting_checkpoint(record.plan_id, None)
            await self._checkpoint_event(record, index, tool, action, Answer.NOT_SHOWN, str(exc))
            raise
        # Cleared only once answered: a turn cut short by a restart leaves the mark, and
        # the restart then ends execution instead of resuming into the step.
        await self._executions.set_waiting_checkpoint(record.plan_id, None)
        await self._checkpoint_event(record, index, tool, action, answer, None)
        return answer

    async def _checkpoint_event(
        self,
        record: ExecutionRecord,
        index: StepIndex,
        tool: str,
        action: str,
        answer: Answer,
        reason: str | None,
    ) -> None:
        await self._executions.add_event(
            ExecutionEvent(
                plan_id=record.plan_id,
                at=self._clock.now(),
                step=step_number(index),
                kind=ExecutionEventKind.CHECKPOINT,
                tool=tool,
                action=action,
                reason=reason,
                answer=answer,
            )
        )

    async def passed(self, record: ExecutionRecord, index: StepIndex) -> bool:
        """Whether the 🔴 step at ``index`` had its checkpoint answered Continue."""
        number = step_number(index)
        answers = await self._executions.events(record.plan_id, ExecutionEventKind.CHECKPOINT)
        return any(e.step == number and e.answer is Answer.ALLOWED for e in answers)

    async def move_on(
        self,
        record: ExecutionRecord,
        plan: Plan,
        to: StepIndex,
        skipped: Sequence[StepIndex],
        leave_out: Sequence[str] = (),
    ) -> tuple[ExecutionRecord, str | None]:
        """Commit the current step (without ``leave_out``, the moving call's own paths) as
        done, record ``skipped`` and make ``to`` current; the record and the step's commit
        (None when it changed nothing)."""
        commit = await self._commit(record, plan, leave_out)
        steps = list(record.steps)
        steps[record.current_step] = StepOutcome.DONE
        for index in skipped:
            steps[index] = StepOutcome.SKIPPED
        steps[to] = StepOutcome.CURRENT
        await self._executions.save_steps(record.plan_id, to, steps)
        moved = record.model_copy(
            update={"current_step": to, "steps": tuple(steps), "step_message": None}
        )
        return moved, commit

    async def planning_changed(self, change: PlanningChange) -> None:
        """End the running execution when plan mode no longer holds it: the agent completed
        (its current step done, steps never reached skipped) or anything else stopped it
        (the current step stopped, the rest not reached): a cancel, a Stop, a spent budget,
        an amendment rejected, cancelled or left to expire."""
        before = change.before
        if before.plan_id is None or not leaves_execution(change):
            return
        record = await self._executions.get(before.plan_id)
        if record is None or not record.running:
            return
        finished = change.action is AuditAction.COMPLETED and (change.actor.kind is ActorKind.AGENT)
        plan = change.revision.plan if change.revision is not None else None
        reason = str(change.detail.get("summary") or change.detail.get("reason") or "")
        why = f"{change.action} by {change.actor.name}" + (f": {reason}" if reason else "")
        try:
            await self.end(record, plan, why, finished=finished)
        except StorageError as exc:
            if self._owed is None:
                raise
            detail = {
                "why": why,
                "finished": finished,
                "requested_by": before.requested_by,
                "name": before.requested_by_name,
            }
            self._owed.owe(END_EXECUTION, record.plan_id, detail, exc)

    async def end(
        self, record: ExecutionRecord, plan: Plan | None, why: str, *, finished: bool = False
    ) -> bool:
        """Commit what the current step did and end ``record`` with every step's outcome
        (``finished``: the current step done and the rest skipped; otherwise it stopped);
        False when it had already ended."""
        if plan is not None:
            await self._commit(record, plan)
        steps = list(record.steps)
        for index, outcome in enumerate(steps):
            if index == record.current_step:
                steps[index] = StepOutcome.DONE if finished else StepOutcome.STOPPED
            elif finished and outcome is StepOutcome.PENDING:
                steps[index] = StepOutcome.SKIPPED
        return await self._executions.end(record.plan_id, self._clock.now(), why, steps)

    async def commit_message(self, record: ExecutionRecord, message: str) -> None:
        """The agent gave ``message`` (``git_commit``) for the current step's work."""
        await self._commits.add_message(record.plan_id, message)

    async def _commit(
        self, record: ExecutionRecord, plan: Plan, leave_out: Sequence[str] = ()
    ) -> str | None:
        """Commit the current step; the commit's id, None when it changed nothing."""
        index = record.current_step
        fresh = await self._executions.get(record.plan_id)
        message = fresh.step_message if fresh is not None else None
        if not message:
            message = plan.steps[index].description if index < len(plan.steps) else "work"
        recorded = await self._commits.commits(record.plan_id)
        parent = recorded[-1].commit if recorded else record.reviewed_commit
        try:
            commit = await self._homes.of(record.agent).branch.commit_step(
                branch_record(record), message, parent, leave_out
            )
        except (BranchError, PlancordError) as exc:
            log.warning(
                "agent %s: could not commit step %s: %s", record.agent, step_number(index), exc
            )
            return None
        await self._commits.committed(record.plan_id, step_number(index), commit)
        return commit


def leaves_execution(change: PlanningChange) -> bool:
    """Whether ``change`` leaves the plan that was executing (or waiting on an amendment)
    with no execution: plan mode ended, or moved to another plan."""
    before, after = change.before, change.after
    executing = before.phase is Phase.EXECUTING or before.amends is not None
    return executing and (after.phase is Phase.INACTIVE or after.plan_id != before.plan_id)


def holds_execution(state: PlanningState, record: ExecutionRecord) -> bool:
    """Whether the agent's planning state still holds ``record``'s plan executing (or
    waiting on an amendment of it)."""
    if state.plan_id != record.plan_id:
        return False
    return state.phase is Phase.EXECUTING or state.amends is not None
