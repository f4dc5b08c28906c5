"""The Prometheus endpoint scraped over HTTP while the real bot runs a SimCord scenario:
each number is checked against what the scenario did (a plan submitted and waiting, a call
the gate refused, the tokens the fake Messages API reported, a Discord request that failed).
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import aiohttp
import discord
import pytest
from prometheus_client.parser import text_string_to_metric_families

from plancord.app import MetricsUnavailable
from plancord.core.execution import DriftDecision, ExecutionEventKind
from plancord.core.planning import Actor
from plancord.core.ports import SystemClock
from plancord.metrics import MetricsEndpoint, PlancordCollector
from plancord.storage.db import Database
from plancord.storage.engines import migrate_database
from plancord.storage.executions import ExecutionStore
from plancord.testing.anthropic_server import ToolCall, text_turn, tool_turn
from plancord.testing.sim import MODEL
from tests.discord_bot.result_card.completed import completed, record
from tests.world import PlanScene, Worlds, plan_scene_in

PLAN = {
    "summary": "Add a greeting module",
    "steps": [{"description": "Write greet.py", "tools": ["create_file"], "files": ["greet.py"]}],
}
METRICS = {"metrics": {"enabled": True, "port": 0}}
PRICES = {"anthropic": {"prices": {MODEL: {"input": 3.0, "output": 15.0}}}}
Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


async def scrape(scene: PlanScene) -> Samples:
    metrics = scene.app.metrics
    assert metrics is not None
    return await scrape_port(metrics.port)


async def scrape_port(port: int) -> Samples:
    async with (
        aiohttp.ClientSession() as session,
        session.get(f"http://127.0.0.1:{port}/metrics") as response,
    ):
        assert response.status == 200
        text = await response.text()
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)


def series(samples: Samples, name: str) -> Iterator[tuple[dict[str, str], float]]:
    for (found, labels), number in samples.items():
        if found == name:
            yield dict(labels), number


@pytest.fixture
def scene_with_metrics(worlds: Worlds) -> Callable[..., Any]:
    async def make(script: Any, config: dict[str, Any] | None = None) -> PlanScene:
        return await plan_scene_in(await worlds.start(script, config={**METRICS, **(config or {})}))

    return make


async def test_a_submitted_plan_and_its_tokens(scene_with_metrics: Any) -> None:
    scene: PlanScene = await scene_with_metrics(
        [
            tool_turn(ToolCall("create_file", {"path": "x.py", "content": "x = 1\n"})),
            tool_turn(ToolCall("submit_plan", {"plan": PLAN})),
        ],
        PRICES,
    )
    before = await scrape(scene)
    assert value(before, "plancord_agents", phase="inactive") == 1
    assert value(before, "plancord_plans_waiting_for_approval") == 0
    assert value(before, "plancord_metrics_stale") == 0

    await scene.ana.slash(scene.channel, "plan start", task="add a greeting module")
    submitted = await scrape(scene)

    assert value(submitted, "plancord_agents", phase="submitted") == 1
    assert value(submitted, "plancord_agents", phase="inactive") == 0
    assert value(submitted, "plancord_plans_waiting_for_approval") == 1
    assert value(submitted, "plancord_results_waiting") == 0
    refused = {
        tuple(sorted(labels.items())): n
        for labels, n in series(submitted, "plancord_tool_refusals_total")
    }
    assert refused == {(("agent", "ada"), ("rule", "plan_mode"), ("tool_kind", "mutating")): 1.0}

    reported = {"input": 0, "output": 0, "cache_read": 0, "cache_write": 0}
    for message in scene.world.server.responses:
        usage = message["usage"]
        reported["input"] += usage["input_tokens"]
        reported["output"] += usage["output_tokens"]
        reported["cache_read"] += usage.get("cache_read_input_tokens") or 0
        reported["cache_write"] += usage.get("cache_creation_input_tokens") or 0
    assert reported["input"] + reported["output"] > 0
    for kind, tokens in reported.items():
        shown = value(submitted, "plancord_model_tokens_total", agent="ada", model=MODEL, kind=kind)
        assert shown == tokens, kind
    billed = reported["input"] + 1.25 * reported["cache_write"] + 0.1 * reported["cache_read"]
    dollars = (billed * 3.0 + reported["output"] * 15.0) / 1e6
    shown = value(submitted, "plancord_model_cost_dollars_total", agent="ada", model=MODEL)
    assert shown == pytest.approx(dollars)

    await scene.env.advance_time(600)
    later = await scrape(scene)
    age = value(later, "plancord_oldest_plan_waiting_seconds")
    assert age - value(submitted, "plancord_oldest_plan_waiting_seconds") == pytest.approx(600)

    await scene.app.planning.cancel("ada", Actor.user(scene.ana.id, "ana"), "done looking")
    rejected = await scrape(scene)
    assert value(rejected, "plancord_plans_waiting_for_approval") == 0
    assert value(rejected, "plancord_oldest_plan_waiting_seconds") == 0
    assert value(rejected, "plancord_agents", phase="inactive") == 1


async def test_a_failed_discord_request_is_counted(scene_with_metrics: Any) -> None:
    scene: PlanScene = await scene_with_metrics([text_turn("hi")])
    scene.env.inject_error("GET", "/channels/*", status=503, message="unavailable")
    route = discord.http.Route("GET", "/channels/{channel_id}", channel_id=scene.channel.id)

    with pytest.raises(discord.HTTPException):
        await scene.world.bot.http.request(route)

    samples = await scrape(scene)
    failures = value(
        samples,
        "plancord_discord_request_failures_total",
        method="GET",
        route="/channels/{channel_id}",
        status="503",
    )
    assert failures == 1
    assert value(samples, "plancord_event_loop_lag_seconds") >= 0


async def test_two_endpoints_in_one_process_keep_their_own_numbers(
    worlds: Worlds, tmp_path: Path
) -> None:
    scene = await plan_scene_in(await worlds.start([], config=METRICS))
    await migrate_database(tmp_path / "other.db")
    async with await Database.open(tmp_path / "other.db") as db:
        loop = asyncio.get_running_loop()
        other = MetricsEndpoint(PlancordCollector(loop, db, SystemClock(), {}, dict))
        other.start("127.0.0.1", 0)
        try:
            assert scene.app.metrics is not None
            assert other.registry is not scene.app.metrics.registry
            assert value(await scrape(scene), "plancord_agents", phase="inactive") == 1
            assert value(await scrape_port(other.port), "plancord_agents", phase="inactive") == 0
        finally:
            await other.stop()


async def test_a_taken_port_is_one_error_naming_the_setting(worlds: Worlds) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(MetricsUnavailable, match=rf"127\.0\.0\.1:{port}.*metrics\.port"):
            await worlds.start([], config={"metrics": {"enabled": True, "port": port}})


async def test_off_by_default(worlds: Worlds) -> None:
    scene = await plan_scene_in(await worlds.start([]))
    assert scene.app.metrics is None
    assert scene.app.config.metrics.host == "127.0.0.1"


DRIFTING = (
    tool_turn(ToolCall("create_file", {"path": "greet.py", "content": "def hello():\n    pass\n"})),
    tool_turn(ToolCall("bash_execute", {"command": "touch made-by-shell"})),
    tool_turn(ToolCall("complete_plan", {"summary": "greeted"})),
    text_turn("Done."),
)


async def test_an_executed_plan_its_drift_and_its_waiting_result(worlds: Worlds) -> None:
    async def make(script: Any = (), **options: Any) -> PlanScene:
        return await plan_scene_in(await worlds.start(script, config=METRICS, **options))

    scene, workspace = await completed(make, work=DRIFTING, plan_mode={"drift": "refuse"})
    assert not (workspace / "made-by-shell").exists()
    events = await ExecutionStore(scene.app.db).events((await record(scene)).plan_id)
    drifted = [e for e in events if e.kind is ExecutionEventKind.DRIFT]
    assert [e.decision for e in drifted] == [DriftDecision.REFUSED]

    samples = await scrape(scene)

    assert value(samples, "plancord_results_waiting") == 1
    assert value(samples, "plancord_agents", phase="inactive") == 1
    assert value(samples, "plancord_drift_events_total", kind="drift", decision="refused") == 1
    assert sum(n for _, n in series(samples, "plancord_drift_events_total")) == 1
    refusals = list(series(samples, "plancord_tool_refusals_total"))
    assert [(labels["agent"], labels["rule"], n) for labels, n in refusals] == [
        ("ada", "drift", 1.0)
    ]

    found = await record(scene)
    await scene.app.runtime.results.discard(found.plan_id, found.result_version, Actor.operator())
    assert value(await scrape(scene), "plancord_results_waiting") == 0


async def test_a_call_the_permission_profile_denies(scene_with_metrics: Any) -> None:
    scene: PlanScene = await scene_with_metrics(
        [
            tool_turn(ToolCall("create_file", {"path": "x.py", "content": "x = 1\n"})),
            text_turn("not allowed, fine"),
        ]
    )
    record = await scene.app.store.get_agent("ada")
    profile = {"preset": "open", "deny": ["tool:create_file:.*"]}
    await scene.app.store.update_agent(record.model_copy(update={"permission_profile": profile}))

    await scene.ana.send(scene.channel, "make a file")

    assert not (scene.app.manager.workspace_of("ada") / "x.py").exists()
    refusals = list(series(await scrape(scene), "plancord_tool_refusals_total"))
    assert refusals == [({"agent": "ada", "tool_kind": "mutating", "rule": "policy"}, 1.0)]


async def test_the_loop_lag_is_how_long_the_loop_kept_the_read_waiting(
    scene_with_metrics: Any,
) -> None:
    scene: PlanScene = await scene_with_metrics([])
    metrics = scene.app.metrics
    assert metrics is not None
    asking = threading.Event()

    def scrape_from_a_thread() -> list[Any]:
        asking.set()
        return list(metrics.registry.collect())

    scraped = asyncio.get_running_loop().run_in_executor(None, scrape_from_a_thread)
    asking.wait(30)
    time.sleep(0.5)  # noqa: ASYNC251 - blocks the loop on purpose: the read waits for it
    families = {family.name: family for family in await scraped}

    assert families["plancord_event_loop_lag_seconds"].samples[0].value > 0.1
    assert families["plancord_metrics_stale"].samples[0].value == 0


async def test_asked_on_the_loop_itself_the_last_readings_are_marked_stale(
    scene_with_metrics: Any,
) -> None:
    scene: PlanScene = await scene_with_metrics([])
    metrics = scene.app.metrics
    assert metrics is not None
    await scrape(scene)  # readings exist now

    families = {family.name: family for family in metrics.registry.collect()}

    assert families["plancord_metrics_stale"].samples[0].value == 1
    assert families["plancord_agents"].samples  # the previous readings, not nothing


async def test_calls_are_counted_by_what_decided_them(scene_with_metrics: Any) -> None:
    scene: PlanScene = await scene_with_metrics(
        [
            tool_turn(ToolCall("bash_execute", {"command": "ls"})),
            tool_turn(ToolCall("create_file", {"path": "x.py", "content": "x = 1\n"})),
            text_turn("done"),
        ]
    )
    record = await scene.app.store.get_agent("ada")
    profile = {"preset": "open", "deny": ["tool:create_file:.*"]}
    await scene.app.store.update_agent(record.model_copy(update={"permission_profile": profile}))

    await scene.ana.send(scene.channel, "look, then make a file")

    decided = {
        (labels["decider"], labels["outcome"]): n
        for labels, n in series(await scrape(scene), "plancord_tool_calls_decided_total")
    }
    assert decided == {("filter", "ran"): 1.0, ("profile", "refused"): 1.0}
