"""When a plan's review holds its approval back, and what releases it."""

from __future__ import annotations

from plancord.core.review import Finding, PlanReview, Severity
from plancord.core.review_gate import review_hold
from plancord.core.settings import ReviewMode, ReviewSettings

BLOCKER = Finding(severity=Severity.BLOCKER, step=1, text="Deletes production data.")
CONCERN = Finding(severity=Severity.CONCERN, step=2, text="No test.")
ADVISE = ReviewSettings()
ACKNOWLEDGE = ReviewSettings(mode=ReviewMode.REQUIRE_ACKNOWLEDGEMENT)
REQUIRED = ReviewSettings(require_review=True)
BLOCKED = PlanReview(model="m", findings=(BLOCKER, CONCERN))
DOWN = PlanReview.unavailable("the reviewer's call failed: overloaded", model="m")


def test_review_off_or_advice_never_holds() -> None:
    assert review_hold(BLOCKED, None) is None
    assert review_hold(BLOCKED, ADVISE) is None
    assert review_hold(None, ADVISE) is None
    assert review_hold(DOWN, ADVISE) is None


def test_a_blocker_asks_a_second_click_naming_the_count() -> None:
    hold = review_hold(BLOCKED, ACKNOWLEDGE)
    assert hold is not None
    assert hold.acknowledgement == "Approve despite 1 blocker"
    assert review_hold(BLOCKED, ACKNOWLEDGE, acknowledged_blockers=1) is None


def test_an_acknowledgement_does_not_carry_over_to_more_blockers() -> None:
    more = PlanReview(model="m", findings=(BLOCKER, BLOCKER))
    hold = review_hold(more, ACKNOWLEDGE, acknowledged_blockers=1)
    assert hold is not None and hold.acknowledgement == "Approve despite 2 blockers"


def test_a_running_review_holds_when_blockers_need_acknowledging() -> None:
    hold = review_hold(None, ACKNOWLEDGE)
    assert hold is not None and hold.acknowledgement is None


def test_a_running_review_started_as_holding_holds_without_the_settings() -> None:
    hold = review_hold(None, None, held_while_running=True)
    assert hold is not None and hold.acknowledgement is None
    assert "not finished" in hold.reason
    assert review_hold(None, None) is None


def test_no_blocker_no_second_click() -> None:
    assert review_hold(PlanReview(model="m", findings=(CONCERN,)), ACKNOWLEDGE) is None


def test_an_outage_holds_only_when_a_review_is_required() -> None:
    assert review_hold(DOWN, ACKNOWLEDGE) is None
    hold = review_hold(DOWN, REQUIRED)
    assert hold is not None and hold.acknowledgement is None
    assert "overloaded" in hold.reason
    pending = review_hold(None, REQUIRED)
    assert pending is not None and "not finished" in pending.reason
