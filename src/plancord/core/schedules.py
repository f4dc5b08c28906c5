"""Scheduled plans: a task an agent plans on its own at set times, then waits for a human.

A ``Schedule`` is a task, when it runs (a cron expression in a time zone, or an interval)
and what to do when the agent is busy at that time. ``ScheduleBook`` is the one way
schedules are made and changed, from Discord or the operator's shell: who may is who may
instruct the agent (``core.authority``, ``Subject.SCHEDULE``), every change is one
transaction with its audit row, and a refusal is audited too. A run is fired by
``core.schedule_runs``; it never approves anything: the plan waits for a human like any
other, and the schedule's creator counts as the one who asked for it.
"""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field

from plancord.core.agents import AgentRecord
from plancord.core.authority import (
    Act,
    AuditPlace,
    Refusal,
    Standing,
    Subject,
    decision_row,
    judge,
    refused_row,
)
from plancord.core.errors import NotAuthorised, PlancordError
from plancord.core.planning import Actor, AuditAction, AuditEntry, PlanningState
from plancord.core.ports import Clock, SettingsProvider
from plancord.core.recurrence import (
    Cron,
    Interval,
    Recurrence,
    local_time,
    next_runs,
    parse_cron,
    parse_interval,
)

TASK_LIMIT = 2000
NOTE_LIMIT = 500
MAX_SCHEDULES = 25
"""Schedules one agent may have: what ``/schedule list`` shows in one message."""


class WhenBusy(StrEnum):
    """What a run does when the agent is planning, executing or has a result waiting."""

    SKIP = "skip"
    QUEUE = "queue"


class ScheduleState(StrEnum):
    ACTIVE = "active"
    PAUSED = "paused"


class InvalidSchedule(PlancordError):
    """A schedule's task or times that cannot be taken; the text says why."""


class ScheduleNotFound(PlancordError):
    """No schedule of that id (for that agent)."""

    def __init__(self, schedule_id: str) -> None:
        super().__init__(f"There is no schedule `{schedule_id}`.")
        self.schedule_id = schedule_id


class Schedule(BaseModel):
    """One schedule; ``version`` guards every change, so two processes cannot both move it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    agent: str
    task: str = Field(min_length=1, max_length=TASK_LIMIT)
    cron: str | None = None
    every_seconds: int | None = None
    anchor: datetime
    tz: str
    note: str = Field(default="", max_length=NOTE_LIMIT)
    when_busy: WhenBusy = WhenBusy.SKIP
    max_runs_per_day: int = Field(default=4, ge=1, le=96)
    created_by: str
    created_by_name: str
    created_at: datetime
    state: ScheduleState = ScheduleState.ACTIVE
    next_run_at: datetime
    version: int = 0

    @property
    def recurrence(self) -> Recurrence:
        if self.cron is not None:
            return Cron(self.cron, self.tz)
        return Interval(timedelta(seconds=self.every_seconds or 0), self.anchor, self.tz)

    @property
    def creator(self) -> Actor:
        """The member the schedule's plans are for: its creator, as the requester."""
        return Actor.user(self.created_by, self.created_by_name)

    @property
    def words(self) -> str:
        """``every Monday at 09:00 Europe/Berlin``."""
        return self.recurrence.words()

    @property
    def label(self) -> str:
        """How a channel line names the schedule: its id and, when it has one, its note."""
        return f"`{self.id}`" + (f" ({self.note})" if self.note else "")

    def upcoming(self, count: int = 3) -> list[str]:
        """The next ``count`` runs on the schedule's wall clock, from its next one."""
        first = self.next_run_at
        later = next_runs(self.recurrence, first, count - 1) if count > 1 else []
        return [local_time(at, self.tz) for at in [first, *later]]


class RunOutcome(StrEnum):
    """How a run ended; ``claimed`` and ``queued`` are not ended yet."""

    CLAIMED = "claimed"
    """A process has claimed it and is starting it (its lease: ``claimed_at``)."""
    QUEUED = "queued"
    """The agent was busy and the schedule queues: it starts when the agent is free."""
    STARTED = "started"
    """The agent entered plan mode with the task."""
    SKIPPED_BUSY = "skipped-busy"
    SKIPPED_MISSED = "skipped-missed"
    """Due while plancord was down, and ``schedules.missed`` is ``skip``."""
    SKIPPED_BUDGET = "skipped-budget"
    """The schedule's runs for the day were used up."""
    SKIPPED_GONE = "skipped-gone"
    """The schedule was paused or deleted, or the agent is gone, before it started."""
    FAILED = "failed"

    @property
    def open(self) -> bool:
        return self in (RunOutcome.CLAIMED, RunOutcome.QUEUED)


