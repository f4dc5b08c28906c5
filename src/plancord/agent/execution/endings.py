"""Every execution ends, and its result opens: the executions plan mode no longer holds.

Why this exists: an execution ends with the planning change that ends it (the step keeper
and the results listen to the planning service). A change made where nobody listens — the
process died between the change and its listeners, or an older plancord left the record
running — would leave an execution that never ends: no result, no card, and (since another
plan is refused while one is unended) an agent that can never be approved again. After a
start, :meth:`ExecutionEndings.settle` ends every running execution whose agent's planning
state no longer holds it, as a stop, and opens its result, so its card is shown.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from plancord.agent.execution.results import ExecutionResults
from plancord.agent.execution.steps import StepKeeper, holds_execution
from plancord.core.errors import PlancordError
from plancord.storage.executions import ExecutionStore
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
    ) -> None:
        self._executions = executions
        self._store = store
        self._steps = steps
        self._results = results

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
        return ended
