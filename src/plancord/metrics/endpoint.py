"""The Prometheus endpoint: one registry per ``App``, served over HTTP from its own thread.

Why this exists: an operator running the bot for a team needs numbers to watch and alert
on (plans and results waiting, tokens and money, refusals, drift, Discord failures, the
event loop's lag). The endpoint is off unless ``metrics.enabled``; it listens on
``metrics.host`` (the loopback address by default).

Nothing a scrape does blocks the event loop: the HTTP server runs in a thread of its own,
and each scrape hands one short coroutine to the loop (``Readings``: a few aggregate
queries and a copy of the in-memory counters), waiting for it at most
``REFRESH_TIMEOUT_SECONDS``. When the loop does not answer in time the scrape reports the
last readings and ``plancord_metrics_stale 1``. How long the loop took to start that
coroutine is its lag. Each ``App`` has its own ``CollectorRegistry``, so several bots (or
tests) in one process never share a metric.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import replace
from typing import Any

from prometheus_client import CollectorRegistry, start_http_server
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from plancord.core.cost import Price
from plancord.core.ports import Clock
from plancord.metrics.readings import Readings, read_store
from plancord.storage.backend import Backend

log = logging.getLogger(__name__)

REFRESH_TIMEOUT_SECONDS = 5.0
"""How long a scrape waits for the event loop to read the numbers."""

Refusals = Callable[[], Mapping[tuple[str, str, str], int]]


class PlancordCollector(Collector):
    """The bot's metrics, read on the loop at each scrape and rendered in the HTTP thread."""

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        db: Backend,
        clock: Clock,
        prices: Mapping[str, Price],
        refusals: Refusals,
        decided: Refusals = dict,
    ) -> None:
        self._loop = loop
        self._db = db
        self._clock = clock
        self._prices = prices
        self._refusals = refusals
        self._decided = decided
        self.discord_failures: Counter[tuple[str, str, str]] = Counter()
        """Failed Discord requests by ``(method, route, status)``; counted on the loop."""
        self.discord_connected: Callable[[], bool] = lambda: False
        """Whether the gateway is connected (the bot sets it once it exists)."""
        self._last = Readings()

    def discord_failed(self, method: str, route: str, status: str) -> None:
        self.discord_failures[(method, route, status)] += 1

    async def read(self, asked_at: float) -> Readings:
        """Everything the metrics show, read on the loop; ``asked_at`` (``time.monotonic``)
        is when the scrape asked, so the wait until now is the loop's lag."""
        lag = max(0.0, time.monotonic() - asked_at)
        stored = await read_store(self._db, self._clock.now(), self._prices)
        return replace(
            stored,
            refusals=dict(self._refusals()),
            decided=dict(self._decided()),
            discord_failures=dict(self.discord_failures),
            discord_connected=self.discord_connected(),
            loop_lag_seconds=lag,
        )

    def _refresh(self) -> bool:
        """New readings from the loop, waiting a bounded time; False when they are stale."""
        if self._loop.is_closed():
            return False
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is self._loop:  # asked on the loop itself: it cannot wait for itself
            return False
        future = asyncio.run_coroutine_threadsafe(self.read(time.monotonic()), self._loop)
        try:
            self._last = future.result(REFRESH_TIMEOUT_SECONDS)
        except FutureTimeout:
            future.cancel()
            log.warning("metrics: the event loop did not answer in %ss", REFRESH_TIMEOUT_SECONDS)
            return False
        except Exception:
            log.exception("metrics: reading the store failed")
            return False
        return True

    def describe(self) -> list[Metric]:
        return []

    def collect(self) -> Iterator[Metric]:
        fresh = self._refresh()
        yield from families(self._last, stale=not fresh)


