"""Firing schedules: each run claimed by exactly one process, then started, queued or
skipped, and the channel told.

A pass claims every due schedule of the agents this process serves (``core.serving``): the
claim moves the schedule's next run on and writes the run in one transaction under the
schedule's version (``storage.schedules``), so of several processes one wins. The winner
then decides the run: skipped when it fell due while plancord was down and
``schedules.missed`` says skip (however many runs were missed, one run row says so); skipped
when the schedule has used its runs for the day; skipped or queued, as the schedule says,
when the agent is busy; otherwise started: plan mode entered with the task, the schedule's
creator as the requester, exactly as ``/plan start`` would. A run left claimed by a process
that stopped is taken over once its lease expires, and a run whose plan had already been
entered is recorded as started, not started twice.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, time, timedelta
from enum import StrEnum
from typing import Protocol

from plancord.core.authority import AuditPlace, Subject, decision_row
from plancord.core.errors import PlancordError
from plancord.core.planning import Actor, AuditAction, AuditEntry, EntrySource, PlanningState
from plancord.core.ports import Clock
from plancord.core.recurrence import local_time, runs_between, zone
from plancord.core.schedules import (
    RunOutcome,
    Schedule,
    ScheduleRun,
    ScheduleState,
    ScheduleStore,
    WhenBusy,
)

log = logging.getLogger(__name__)
_TASK_SHOWN = 1200
MISSED_COUNT_LIMIT = 1000
"""Missed runs are counted up to this many (a bound on the pass, not on what runs: one)."""


class MissedRuns(StrEnum):
    """What a start does with runs that fell due while plancord was down."""

    RUN_ONCE = "run_once"
    SKIP = "skip"


@dataclass(frozen=True, slots=True)
class RunSettings:
    missed: MissedRuns = MissedRuns.RUN_ONCE
    grace: timedelta = timedelta(minutes=5)
    """A run this late counts as missed (the bot was down), not merely late."""
    lease: timedelta = timedelta(minutes=2)
    """How long a claim holds before another process may take the run over."""


class ScheduledStarts(Protocol):
    """What a run needs of the agents (the runtime, through the app)."""

    async def busy(self, agent: str) -> str | None:
        """Why ``agent`` cannot start a plan now (planning, executing, a result waiting, a
        turn running), or None when it can."""
        ...

    async def start(self, agent: str, task: str, requester: Actor, reason: str) -> str | None:
        """Enter plan mode with ``task`` for ``requester`` and set the agent to work; the
        plan's id, or None when the agent was already planning."""
        ...

    async def started_for(self, agent: str, reason: str, since: datetime) -> str | None:
        """The plan id when ``agent`` entered plan mode with ``reason`` at or after ``since``
        (a run a stopped process had started), else None."""
        ...


_REASON_PREFIX = "schedule "


def schedule_reason(schedule_id: str) -> str:
    """The entry reason of a scheduled run's plan; the plan card names the schedule by it."""
    return _REASON_PREFIX + schedule_id


def requester_label(state: PlanningState) -> str | None:
    """Who a plan is for, as its card says it: ``ana``, or ``ana · schedule 3fa9c1`` for a
    plan a schedule started. ``/plan start`` enters with the task as its reason, so only
    the scheduler's entry (a reason of its own beside the task) reads as a schedule's."""
    name, reason = state.requested_by_name, state.entry_reason
    scheduled = state.entry_source is EntrySource.USER and reason != state.task
    if name and scheduled and reason and reason.startswith(_REASON_PREFIX):
        return f"{name} · {reason}"
    return name


