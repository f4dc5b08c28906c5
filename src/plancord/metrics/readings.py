"""What the metrics report, read at once into one immutable value.

Why this exists apart from the endpoint: the numbers come from two places, the store (the
whole database: agents by phase, plans and results waiting, model usage, drift events) and
this process's memory (the gate's refusals, Discord's failed requests, the event loop's
lag). Both are read on the event loop in one short coroutine, so no counter is read while
the loop changes it, and the HTTP thread only ever sees a finished ``Readings``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

from plancord.core.cost import Price, cost_of
from plancord.core.planning import Phase
from plancord.core.ports import ModelUsage
from plancord.storage.backend import Backend
from plancord.storage.codec import parse_ts


@dataclass(frozen=True, slots=True)
class Usage:
    """One agent's use of one model, summed over every call."""

    agent: str
    model: str
    usage: ModelUsage
    dollars: float | None
    """None when ``anthropic.prices`` has no price for the model."""


@dataclass(frozen=True, slots=True)
class Readings:
    phases: Mapping[str, int] = field(default_factory=dict)
    plans_waiting: int = 0
    oldest_plan_seconds: float = 0.0
    results_waiting: int = 0
    usage: tuple[Usage, ...] = ()
    drift: Mapping[tuple[str, str], int] = field(default_factory=dict)
    """Drift events and checkpoint answers by ``(kind, decision)``."""
    refusals: Mapping[tuple[str, str, str], int] = field(default_factory=dict)
    decided: Mapping[tuple[str, str, str], int] = field(default_factory=dict)
    """Tool calls by ``(agent, decider, outcome)``: what decided each (``core.decider``)."""
    discord_failures: Mapping[tuple[str, str, str], int] = field(default_factory=dict)
    discord_connected: bool = False
    loop_lag_seconds: float = 0.0
    schedule_runs: Mapping[str, int] = field(default_factory=dict)
    """Scheduled runs by outcome (started, queued, skipped-busy, …)."""
    next_schedule_runs: Mapping[tuple[str, str], float] = field(default_factory=dict)
    """Each active schedule's next run, by ``(agent, schedule)``, as a Unix time."""
    owed_duties: Mapping[str, int] = field(default_factory=dict)
    """The writes owed until they land (``owed_duties``), by kind."""


_PHASES = """
SELECT COALESCE(s.phase, 'inactive'), COUNT(*) FROM agents a
LEFT JOIN planning_state s ON s.agent = a.name GROUP BY COALESCE(s.phase, 'inactive')
"""
_PLANS_WAITING = """
SELECT COUNT(*), MIN(r.submitted_at) FROM planning_state s
JOIN plan_revisions r ON r.plan_id = s.plan_id AND r.revision = s.revision
WHERE s.phase = 'submitted'
"""
_RESULTS_WAITING = "SELECT COUNT(*) FROM executions WHERE result = 'waiting'"
_USAGE = """
SELECT agent, model, SUM(input_tokens), SUM(output_tokens), SUM(cache_read_tokens),
       SUM(cache_write_tokens)
FROM model_usage GROUP BY agent, model ORDER BY agent, model
"""
_SCHEDULE_RUNS = "SELECT outcome, COUNT(*) FROM schedule_runs GROUP BY outcome"
_OWED = "SELECT kind, COUNT(*) FROM owed_duties GROUP BY kind"
_NEXT_RUNS = "SELECT agent, id, next_run_at FROM schedules WHERE state = 'active'"
_DRIFT = """
SELECT kind, COALESCE(decision, 'undecided'), COUNT(*) FROM execution_events
WHERE kind <> 'command' GROUP BY kind, COALESCE(decision, 'undecided')
"""


async def read_store(db: Backend, now: datetime, prices: Mapping[str, Price]) -> Readings:
    """Agents by phase, plans waiting and the oldest's age, results waiting, usage by agent
    and model with its cost, drift events, scheduled runs by outcome and each schedule's
    next run: a handful of aggregate queries (the parts
    kept in memory are left empty)."""
    phases = {phase.value: 0 for phase in Phase}
    for phase, count in await db.fetchall(_PHASES):
        phases[str(phase)] = int(count)
    count, oldest = await db.fetchone(_PLANS_WAITING)
    submitted = parse_ts(oldest) if oldest else None
    age = max(0.0, (now - submitted).total_seconds()) if submitted is not None else 0.0
    (results,) = await db.fetchone(_RESULTS_WAITING)
    usage = []
    for agent, model, inp, out, read, write in await db.fetchall(_USAGE):
        used = ModelUsage(int(inp), int(out), int(read), int(write))
        cost = cost_of([(str(model), used)], prices)
        usage.append(Usage(str(agent), str(model), used, cost.dollars if cost else None))
    drift = {(str(k), str(d)): int(n) for k, d, n in await db.fetchall(_DRIFT)}
    runs = {str(outcome): int(n) for outcome, n in await db.fetchall(_SCHEDULE_RUNS)}
    owed = {str(kind): int(n) for kind, n in await db.fetchall(_OWED)}
    upcoming = {}
    for agent, schedule, at in await db.fetchall(_NEXT_RUNS):
        when = parse_ts(at)
        if when is not None:
            upcoming[(str(agent), str(schedule))] = when.timestamp()
    return Readings(
        phases=phases,
        plans_waiting=int(count or 0),
        oldest_plan_seconds=age,
        results_waiting=int(results or 0),
        usage=tuple(usage),
        drift=drift,
        schedule_runs=runs,
        next_schedule_runs=upcoming,
        owed_duties=owed,
    )
