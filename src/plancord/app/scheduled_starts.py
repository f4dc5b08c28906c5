"""What a scheduled run needs of the agents, over the runtime and the stores: whether the
agent is busy, the start of its plan as ``/plan start`` would make it, and whether a run a
stopped process claimed had already entered plan mode (read from the audit log, which
records every entry with its reason in the entry's own transaction)."""

from __future__ import annotations

import uuid
from datetime import datetime

from plancord.agent.runtime import AgentRuntime
from plancord.core.errors import AgentNotFound
from plancord.core.planning import Actor, AuditAction, Phase
from plancord.core.service import PlanningService
from plancord.storage.executions import ExecutionStore
from plancord.storage.store import SqlStore

_BUSY = {
    Phase.GATHERING: "it is exploring for a plan",
    Phase.SUBMITTED: "a plan waits for approval",
    Phase.EXECUTING: "it is executing a plan",
}


class AgentStarts:
    """``core.schedule_runs.ScheduledStarts`` over the runtime."""

    def __init__(
        self,
        planning: PlanningService,
        runtime: AgentRuntime,
        executions: ExecutionStore,
        store: SqlStore,
    ) -> None:
        self._planning = planning
        self._runtime = runtime
        self._executions = executions
        self._store = store

    async def busy(self, agent: str) -> str | None:
        try:
            await self._store.get_agent(agent)
        except AgentNotFound:
            return "the agent no longer exists"
        state = (await self._planning.status(agent)).state
        if state.phase in _BUSY:
            return _BUSY[state.phase]
        if await self._executions.waiting_result(agent) is not None:
            return "a result waits for a decision"
        if self._runtime.is_busy(agent):
            return "it is working on a message"
        return None

    async def start(self, agent: str, task: str, requester: Actor, reason: str) -> str | None:
        started = await self._runtime.start_planning(
            agent, task, requester, actor=Actor.scheduler(), reason=reason
        )
        if not started:
            return None
        return (await self._planning.status(agent)).state.plan_id

    async def started_for(self, agent: str, reason: str, since: datetime) -> str | None:
        for entry in await self._store.list_audit(agent, limit=200):
            if (
                entry.action == AuditAction.ENTERED
                and entry.actor == Actor.scheduler().label
                and entry.at >= since
                and entry.detail.get("reason") == reason
            ):
                return entry.plan_id
        return None


def schedule_owner() -> str:
    """The name this process claims runs under (a lease owner, never a pid)."""
    return f"schedules:{uuid.uuid4().hex}"