class ScheduleRun(BaseModel):
    """One run of a schedule, keyed by its schedule and the time it was due."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    schedule_id: str
    due_at: datetime
    agent: str
    owner: str
    claimed_at: datetime
    outcome: RunOutcome = RunOutcome.CLAIMED
    missed: int = 0
    """How many runs fell due while plancord was down, this one included (0: on time)."""
    plan_id: str | None = None
    finished_at: datetime | None = None

    @property
    def key(self) -> str:
        """What names the run in its plan's entry reason, so a restart can tell it started."""
        return f"{self.schedule_id}@{self.due_at.isoformat(timespec='seconds')}"


class ScheduleStore(Protocol):
    """Where schedules live (``storage.schedules``)."""

    async def create(self, schedule: Schedule, audit: AuditEntry) -> None: ...

    async def get(self, schedule_id: str) -> Schedule | None: ...

    async def list(self, agent: str | None = None) -> Sequence[Schedule]: ...

    async def change(self, before: Schedule, after: Schedule, audit: AuditEntry) -> bool:
        """Write ``after`` with its audit row when ``before.version`` still holds."""
        ...

    async def delete(self, schedule: Schedule, audit: AuditEntry) -> bool: ...

    async def append_audit(self, entry: AuditEntry) -> None: ...

    async def due(self, now: datetime) -> Sequence[Schedule]:
        """Active schedules whose next run is at or before ``now``."""
        ...

    async def next_run_at(self) -> datetime | None: ...

    async def claim(self, before: Schedule, next_run_at: datetime, run: ScheduleRun) -> bool:
        """Move ``before`` on to ``next_run_at`` and write ``run``, in one transaction and
        only while ``before.version`` holds: True for the one process that claimed it."""
        ...

    async def open_runs(self) -> Sequence[ScheduleRun]:
        """Runs claimed or queued and not ended, oldest first."""
        ...

    async def take(self, run: ScheduleRun, owner: str, at: datetime) -> ScheduleRun | None:
        """``run`` (as read) claimed for ``owner`` at ``at``; None when it moved meanwhile."""
        ...

    async def settle(self, run: ScheduleRun, audit: AuditEntry | None) -> bool:
        """Write ``run``'s outcome (and its audit row) while its owner still holds it."""
        ...

    async def started_since(self, schedule_id: str, since: datetime) -> int: ...

    async def outcomes(self) -> dict[str, int]:
        """How many runs ended (or wait) in each outcome."""
        ...