def families(readings: Readings, *, stale: bool = False) -> Iterator[Metric]:
    """``readings`` as Prometheus metric families."""
    phases = GaugeMetricFamily("plancord_agents", "Agents by planning phase.", labels=["phase"])
    for phase, count in sorted(readings.phases.items()):
        phases.add_metric([phase], count)
    yield phases
    yield GaugeMetricFamily(
        "plancord_plans_waiting_for_approval",
        "Submitted plans waiting for a decision.",
        value=readings.plans_waiting,
    )
    yield GaugeMetricFamily(
        "plancord_oldest_plan_waiting_seconds",
        "How long the oldest submitted plan has waited (0 when none waits).",
        value=readings.oldest_plan_seconds,
    )
    yield GaugeMetricFamily(
        "plancord_results_waiting",
        "Executed plans whose result waits for Merge or Discard.",
        value=readings.results_waiting,
    )
    tokens = CounterMetricFamily(
        "plancord_model_tokens",
        "Model tokens used, by agent, model and kind (input, output, cache_read, cache_write).",
        labels=["agent", "model", "kind"],
    )
    dollars = CounterMetricFamily(
        "plancord_model_cost_dollars",
        "Estimated cost in dollars by agent and model (models with anthropic.prices only).",
        labels=["agent", "model"],
    )
    for used in readings.usage:
        kinds = {
            "input": used.usage.input_tokens,
            "output": used.usage.output_tokens,
            "cache_read": used.usage.cache_read_input_tokens,
            "cache_write": used.usage.cache_creation_input_tokens,
        }
        for kind, count in kinds.items():
            tokens.add_metric([used.agent, used.model, kind], count)
        if used.dollars is not None:
            dollars.add_metric([used.agent, used.model], used.dollars)
    yield tokens
    yield dollars
    yield _counter(
        "plancord_tool_refusals",
        "Tool calls refused, by agent, tool kind and rule (plan_mode, policy or drift).",
        ["agent", "tool_kind", "rule"],
        readings.refusals,
    )
    yield _counter(
        "plancord_tool_calls_decided",
        "Tool calls by agent, what decided them (gate, filter, rule, profile, human, drift, "
        "stop) and their outcome; human counts how often people are asked.",
        ["agent", "decider", "outcome"],
        readings.decided,
    )
    yield _counter(
        "plancord_drift_events",
        "Drift events and checkpoint answers during execution, by kind and decision.",
        ["kind", "decision"],
        readings.drift,
    )
    yield _counter(
        "plancord_discord_request_failures",
        "Discord REST requests that failed, by method, route and status.",
        ["method", "route", "status"],
        readings.discord_failures,
    )
    yield _counter(
        "plancord_schedule_runs",
        "Scheduled plan runs by outcome (started, queued, skipped-busy, skipped-missed, …).",
        ["outcome"],
        {(outcome,): n for outcome, n in readings.schedule_runs.items()},
    )
    upcoming = GaugeMetricFamily(
        "plancord_schedule_next_run_timestamp_seconds",
        "When each active schedule runs next, as a Unix time.",
        labels=["agent", "schedule"],
    )
    for (agent, schedule), at in sorted(readings.next_schedule_runs.items()):
        upcoming.add_metric([agent, schedule], at)
    yield upcoming
    owed = GaugeMetricFamily(
        "plancord_owed_duties",
        "Writes owed until they land (a result to open, an execution to end, a card to "
        "mark), by kind; above 0 for long means a database or Discord refusing them.",
        labels=["kind"],
    )
    for kind, count in sorted(readings.owed_duties.items()):
        owed.add_metric([kind], count)
    yield owed
    yield GaugeMetricFamily(
        "plancord_discord_connected",
        "1 while the bot's gateway connection to Discord is up, 0 before the login and "
        "during an outage.",
        value=1 if readings.discord_connected else 0,
    )
    yield GaugeMetricFamily(
        "plancord_event_loop_lag_seconds",
        "How long the event loop took to start the metrics' read at the last scrape.",
        value=readings.loop_lag_seconds,
    )
    yield GaugeMetricFamily(
        "plancord_metrics_stale",
        "1 when the event loop did not answer this scrape in time (the numbers are older).",
        value=1 if stale else 0,
    )


def _counter(
    name: str, text: str, labels: list[str], counts: Mapping[Any, int]
) -> CounterMetricFamily:
    family = CounterMetricFamily(name, text, labels=labels)
    for key, count in sorted(counts.items()):
        family.add_metric(list(key), count)
    return family


class MetricsEndpoint:
    """The registry and its HTTP server; ``start`` binds, ``stop`` closes."""

    def __init__(self, collector: PlancordCollector) -> None:
        self.collector = collector
        self.registry = CollectorRegistry(auto_describe=False)
        self.registry.register(collector)
        self._server: Any = None
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        """The port it listens on (the one the system picked when configured as 0)."""
        return int(self._server.server_port) if self._server is not None else 0

    def start(self, host: str, port: int) -> None:
        """Bind and serve; ``OSError`` when the address is taken or cannot be bound."""
        self._server, self._thread = start_http_server(port, addr=host, registry=self.registry)
        log.info("metrics: serving on http://%s:%s/metrics", host, self.port)

    async def stop(self) -> None:
        server, thread = self._server, self._thread
        self._server = self._thread = None
        if server is None:
            return
        await asyncio.to_thread(_shut, server, thread)


def _shut(server: Any, thread: threading.Thread | None) -> None:
    server.shutdown()
    server.server_close()
    if thread is not None:
        thread.join(REFRESH_TIMEOUT_SECONDS + 1)
