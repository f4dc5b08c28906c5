"""Cron expressions and intervals in a time zone, across daylight-saving changes: a wall-clock
time stays on the wall clock, a time the spring change skips runs once just after the gap,
a time the autumn change repeats runs once, and an interval counts elapsed time."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta

import pytest

from plancord.core.recurrence import (
    BadRecurrence,
    local_time,
    next_runs,
    parse_cron,
    parse_interval,
    runs_between,
)

BERLIN = "Europe/Berlin"


def local(runs: list[datetime], tz: str = BERLIN) -> list[str]:
    return [local_time(at, tz) for at in runs]


def test_every_monday_at_nine_stays_at_nine_in_berlin_across_the_spring_change() -> None:
    cron = parse_cron("0 9 * * 1", BERLIN)
    runs = next_runs(cron, datetime(2026, 3, 20, tzinfo=UTC), 3)
    assert local(runs) == [
        "Mon 2026-03-23 09:00 CET",
        "Mon 2026-03-30 09:00 CEST",
        "Mon 2026-04-06 09:00 CEST",
    ]
    assert [at.astimezone(UTC).hour for at in runs] == [8, 7, 7]
    assert cron.words() == "every Monday at 09:00 Europe/Berlin"


def test_a_time_the_spring_change_skips_runs_once_right_after_the_gap() -> None:
    runs = next_runs(parse_cron("30 2 * * *", BERLIN), datetime(2026, 3, 27, 12, tzinfo=UTC), 3)
    assert local(runs) == [
        "Sat 2026-03-28 02:30 CET",
        "Sun 2026-03-29 03:00 CEST",
        "Mon 2026-03-30 02:30 CEST",
    ]


def test_a_time_the_autumn_change_repeats_runs_once() -> None:
    runs = next_runs(parse_cron("30 2 * * *", BERLIN), datetime(2026, 10, 24, 12, tzinfo=UTC), 2)
    assert local(runs) == ["Sun 2026-10-25 02:30 CEST", "Mon 2026-10-26 02:30 CET"]
    assert runs[1] - runs[0] == timedelta(hours=25)


def test_every_half_hour_goes_through_the_repeated_hour_twice_and_in_order() -> None:
    runs = next_runs(parse_cron("*/30 * * * *", BERLIN), datetime(2026, 10, 24, 23, tzinfo=UTC), 6)
    assert local(runs) == [
        "Sun 2026-10-25 01:30 CEST",
        "Sun 2026-10-25 02:00 CEST",
        "Sun 2026-10-25 02:30 CEST",
        "Sun 2026-10-25 02:00 CET",
        "Sun 2026-10-25 02:30 CET",
        "Sun 2026-10-25 03:00 CET",
    ]
    assert {b - a for a, b in itertools.pairwise(runs)} == {timedelta(minutes=30)}


def test_new_york_changes_on_its_own_dates() -> None:
    runs = next_runs(
        parse_cron("0 9 * * 1-5", "America/New_York"), datetime(2026, 3, 6, 15, tzinfo=UTC), 2
    )
    assert local(runs, "America/New_York") == [
        "Mon 2026-03-09 09:00 EDT",
        "Tue 2026-03-10 09:00 EDT",
    ]
    assert parse_cron("0 9 * * 1-5", "America/New_York").words() == (
        "every weekday at 09:00 America/New_York"
    )


def test_an_interval_counts_elapsed_time_across_the_change() -> None:
    anchor = datetime(2026, 3, 28, 23, tzinfo=UTC)
    every = parse_interval("6h", BERLIN, anchor)
    runs = next_runs(every, anchor, 3)
    assert [b - a for a, b in zip([anchor, *runs], runs, strict=False)] == [timedelta(hours=6)] * 3
    assert every.words() == "every 6 hours, from Sun 2026-03-29 00:00 CET"


def test_missed_runs_are_counted_not_listed() -> None:
    every = parse_interval("15m", "UTC", datetime(2026, 1, 1, tzinfo=UTC))
    start = datetime(2026, 1, 1, 0, 15, tzinfo=UTC)
    assert runs_between(every, start, start + timedelta(hours=2), 1000) == 9
    assert runs_between(every, start, start + timedelta(days=365), 50) == 50


@pytest.mark.parametrize(
    ("cron", "tz", "says"),
    [
        ("0 9 * *", "UTC", "five fields"),
        ("61 * * * *", "UTC", "Bad minute"),
        ("0 0 30 2 *", "UTC", "Bad day-of-month"),
        ("* * * * * *", "UTC", "five fields"),
        ("* * * * *", "UTC", "more often than every 15 minutes"),
        ("0,5 9 * * 1", "UTC", "more often than every 15 minutes"),
        ("0 9 * * 1", "Mars/Olympus", "not a time zone"),
        ("0 9 * * 1", "../../etc/passwd", "not a time zone"),
    ],
)
def test_what_cannot_be_read_is_refused_with_a_reason(cron: str, tz: str, says: str) -> None:
    with pytest.raises(BadRecurrence, match=says):
        parse_cron(cron, tz)


@pytest.mark.parametrize("text", ["5m", "2 years", "0h", "soon", "367d"])
def test_intervals_outside_fifteen_minutes_to_a_year_are_refused(text: str) -> None:
    with pytest.raises(BadRecurrence):
        parse_interval(text, "UTC", datetime(2026, 1, 1, tzinfo=UTC))
