"""Deadlines: an idle exploration and an unanswered plan time out back to inactive (nothing
executes); the scheduler asks for what fell due and when to wake next."""

from __future__ import annotations

from datetime import datetime

from plancord.core.errors import VersionConflict
from plancord.core.logs import log_plan_mode
from plancord.core.planning import (
    Actor,
    AuditAction,
    Phase,
    PlanningState,
)
from plancord.core.ports import Clock, PlanningChange, PlanStore, SettingsProvider
from plancord.core.transition_runner import TransitionRunner


class Deadlines:
    """Moves the idle deadline on activity and times out whatever is overdue, once each."""

    def __init__(
        self,
        store: PlanStore,
        clock: Clock,
        settings: SettingsProvider,
        runner: TransitionRunner,
    ) -> None:
        self._store = store
        self._clock = clock
        self._settings = settings
        self._runner = runner

    async def touch(self, agent: str) -> None:
        """Agent activity while gathering pushes the inactivity deadline back."""
        settings = await self._settings.plan_mode_for(agent)
        moved = await self._store.extend_idle_deadline(
            agent, self._clock.now() + settings.gathering_idle_timeout
        )
        if moved:
            self._runner.deadlines_changed()

    async def fire_due(self) -> list[PlanningChange]:
        """Time out every overdue planning session, once each; nothing executes on timeout."""
        now = self._clock.now()
        changes: list[PlanningChange] = []
        for due in await self._store.due_states(now):
            change = await self._time_out(due, now)
            if change is not None:
                changes.append(change)
        return changes

    async def next_deadline(self) -> datetime | None:
        return await self._store.next_deadline()

    async def _time_out(self, state: PlanningState, now: datetime) -> PlanningChange | None:
        if not state.phase.is_planning:
            return None
        which = "approval" if state.phase is Phase.SUBMITTED else "gathering"
        deadline = state.approval_deadline if which == "approval" else state.idle_deadline
        if deadline is None or deadline > now:
            return None
        actor = Actor.scheduler()
        revision = await self._runner.revision_of(state)
        new = state.cleared()
        detail = {"deadline": which, "was": deadline.isoformat()}
        try:
            after = await self._runner.commit(state, new, AuditAction.TIMED_OUT, actor, detail)
        except VersionConflict:
            return None
        log_plan_mode(
            "timed-out", state.agent, plan_id=state.plan_id, rev=state.revision, deadline=which
        )
        change = PlanningChange(AuditAction.TIMED_OUT, state, after, actor, revision, detail)
        await self._runner.notify(change)
        return change
