"""An ended execution's result opened: pinned to its branch's tip, its card shown, and,
where the agent's settings ask for it, reviewed.

Why this exists: every ending of an execution (its last step, a stop, a restart, the budget,
an amendment left to expire) ends its record first (the step keeper listens before this),
and then its result must start waiting, exactly once, or the agent could never start
another plan. Opening it is owed until it lands (``agent.owed``, kind ``open-result``):
a database another process holds locked makes it late, never lost, and an ended execution
whose result never opened is found again at the next start (``ExecutionEndings``). The
review of the result runs as a task of its own, so a slow reviewer never holds up the
planning change that ended the execution.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

from plancord.agent.execution.result_news import ResultNews
from plancord.agent.execution.result_reading import ResultReading
from plancord.agent.owed import OwedDuties
from plancord.agent.plan_review.runs import PlanReviewRuns
from plancord.core.errors import PlancordError, StorageError
from plancord.core.execution import ExecutionRecord
from plancord.core.ports import PlanningChange, SettingsProvider
from plancord.storage.executions import ExecutionStore
from plancord.storage.owed_duties import OwedDuty

log = logging.getLogger(__name__)

REVIEW_DIFF_LIMIT = 400_000
"""The most of a result's diff a result review reads (the card attaches all of it)."""
OPEN_RESULT = "open-result"
"""The owed duty of opening an ended execution's result (its subject: the plan id)."""


class ResultOpening:
    """Opens the result of each execution that ended, and has it reviewed."""

    def __init__(
        self,
        *,
        executions: ExecutionStore,
        plan_settings: SettingsProvider,
        reading: ResultReading,
        news: ResultNews,
        reviews: PlanReviewRuns | None,
        owed: OwedDuties | None = None,
    ) -> None:
        """``owed``: where an opening the database refused is owed (without it, as in the
        operator's shell, the failure is raised and the bot's next start opens it)."""
        self._executions = executions
        self._settings = plan_settings
        self._reading = reading
        self._news = news
        self._reviews = reviews
        self._owed = owed
        if owed is not None:
            owed.handle(OPEN_RESULT, self._open_owed)

    async def planning_changed(self, change: PlanningChange) -> None:
        """When the change ended an execution (its record has ended by now: the step
        keeper listens before this), its result starts waiting and its card is shown."""
        before = change.before
        if before.plan_id is None:
            return
        try:
            record = await self.open_ended(
                before.plan_id, before.requested_by, before.requested_by_name
            )
        except StorageError as exc:
            if self._owed is None:
                raise
            detail = {"requested_by": before.requested_by, "name": before.requested_by_name}
            self._owed.owe(OPEN_RESULT, before.plan_id, detail, exc)
            return
        if record is not None and self._reviews is not None and change.revision is not None:
            self._news.run_soon(self._review(record, change))

    async def open_ended(
        self, plan_id: str, requested_by: str | None, requested_by_name: str | None
    ) -> ExecutionRecord | None:
        """Open the result of ``plan_id``'s ended execution, pinned to its branch's tip,
        and tell the front ends to show its card; the record, or None when there is no
        ended execution whose result is still to open."""
        record = await self._executions.get(plan_id)
        if record is None or record.running or record.result is not None:
            return None
        pinned = await self._reading.pin_of(record)
        if not await self._executions.open_result(plan_id, requested_by, requested_by_name, pinned):
            return None
        await self._news.ready(record.agent, plan_id)
        return record

    async def _open_owed(self, duty: OwedDuty) -> None:
        """The owed opening of ``duty``'s result, tried again (nothing when it has opened
        meanwhile, or its execution is still running: ending it opens it)."""
        by, name = duty.detail.get("requested_by"), duty.detail.get("name")
        await self.open_ended(duty.subject, str(by) if by else None, str(name) if name else None)

    async def _review(self, record: ExecutionRecord, change: PlanningChange) -> None:
        revision = change.revision
        if revision is None or self._reviews is None:
            return
        settings = (await self._settings.plan_mode_for(record.agent)).review
        if settings is None or not settings.review_result:
            return
        text: list[str] = []

        async def read(path: Path) -> None:
            data = await asyncio.to_thread(_head, path, REVIEW_DIFF_LIMIT)
            text.append(data.decode("utf-8", "replace"))

        try:
            if not await self._reading.write_diff(record.plan_id, read):
                return
            kept = await self._reviews.review_result(revision, before_task(change), text[0])
        except PlancordError:
            log.warning("the result review of %s failed", record.plan_id, exc_info=True)
            return
        if kept is not None:
            await self._news.changed(record.agent, record.plan_id)


def before_task(change: PlanningChange) -> str:
    return change.before.task or (change.revision.plan.summary if change.revision else "")


def _head(path: Path, limit: int) -> bytes:
    with path.open("rb") as handle:
        return handle.read(limit)
