"""Every execution ends, and its result opens: the executions plan mode no longer holds.

Why this exists: an execution ends with the planning change that ends it (the step keeper
and the results listen to the planning service). A change made where nobody listens — the
process died between the change and its listeners, or an older plancord left the record
running — would leave an execution that never ends: no result, no card, and (since another
plan is refused while one is unended) an agent that can never be approved again. After a
start, :meth:`ExecutionEndings.settle` ends every running execution whose agent's planning
state no longer holds it, as a stop, and opens its result, so its card is shown; and it
opens the result of each agent's newest execution that ended with its result never opened
(the database refused the opening and the process died before it was done again).

This is also where an end the database refused is done again (the owed duty
``end-execution``, ``agent.owed``): the execution ended with the reason the planning change
gave, and its result opened.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from plancord.agent.execution.results import ExecutionResults
from plancord.agent.execution.steps import END_EXECUTION, StepKeeper, holds_execution
from plancord.agent.owed import OwedDuties
from plancord.core.errors import PlancordError
from plancord.storage.executions import ExecutionStore
from plancord.storage.owed_duties import OwedDuty
from plancord.storage.store import SqlStore

log = logging.getLogger(__name__)

ORPHANED = "plan mode no longer held it when plancord started"


class ExecutionEndings:
    """Ends the executions left running with nothing to end them, and opens their results."""

    def __init__(
        self,
        *,
        executions: ExecutionStore,
        store: SqlStore,
        steps: StepKeeper,
        results: ExecutionResults,
        owed: OwedDuties | None = None,
    ) -> None:
        self._executions = executions
        self._store = store
        self._steps = steps
        self._results = results
        if owed is not None:
            owed.handle(END_EXECUTION, self._end_owed)

    async def _end_owed(self, duty: OwedDuty) -> None:
        """End ``duty``'s execution as its planning change said (nothing when it has ended
        meanwhile), then open its result."""
        record = await self._executions.get(duty.subject)
        if record is None:
            return
        if record.running:
            revision = await self._store.get_revision(record.plan_id, record.revision)
            plan = revision.plan if revision is not None else None
            why = str(duty.detail.get("why") or "ended")
            await self._steps.end(record, plan, why, finished=bool(duty.detail.get("finished")))
        by, name = duty.detail.get("requested_by"), duty.detail.get("name")
        await self._results.open_ended(
            record.plan_id, str(by) if by else None, str(name) if name else None
        )

    async def settle(self, serves: Callable[[str], Awaitable[bool]]) -> list[str]:
        """End every running execution of an agent ``serves`` says this process serves
        whose planning state no longer holds it, and open its result; the plan ids."""
        ended: list[str] = []
        for record in await self._executions.running_all():
            try:
                if not await serves(record.agent):
                    continue
                state = await self._store.load_state(record.agent)
                if holds_execution(state, record):
                    continue
                revision = await self._store.get_revision(record.plan_id, record.revision)
                plan = revision.plan if revision is not None else None
                await self._steps.end(record, plan, f"ended: {ORPHANED}")
                await self._results.open_ended(record.plan_id, None, None)
            except PlancordError:
                log.exception("could not end the execution of %s", record.plan_id)
                continue
            ended.append(record.plan_id)
        for plan_id in await self._executions.unopened():
            try:
                unopened = await self._executions.get(plan_id)
                if unopened is None or not await serves(unopened.agent):
                    continue
                await self._results.open_ended(plan_id, None, None)
            except PlancordError:
                log.exception("could not open the result of %s", plan_id)
        return ended
