"""Plan reviews kept per revision on both engines: started, finished, read back after a
restart, and a review a restart interrupted read as unavailable rather than running."""

from __future__ import annotations

from datetime import timedelta

from plancord.core.ports import ModelUsage
from plancord.core.review import Finding, PlanReview, Severity
from plancord.storage.backend import Backend
from plancord.storage.conversations import ConversationStore
from plancord.storage.plan_reviews import INTERRUPTED, PlanReviewStore, ReviewKind
from plancord.storage.store import SqlStore
from tests.conftest import ManualClock, agent_record

REVIEW = PlanReview(
    model="claude-haiku-4-5",
    usage=ModelUsage(120, 40),
    findings=(Finding(severity=Severity.BLOCKER, step=2, text="@everyone drops the table"),),
)


async def test_a_review_is_started_once_and_finished(db: Backend, clock: ManualClock) -> None:
    reviews = PlanReviewStore(db)
    assert await reviews.get("p1", 1) is None
    assert await reviews.start("p1", 1, ReviewKind.PLAN, clock.now())
    assert not await reviews.start("p1", 1, ReviewKind.PLAN, clock.now()), "one per revision"

    running = await reviews.get("p1", 1)
    assert running is not None and running.review is None
    assert running.settled(clock.now(), timedelta(seconds=120)) is None

    assert running.finished_at is None
    clock.advance(seconds=7)
    await reviews.finish("p1", 1, ReviewKind.PLAN, REVIEW, clock.now())
    done = await reviews.get("p1", 1)
    assert done is not None and done.review == REVIEW
    assert done.started_at == running.started_at
    assert done.finished_at == clock.now()
    assert await reviews.get("p1", 1, ReviewKind.RESULT) is None


async def test_a_result_review_is_kept_beside_the_plans(db: Backend, clock: ManualClock) -> None:
    reviews = PlanReviewStore(db)
    await reviews.finish("p1", 1, ReviewKind.PLAN, REVIEW, clock.now())
    down = PlanReview.unavailable("outage", model="m")
    await reviews.finish("p1", 1, ReviewKind.RESULT, down, clock.now())
    result = await reviews.get("p1", 1, ReviewKind.RESULT)
    assert result is not None and result.review == down


async def test_a_review_a_restart_interrupted_settles_as_unavailable(
    db: Backend, clock: ManualClock
) -> None:
    reviews = PlanReviewStore(db)
    started = clock.now()
    await reviews.start("p1", 2, ReviewKind.PLAN, started)
    stored = await reviews.get("p1", 2)
    assert stored is not None
    settled = stored.settled(started + timedelta(seconds=121), timedelta(seconds=120))
    assert settled is not None and settled.failure == INTERRUPTED
    assert settled.summary_line() == "Review unavailable"


async def test_the_approval_check_reads_a_review_never_started_as_running_then_lost(
    db: Backend, clock: ManualClock
) -> None:
    reviews = PlanReviewStore(db)
    submitted = clock.now()
    window = timedelta(seconds=150)
    running = await reviews.settled_review(
        "p1", 3, since=submitted, now=submitted + timedelta(seconds=5), window=window
    )
    assert running is None
    lost = await reviews.settled_review(
        "p1", 3, since=submitted, now=submitted + timedelta(seconds=151), window=window
    )
    assert lost is not None and not lost.available
    await reviews.finish("p1", 3, ReviewKind.PLAN, REVIEW, clock.now())
    kept = await reviews.settled_review(
        "p1", 3, since=submitted, now=submitted + timedelta(days=1), window=window
    )
    assert kept == REVIEW


async def test_a_review_started_as_holding_says_so_for_as_long_as_it_was_started_with(
    db: Backend, clock: ManualClock
) -> None:
    """The row, not the reader's settings, says whether a running review holds approval and
    for how long: a reader with a shorter window still sees it running."""
    reviews = PlanReviewStore(db)
    started = clock.now()
    assert await reviews.start("p1", 1, ReviewKind.PLAN, started, hold=timedelta(seconds=630))
    assert await reviews.start("p1", 2, ReviewKind.PLAN, started)
    assert await reviews.holds_while_running("p1", 1)
    assert not await reviews.holds_while_running("p1", 2)
    assert not await reviews.holds_while_running("p1", 3)
    short = timedelta(seconds=150)
    later = started + timedelta(seconds=600)
    assert await reviews.settled_review("p1", 1, since=started, now=later, window=short) is None
    lost = await reviews.settled_review("p1", 2, since=started, now=later, window=short)
    assert lost is not None and lost.failure == INTERRUPTED
    gone = later + timedelta(seconds=31)
    lost = await reviews.settled_review("p1", 1, since=started, now=gone, window=short)
    assert lost is not None and lost.failure == INTERRUPTED


async def test_the_conversation_since_a_moment_is_what_the_reviewer_digests(
    db: Backend, clock: ManualClock
) -> None:
    store = SqlStore(db)
    await store.create_agent(agent_record())
    await store.create_agent(agent_record("bob", channel_id=1002))
    conversations = ConversationStore(db)
    before = {"role": "user", "content": [{"type": "text", "text": "an older task"}]}
    await conversations.append("ada", before, clock.now())
    clock.advance(seconds=10)
    entered = clock.now()
    after = {"role": "user", "content": [{"type": "text", "text": "plan this"}]}
    await conversations.append("ada", after, entered)
    await conversations.append("bob", after, entered)
    assert await conversations.load_since("ada", entered) == [after]


async def test_a_review_made_again_after_a_restart_runs_from_its_new_start(
    db: Backend, clock: ManualClock
) -> None:
    reviews = PlanReviewStore(db)
    assert not await reviews.restart("p1", 4, ReviewKind.PLAN, clock.now()), "never started"
    await reviews.start("p1", 4, ReviewKind.PLAN, clock.now())
    clock.advance(seconds=600)
    assert await reviews.restart("p1", 4, ReviewKind.PLAN, clock.now())
    again = await reviews.get("p1", 4)
    assert again is not None and again.started_at == clock.now()
    assert again.settled(clock.now(), timedelta(seconds=150)) is None
    await reviews.finish("p1", 4, ReviewKind.PLAN, REVIEW, clock.now())
    assert not await reviews.restart("p1", 4, ReviewKind.PLAN, clock.now()), "already kept"