class ScheduleBook:
    """Makes, lists and changes schedules, each act judged and audited; see the module."""

    def __init__(
        self,
        store: ScheduleStore,
        clock: Clock,
        settings: SettingsProvider,
        agent_of: Callable[[str], Awaitable[AgentRecord]],
        on_change: Callable[[], None] = lambda: None,
    ) -> None:
        self._store = store
        self._clock = clock
        self._settings = settings
        self._agent_of = agent_of
        self._on_change = on_change

    async def create(
        self,
        agent: str,
        actor: Actor,
        *,
        task: str,
        cron: str | None = None,
        every: str | None = None,
        tz: str = "UTC",
        note: str = "",
        when_busy: WhenBusy = WhenBusy.SKIP,
        max_runs_per_day: int = 4,
    ) -> Schedule:
        """A new active schedule for ``agent``; ``BadRecurrence`` for a time it cannot read,
        ``NotAuthorised`` (audited) for a member who may not instruct the agent."""
        record = await self._agent_of(agent)
        await self.judge(actor, record, Act.CREATE, None)
        if len(await self._store.list(agent)) >= MAX_SCHEDULES:
            raise InvalidSchedule(
                f"**{agent}** has {MAX_SCHEDULES} schedules, the most an agent may have; "
                "delete one first."
            )
        if (cron is None) == (every is None):
            raise InvalidSchedule("Give either a cron expression or an interval, not both.")
        now = self._clock.now()
        recurrence = (
            parse_cron(cron, tz) if cron is not None else parse_interval(every or "", tz, now)
        )
        text = task.strip()
        if not text or len(text) > TASK_LIMIT:
            raise InvalidSchedule(f"The task must be 1 to {TASK_LIMIT} characters.")
        schedule = Schedule(
            id=secrets.token_hex(3),
            agent=agent,
            task=text,
            cron=recurrence.expression if isinstance(recurrence, Cron) else None,
            every_seconds=(
                int(recurrence.every.total_seconds()) if isinstance(recurrence, Interval) else None
            ),
            anchor=now,
            tz=recurrence.tz,
            note=note.strip()[:NOTE_LIMIT],
            when_busy=when_busy,
            max_runs_per_day=max_runs_per_day,
            created_by=actor.id,
            created_by_name=actor.name,
            created_at=now,
            next_run_at=recurrence.after(now),
        )
        audit = self._row(AuditAction.SCHEDULE_CREATED, actor, schedule, Act.CREATE)
        await self._store.create(schedule, audit)
        self._on_change()
        return schedule

    async def list(self, agent: str | None = None) -> Sequence[Schedule]:
        return await self._store.list(agent)

    async def get(self, schedule_id: str, agent: str | None = None) -> Schedule:
        """The schedule ``schedule_id`` (of ``agent``, when given: a channel reaches only its
        own agent's schedules)."""
        found = await self._store.get(schedule_id.strip().lower())
        if found is None or (agent is not None and found.agent != agent):
            raise ScheduleNotFound(schedule_id)
        return found

    async def pause(self, schedule_id: str, actor: Actor, agent: str | None = None) -> Schedule:
        return await self._set_state(schedule_id, actor, agent, ScheduleState.PAUSED)

    async def resume(self, schedule_id: str, actor: Actor, agent: str | None = None) -> Schedule:
        return await self._set_state(schedule_id, actor, agent, ScheduleState.ACTIVE)

    async def for_change(
        self, schedule_id: str, actor: Actor, agent: str | None = None
    ) -> Schedule:
        """The schedule ``schedule_id`` once ``actor`` may change it (``/schedule run-now``
        asks this before the runner runs it); ``NotAuthorised``, audited, otherwise."""
        schedule = await self.get(schedule_id, agent)
        await self.judge(actor, await self._agent_of(schedule.agent), Act.CHANGE, schedule)
        return schedule

    async def delete(self, schedule_id: str, actor: Actor, agent: str | None = None) -> Schedule:
        schedule = await self.for_change(schedule_id, actor, agent)
        audit = self._row(AuditAction.SCHEDULE_DELETED, actor, schedule, Act.CHANGE)
        if not await self._store.delete(schedule, audit):
            raise ScheduleNotFound(schedule_id)
        self._on_change()
        return schedule

    async def judge(
        self, actor: Actor, record: AgentRecord, act: Act, schedule: Schedule | None
    ) -> None:
        """``NotAuthorised`` (with its audit row) unless ``actor`` may instruct the agent."""
        settings = await self._settings.plan_mode_for(record.name)
        standing = Standing(PlanningState(agent=record.name), settings, record)
        verdict = judge(actor, Subject.SCHEDULE, act, standing)
        if isinstance(verdict, Refusal):
            detail = {"schedule": schedule.id} if schedule is not None else None
            row = refused_row(verdict, AuditPlace(record.name), self._clock.now(), detail)
            await self._store.append_audit(row)
            raise NotAuthorised(verdict.text)

    async def _set_state(
        self, schedule_id: str, actor: Actor, agent: str | None, state: ScheduleState
    ) -> Schedule:
        schedule = await self.for_change(schedule_id, actor, agent)
        if schedule.state is state:
            return schedule
        changes: dict[str, Any] = {"state": state, "version": schedule.version + 1}
        if state is ScheduleState.ACTIVE:
            changes["next_run_at"] = schedule.recurrence.after(self._clock.now())
        after = schedule.model_copy(update=changes)
        action = (
            AuditAction.SCHEDULE_PAUSED
            if state is ScheduleState.PAUSED
            else AuditAction.SCHEDULE_RESUMED
        )
        if not await self._store.change(
            schedule, after, self._row(action, actor, after, Act.CHANGE)
        ):
            return await self._set_state(schedule_id, actor, agent, state)
        self._on_change()
        return after

    def _row(self, action: AuditAction, actor: Actor, schedule: Schedule, act: Act) -> AuditEntry:
        detail = {
            "schedule": schedule.id,
            "task": schedule.task,
            "when": schedule.words,
            "when_busy": schedule.when_busy.value,
        }
        return decision_row(
            action,
            actor,
            AuditPlace(schedule.agent),
            self._clock.now(),
            detail,
            subject=Subject.SCHEDULE,
            act=act,
        )
