"""Running the reviewer when a plan is submitted, and keeping what it says.

The review must never keep the approver waiting for the plan itself, so the plan message is
posted at once (showing the review as in progress) and this listener runs the review beside
it: the review is marked started before the listener returns (so an approval click that
comes first is checked against a running review, not against none; under
``require_acknowledgement`` or ``require_review`` the mark says it holds approval, so every
path refuses a plain approval while it runs, and that mark is written by the submission's
own transaction, so no approval lands between the two), the call runs as a
task, its usage is recorded in the agent's usage (so the plan's cost line and budget count
it), the review is kept per revision, and the ``ReviewListener``s (the Discord edge) are told
to redraw. The same object reviews an executed plan's result when asked
(``review_result``), for the completion card to show.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime

from plancord.agent.budget import PlanBudget
from plancord.agent.plan_review.digest import exploration_digest
from plancord.agent.plan_review.reviewer import PlanReviewer, ResultReviewRequest, ReviewRequest
from plancord.core.plan_diff import revision_changes
from plancord.core.planning import AuditAction, Phase, PlanningState, PlanRevision
from plancord.core.ports import Clock, ModelClient, PlanningChange, PlanStore, SettingsProvider
from plancord.core.review import PlanReview
from plancord.core.review_gate import ReviewListener, running_hold
from plancord.core.settings import ReviewSettings
from plancord.storage.conversations import ConversationStore
from plancord.storage.plan_reviews import PlanReviewStore, ReviewKind

log = logging.getLogger(__name__)


class PlanReviewRuns:
    """A planning listener that reviews each submitted revision (``plan_mode.review``)."""

    def __init__(
        self,
        *,
        store: PlanStore,
        reviews: PlanReviewStore,
        conversations: ConversationStore,
        plan_settings: SettingsProvider,
        model: ModelClient,
        clock: Clock,
        agent_model: Callable[[str], Awaitable[str]],
        listeners: Sequence[ReviewListener] = (),
        budget: PlanBudget | None = None,
    ) -> None:
        self._budget = budget
        self._store = store
        self._reviews = reviews
        self._conversations = conversations
        self._settings = plan_settings
        self._model = model
        self._clock = clock
        self._agent_model = agent_model
        self._listeners = list(listeners)
        self._tasks: set[asyncio.Task[None]] = set()

    def add_listener(self, listener: ReviewListener) -> None:
        self._listeners.append(listener)

    async def planning_changed(self, change: PlanningChange) -> None:
        """Start the review of a revision submitted for a human's decision."""
        revision = change.revision
        if change.action != AuditAction.SUBMITTED or revision is None:
            return
        if change.detail.get("auto_approved") is True:
            return  # nobody approves it, so nobody reads a review before it runs
        settings = (await self._settings.plan_mode_for(revision.agent)).review
        if settings is None:
            return
        hold = running_hold(settings)
        started = await self._reviews.start(
            revision.plan_id, revision.revision, ReviewKind.PLAN, self._clock.now(), hold=hold
        )
        # A review that holds approval was marked started by the submission's own
        # transaction (``Transition.review_hold``): this submission's listener runs it.
        if started or hold is not None:
            self._run(revision, change.after, settings)

    async def resume(self, states: Sequence[PlanningState]) -> None:
        """After a start: make again the review calls a restart cut short, for the plans of
        ``states`` (the agents this process serves) still waiting for a decision."""
        for state in states:
            if state.phase is not Phase.SUBMITTED or state.plan_id is None:
                continue
            settings = (await self._settings.plan_mode_for(state.agent)).review
            revision = await self._store.get_revision(state.plan_id, state.revision)
            if settings is None or revision is None:
                continue
            now = self._clock.now()
            if await self._reviews.restart(state.plan_id, state.revision, ReviewKind.PLAN, now):
                self._run(revision, state, settings)

    def _run(self, revision: PlanRevision, state: PlanningState, settings: ReviewSettings) -> None:
        entered = state.entered_at or revision.submitted_at
        task = asyncio.create_task(
            self._review(revision, state.task or "", entered, settings),
            name=f"plancord-review-{revision.plan_id}-v{revision.revision}",
        )
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def wait_idle(self) -> None:
        """Wait until every review running now has been kept (tests, shutdown)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def close(self) -> None:
        """Cancel the reviews still running; a restart shows them as interrupted."""
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _review(
        self, revision: PlanRevision, task: str, entered: datetime, settings: ReviewSettings
    ) -> None:
        plan_id, number = revision.plan_id, revision.revision
        try:
            messages = await self._conversations.load_since(revision.agent, entered)
            previous = await self._reviews.get(plan_id, number - 1) if number > 1 else None
            request = ReviewRequest(
                task=task,
                plan=revision.plan,
                revision=number,
                exploration=exploration_digest(messages, revision.plan),
                diff=await revision_changes(self._store, plan_id, number - 1, number),
                previous=previous.review if previous is not None else None,
            )
            reviewer = await self._reviewer(revision.agent, settings)
            review = await self._unaffordable(revision.agent, reviewer.model)
            if review is None:
                review = await reviewer.review(request)
            await self._keep(revision, ReviewKind.PLAN, review)
        except Exception:
            log.exception("the review of plan v%s of %s failed", number, revision.agent)
            failed = PlanReview.unavailable("the review could not be run", model="")
            with contextlib.suppress(Exception):
                await self._reviews.finish(
                    plan_id, number, ReviewKind.PLAN, failed, self._clock.now()
                )
        for listener in list(self._listeners):
            try:
                await listener.plan_reviewed(revision.agent, plan_id, number)
            except Exception:
                log.exception("a review listener failed for plan v%s", number)

    async def review_result(
        self, revision: PlanRevision, task: str, diff: str
    ) -> PlanReview | None:
        """Review what executing ``revision`` changed (``diff``: the execution branch's diff
        against the reviewed tree) when ``plan_mode.review.review_result`` asks for it; the
        review is kept (``ReviewKind.RESULT``, read with ``result_review``) and its usage
        counted. None when result reviews are off or this result was already reviewed."""
        settings = (await self._settings.plan_mode_for(revision.agent)).review
        if settings is None or not settings.review_result:
            return None
        plan_id, number = revision.plan_id, revision.revision
        if not await self._reviews.start(plan_id, number, ReviewKind.RESULT, self._clock.now()):
            return None
        request = ResultReviewRequest(task=task, plan=revision.plan, revision=number, diff=diff)
        reviewer = await self._reviewer(revision.agent, settings)
        review = await self._unaffordable(revision.agent, reviewer.model)
        if review is None:
            review = await reviewer.review_result(request)
        await self._keep(revision, ReviewKind.RESULT, review)
        return review

    async def _unaffordable(self, agent: str, model: str) -> PlanReview | None:
        """The review there is when the plan's budget is spent (no call is made), or None."""
        why = await self._budget.spent(agent) if self._budget is not None else None
        if why is None:
            return None
        log.warning("review for %s not made: %s", agent, why)
        return PlanReview.unavailable(f"not reviewed: {why}", model=model)

    async def result_review(self, plan_id: str, revision: int) -> PlanReview | None:
        """The kept review of a revision's result; None when there is none (yet)."""
        found = await self._reviews.get(plan_id, revision, ReviewKind.RESULT)
        return found.review if found is not None else None

    async def _reviewer(self, agent: str, settings: ReviewSettings) -> PlanReviewer:
        model = settings.model or await self._agent_model(agent)
        return PlanReviewer.from_settings(self._model, settings, agent_model=model)

    async def _keep(self, revision: PlanRevision, kind: ReviewKind, review: PlanReview) -> None:
        """Record the call's usage, then keep the review: its ``finished_at`` is the end of
        the window the plan's cost line counts, so the usage must land before it."""
        now = self._clock.now()
        if review.usage.input_tokens or review.usage.output_tokens:
            await self._conversations.record_usage(
                revision.agent, review.model or "reviewer", review.usage, None, now
            )
        await self._reviews.finish(revision.plan_id, revision.revision, kind, review, now)