class ScheduleRunner:
    """Claims and decides the due runs; see the module docstring."""

    def __init__(
        self,
        store: ScheduleStore,
        clock: Clock,
        starts: ScheduledStarts,
        say: Callable[[str, str], Awaitable[None]],
        serves: Callable[[str], Awaitable[bool]],
        owner: str,
        settings: RunSettings = RunSettings(),
    ) -> None:
        self._store = store
        self._clock = clock
        self._starts = starts
        self._say = say
        self._serves = serves
        self.owner = owner
        self.settings = settings

    async def fire_due(self) -> list[ScheduleRun]:
        """One pass: runs left open first (queued, or claimed by a process that stopped),
        then every due schedule; the runs this process decided."""
        decided = [run for run in [await self._reopen(r) for r in await self._open()] if run]
        for schedule in await self._store.due(self._clock.now()):
            if await self._serves(schedule.agent):
                run = await self._claim(schedule)
                if run is not None:
                    decided.append(await self._decide(run))
        return decided

    async def next_run_at(self) -> datetime | None:
        """When the next pass is needed: the earliest next run, or a queued run's retry."""
        due = await self._store.next_run_at()
        open_runs = await self._store.open_runs()
        if open_runs:
            soon = self._clock.now() + min(self.settings.lease, timedelta(minutes=1))
            due = soon if due is None else min(due, soon)
        return due

    async def run_now(self, schedule: Schedule) -> ScheduleRun:
        """A run of ``schedule`` at once, outside its times (``/schedule run-now``); the
        authority has been asked by the caller (``ScheduleBook.judge``)."""
        if schedule.state is ScheduleState.PAUSED:
            raise PlancordError(f"Schedule `{schedule.id}` is paused; resume it first.")
        now = self._clock.now()
        run = ScheduleRun(
            schedule_id=schedule.id,
            due_at=now,
            agent=schedule.agent,
            owner=self.owner,
            claimed_at=now,
        )
        if not await self._store.claim(schedule, schedule.next_run_at, run):
            raise PlancordError("The schedule changed meanwhile; try again.")
        return await self._decide(run)

    async def _open(self) -> Sequence[ScheduleRun]:
        return await self._store.open_runs()

    async def _reopen(self, run: ScheduleRun) -> ScheduleRun | None:
        if not await self._serves(run.agent):
            return None
        now = self._clock.now()
        if run.outcome is RunOutcome.CLAIMED and run.claimed_at + self.settings.lease > now:
            return None
        if run.outcome is RunOutcome.QUEUED and await self._starts.busy(run.agent) is not None:
            return None
        taken = await self._store.take(run, self.owner, now)
        if taken is None:
            return None
        return await self._decide(taken, queued=run.outcome is RunOutcome.QUEUED)

    async def _claim(self, schedule: Schedule) -> ScheduleRun | None:
        now = self._clock.now()
        due = schedule.next_run_at
        missed = 0
        if now - due > self.settings.grace:
            missed = runs_between(schedule.recurrence, due, now, MISSED_COUNT_LIMIT)
        run = ScheduleRun(
            schedule_id=schedule.id,
            due_at=due,
            agent=schedule.agent,
            owner=self.owner,
            claimed_at=now,
            missed=missed,
        )
        if not await self._store.claim(schedule, schedule.recurrence.after(now), run):
            return None
        return run

    async def _decide(self, run: ScheduleRun, *, queued: bool = False) -> ScheduleRun:
        schedule = await self._store.get(run.schedule_id)
        try:
            outcome, plan_id, line = await self._outcome(run, schedule, queued)
        except PlancordError as exc:
            outcome, plan_id, line = RunOutcome.FAILED, None, f"could not start: {exc}"
        now = self._clock.now()
        ended = run.model_copy(
            update={
                "outcome": outcome,
                "plan_id": plan_id,
                "finished_at": None if outcome.open else now,
            }
        )
        if not await self._store.settle(ended, self._audit(ended, now)):
            log.warning("schedule run %s was taken over before it settled", run.key)
            return ended
        log.info("schedule run %s: %s", run.key, outcome.value)
        if line is not None and schedule is not None:
            await self._tell(schedule, line)
        return ended

    async def _outcome(
        self, run: ScheduleRun, schedule: Schedule | None, queued: bool
    ) -> tuple[RunOutcome, str | None, str | None]:
        if schedule is None or schedule.state is ScheduleState.PAUSED:
            return RunOutcome.SKIPPED_GONE, None, None
        reason = schedule_reason(schedule.id)
        already = await self._starts.started_for(run.agent, reason, run.due_at)
        if already is not None:
            return RunOutcome.STARTED, already, None
        if run.missed > 0 and self.settings.missed is MissedRuns.SKIP:
            return RunOutcome.SKIPPED_MISSED, None, self._missed_line(run, schedule, "skipped")
        if await self._runs_today(schedule) >= schedule.max_runs_per_day:
            line = (
                f"skipped: it has run {schedule.max_runs_per_day} times today, its limit for a day."
            )
            return RunOutcome.SKIPPED_BUDGET, None, line
        busy = await self._starts.busy(run.agent)
        if busy is not None:
            return self._when_busy(schedule, busy, queued)
        plan_id = await self._starts.start(run.agent, schedule.task, schedule.creator, reason)
        if plan_id is None:
            return self._when_busy(schedule, "it is already planning", queued)
        return RunOutcome.STARTED, plan_id, self._started_line(run, schedule)

    def _when_busy(
        self, schedule: Schedule, busy: str, queued: bool
    ) -> tuple[RunOutcome, str | None, str | None]:
        if schedule.when_busy is WhenBusy.QUEUE:
            free = "it starts when the agent is free"
            line = None if queued else f"queued: **{schedule.agent}** is busy ({busy}); {free}."
            return RunOutcome.QUEUED, None, line
        return RunOutcome.SKIPPED_BUSY, None, f"skipped: **{schedule.agent}** is busy ({busy})."

    async def _runs_today(self, schedule: Schedule) -> int:
        tz = zone(schedule.tz)
        today = self._clock.now().astimezone(tz).date()
        start = datetime.combine(today, time(0), tz)
        return await self._store.started_since(schedule.id, start)

    def _missed_line(self, run: ScheduleRun, schedule: Schedule, what: str) -> str:
        many = "run" if run.missed == 1 else f"{run.missed} runs"
        if run.missed >= MISSED_COUNT_LIMIT:
            many = f"{MISSED_COUNT_LIMIT} runs or more"
        return (
            f"{many} fell due while plancord was down (from "
            f"{local_time(run.due_at, schedule.tz)}); {what} (`schedules.missed`)."
        )

    def _started_line(self, run: ScheduleRun, schedule: Schedule) -> str:
        task = (
            schedule.task
            if len(schedule.task) <= _TASK_SHOWN
            else schedule.task[:_TASK_SHOWN] + "…"
        )
        head = ""
        if run.missed > 0:
            head = self._missed_line(run, schedule, "running once now") + "\n"
        return (
            f"{head}**{schedule.agent}** plans for {schedule.created_by_name}: {task}\n"
            "It explores read-only and posts a plan here; the schedule never approves it."
        )

    async def _tell(self, schedule: Schedule, line: str) -> None:
        next_at = local_time(schedule.next_run_at, schedule.tz)
        refreshed = await self._store.get(schedule.id)
        if refreshed is not None:
            next_at = local_time(refreshed.next_run_at, refreshed.tz)
        text = f"⏰ Schedule {schedule.label} ({schedule.words}) {line}\nNext run: {next_at}."
        try:
            await self._say(schedule.agent, text)
        except Exception:  # a channel we cannot reach never undoes the run
            log.exception(
                "could not tell %s's channel about schedule %s", schedule.agent, schedule.id
            )

    def _audit(self, run: ScheduleRun, at: datetime) -> AuditEntry:
        detail = {
            "schedule": run.schedule_id,
            "due": run.due_at.isoformat(),
            "outcome": run.outcome.value,
            "missed": run.missed,
        }
        return decision_row(
            AuditAction.SCHEDULE_RUN,
            Actor.scheduler(),
            AuditPlace(run.agent, run.plan_id),
            at,
            detail,
            subject=Subject.SCHEDULE,
        )
