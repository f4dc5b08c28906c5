"""When a schedule runs: a five-field cron expression read in a time zone, or a fixed
interval, each parsed once into a value that answers "the next run after this instant" and
says itself in words.

Cron expressions are evaluated by ``cronsim`` on the zone's wall clock, so "every Monday at
09:00 Europe/Berlin" stays at 09:00 across daylight saving: a time the spring change skips
runs at the first minute after the gap, and a time the autumn change repeats runs once. An
interval counts elapsed time from its anchor (the creation), whatever the wall clock does.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from itertools import pairwise
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from cronsim import CronSim, CronSimError

from plancord.core.errors import PlancordError

MIN_INTERVAL = timedelta(minutes=15)
"""The shortest time between two runs of a schedule: each run is a plan someone must read."""
MAX_INTERVAL = timedelta(days=366)
_GAP_CHECKED = 64
"""How many consecutive runs of a cron expression are checked for a gap under the minimum."""
_INTERVAL = re.compile(r"^\s*(\d{1,5})\s*(m|min|minutes?|h|hours?|d|days?|w|weeks?)\s*$", re.I)
_UNITS = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}
_DAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]


class BadRecurrence(PlancordError):
    """A cron expression, interval or time zone that cannot be read; the text says why."""


def zone(name: str) -> ZoneInfo:
    """The IANA time zone ``name`` (``Europe/Berlin``, ``UTC``), or ``BadRecurrence``."""
    text = name.strip()
    if not text or len(text) > 64 or text.startswith(("/", ".")) or ".." in text:
        raise BadRecurrence(f"{name!r} is not a time zone; use a name like Europe/Berlin or UTC.")
    try:
        return ZoneInfo(text)
    except (ZoneInfoNotFoundError, ValueError):
        raise BadRecurrence(
            f"{name!r} is not a time zone; use a name like Europe/Berlin or UTC."
        ) from None


@dataclass(frozen=True, slots=True)
class Cron:
    """A five-field cron expression (minute hour day-of-month month day-of-week)."""

    expression: str
    tz: str

    def after(self, instant: datetime) -> datetime:
        """The first run strictly after ``instant``, in UTC. (Aware datetimes of one zone
        compare by wall clock, which the autumn change repeats, so every comparison here
        is between UTC instants.)"""
        moment = instant.astimezone(UTC)
        local = moment.astimezone(zone(self.tz)).replace(second=0, microsecond=0)
        found: datetime = next(CronSim(self.expression, local)).astimezone(UTC)
        while found <= moment:
            local = found.astimezone(zone(self.tz))
            found = next(CronSim(self.expression, local)).astimezone(UTC)
        return found

    def words(self) -> str:
        return f"{_cron_words(self.expression)} {self.tz}"


@dataclass(frozen=True, slots=True)
class Interval:
    """Every ``every``, counted from ``anchor``; ``tz`` only for showing the times."""

    every: timedelta
    anchor: datetime
    tz: str

    def after(self, instant: datetime) -> datetime:
        if instant < self.anchor:
            return self.anchor
        steps = (instant - self.anchor) // self.every + 1
        return self.anchor + steps * self.every

    def words(self) -> str:
        return f"every {_span(self.every)}, from {local_time(self.anchor, self.tz)}"


Recurrence = Cron | Interval


def parse_cron(expression: str, tz: str) -> Cron:
    """``expression`` checked: five fields that ``cronsim`` reads and that name a time that
    exists; ``tz`` checked as a time zone."""
    zone(tz)
    fields = expression.split()
    if len(fields) != 5:
        raise BadRecurrence(
            f"{expression!r} is not a cron expression of five fields "
            "(minute hour day-of-month month day-of-week), such as `0 9 * * 1`."
        )
    text = " ".join(fields)
    try:
        cron = Cron(text, tz.strip())
        cron.after(datetime(2026, 1, 1).astimezone(zone(tz)))
    except (CronSimError, StopIteration) as exc:
        raise BadRecurrence(
            f"{expression!r} is not a cron expression cronsim reads: {exc}."
        ) from None
    runs = next_runs(cron, datetime(2026, 1, 1, tzinfo=UTC), _GAP_CHECKED)
    if any(later - earlier < MIN_INTERVAL for earlier, later in pairwise(runs)):
        raise BadRecurrence(
            f"{expression!r} runs more often than every 15 minutes; each run is a plan "
            "someone must read."
        )
    return cron


def parse_interval(text: str, tz: str, anchor: datetime) -> Interval:
    """``text`` such as ``6h``, ``30 minutes``, ``1 week``: between 15 minutes and a year."""
    zone(tz)
    found = _INTERVAL.match(text)
    if found is None:
        raise BadRecurrence(f"{text!r} is not an interval; write one such as `6h`, `90m` or `1d`.")
    unit = _UNITS[found.group(2)[0].lower()]
    every = timedelta(**{unit: int(found.group(1))})
    if not MIN_INTERVAL <= every <= MAX_INTERVAL:
        raise BadRecurrence("An interval must be between 15 minutes and a year.")
    return Interval(every, anchor, tz.strip())


def next_runs(recurrence: Recurrence, after: datetime, count: int) -> list[datetime]:
    """The ``count`` runs following ``after``."""
    return list(_take(_runs(recurrence, after), count))


def runs_between(recurrence: Recurrence, start: datetime, end: datetime, limit: int) -> int:
    """How many runs fall in ``[start, end]`` (at most ``limit``: a count, not a list)."""
    count = 0
    current = start
    while count < limit and current <= end:
        count += 1
        current = recurrence.after(current)
    return count


def local_time(instant: datetime, tz: str) -> str:
    """``Mon 2026-01-12 09:00 CET``: an instant on the schedule's wall clock."""
    return instant.astimezone(zone(tz)).strftime("%a %Y-%m-%d %H:%M %Z")


def _runs(recurrence: Recurrence, after: datetime) -> Iterator[datetime]:
    current = after
    while True:
        current = recurrence.after(current)
        yield current


def _take(runs: Iterator[datetime], count: int) -> Iterator[datetime]:
    for _ in range(count):
        yield next(runs)


def _span(every: timedelta) -> str:
    minutes = int(every.total_seconds() // 60)
    for size, name in ((7 * 24 * 60, "week"), (24 * 60, "day"), (60, "hour"), (1, "minute")):
        if minutes % size == 0:
            n = minutes // size
            return name if n == 1 else f"{n} {name}s"
    return f"{minutes} minutes"  # pragma: no cover - every minute count divides by 1


def _cron_words(expression: str) -> str:
    """The common shapes said plainly ("every Monday at 09:00", "every day at 06:30");
    anything else as ``cronsim`` explains it."""
    minute, hour, day, month, dow = expression.split()
    if minute.isdigit() and hour.isdigit() and day == "*" and month == "*":
        at = f"at {int(hour):02d}:{int(minute):02d}"
        if dow == "*":
            return f"every day {at}"
        if dow in ("1-5", "MON-FRI"):
            return f"every weekday {at}"
        days = _day_names(dow)
        if days is not None:
            return f"every {days} {at}"
    explained: str = CronSim(expression, datetime(2026, 1, 1)).explain()
    return explained[0].lower() + explained[1:]


def _day_names(dow: str) -> str | None:
    names: list[str] = []
    for part in dow.split(","):
        key = part.upper()
        if part.isdigit() and 0 <= int(part) <= 7:
            names.append(_DAYS[int(part) % 7])
        elif key[:3] in ("SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT") and len(key) == 3:
            names.append(_DAYS[["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"].index(key)])
        else:
            return None
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
