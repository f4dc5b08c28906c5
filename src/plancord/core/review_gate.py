"""Whether a plan's review holds back its approval, decided by the host in one place.

A review is advice: by default nothing the reviewer says (or fails to say) stops a human
from approving. The operator can tighten that: ``require_acknowledgement`` turns an approval
of a plan with blockers into a second, deliberate click that names how many it overrides,
and ``require_review`` makes a review that is missing or unavailable hold approval. Every
approval path (button, slash command, operator) asks ``review_hold`` and obeys its answer.
A review started under either setting records that it holds approval while it runs
(``running_hold``), so a path without those settings (the operator CLI without the config
file) is held by a running review too.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol, runtime_checkable

from plancord.core.errors import PlancordError
from plancord.core.review import PlanReview
from plancord.core.settings import ReviewMode, ReviewSettings


@dataclass(frozen=True, slots=True)
class ReviewHold:
    """Why approval must wait. ``acknowledgement`` is the second click's words when the
    approver may go on by confirming (``Approve despite 1 blocker``); None when nothing the
    approver clicks can release it (the review is required and there is none)."""

    reason: str
    acknowledgement: str | None = None


def review_hold(
    review: PlanReview | None,
    settings: ReviewSettings | None,
    *,
    acknowledged_blockers: int | None = None,
    held_while_running: bool = False,
) -> ReviewHold | None:
    """What holds approval of a plan with ``review`` (None: its review is still running)
    under ``settings`` (None: review off now); None when approval may go ahead. A kept
    review that asked for acknowledgement when it was made holds whatever ``settings`` say
    now, so the hold travels with the review to every path that approves. A running review
    holds when blockers need acknowledging or a review is required, so a quick click cannot
    approve past findings that are about to arrive; the caller must make sure a review that
    will never finish (the bot restarted during it) reads as unavailable, not as running.
    ``held_while_running``: the running review was started as one that holds approval
    (``running_hold``), whatever ``settings`` say now.

    ``acknowledged_blockers`` is the number of blockers the approver confirmed overriding
    (the review's blockers count those dropped from its answer as invalid);
    it releases the hold only when it equals the review's count, so a confirmation given for
    one review does not carry over to a review with more blockers.
    """
    acknowledging = settings is not None and settings.mode is ReviewMode.REQUIRE_ACKNOWLEDGEMENT
    required = settings is not None and settings.require_review
    if review is None:
        if required or acknowledging or held_while_running:
            return ReviewHold("the plan's review has not finished yet; approve once it has")
        return None
    acknowledging = acknowledging or review.acknowledge_blockers
    if not review.available:
        if not required:
            return None
        return ReviewHold(
            f"the plan's review is unavailable ({review.failure}) and this server requires "
            "a review before approval (plan_mode.review.require_review)"
        )
    if not acknowledging or not review.blockers:
        return None
    if acknowledged_blockers == review.blockers:
        return None
    count = review.blockers
    return ReviewHold(
        f"the review found {count} blocker{'s' if count != 1 else ''}; confirm to approve anyway",
        acknowledgement=review.acknowledgement(),
    )


class ReviewHeld(PlancordError):
    """An approval the review holds back (``review_hold``); ``hold`` says why and, when a
    second click can release it, with what words. ``blockers`` is the count that click must
    confirm, so the confirmation names exactly the review it was given for."""

    def __init__(self, hold: ReviewHold, blockers: int) -> None:
        self.hold = hold
        self.blockers = blockers
        super().__init__(f"Not approved yet: {hold.reason}.")


class ReviewRecords(Protocol):
    """Where the core reads a revision's plan review (the store keeps them)."""

    async def settled_review(
        self, plan_id: str, revision: int, *, since: datetime, now: datetime, window: timedelta
    ) -> PlanReview | None:
        """The revision's plan review; None while it may still be running; an unavailable
        review once it cannot be (it started, or was due to start at ``since``, more than
        ``window`` before ``now``), so a review lost to a restart never holds for ever."""
        ...

    async def holds_while_running(self, plan_id: str, revision: int) -> bool:
        """Whether the revision's plan review was started as one that holds approval while
        it runs (``running_hold``)."""
        ...


@runtime_checkable
class ReviewListener(Protocol):
    """Told when a revision's review is kept, so the plan message can show it."""

    async def plan_reviewed(self, agent: str, plan_id: str, revision: int) -> None: ...


def settle_window(settings: ReviewSettings) -> timedelta:
    """How long after it started a review may still be running: the reviewer's own timeout
    and a margin for the store and the queue."""
    return timedelta(seconds=settings.timeout_seconds + 30)


def running_hold(settings: ReviewSettings) -> timedelta | None:
    """How long a review started under ``settings`` holds approval while it runs (its
    ``settle_window``); None when it holds nothing until it is kept."""
    if settings.mode is ReviewMode.REQUIRE_ACKNOWLEDGEMENT or settings.require_review:
        return settle_window(settings)
    return None
