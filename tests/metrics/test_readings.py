"""What the metrics read from the store, on both engines: agents by phase, the plans waiting
and the oldest one's age, and the model usage summed by agent and model with its cost."""

from __future__ import annotations

from typing import Any

import pytest

from plancord.core.cost import Price
from plancord.core.planning import Actor, EntrySource
from plancord.core.ports import ModelUsage
from plancord.core.service import PlanningService
from plancord.metrics.readings import read_store
from plancord.storage.backend import Backend
from plancord.storage.conversations import ConversationStore
from plancord.storage.store import SqlStore
from tests.conftest import ManualClock, agent_record

ANA = Actor.user(42, "ana")
PLAN: dict[str, Any] = {"summary": "Add /health", "steps": [{"description": "Add it"}]}
PRICES = {"claude-test": Price(input=3.0, output=15.0)}


async def test_phases_plans_waiting_and_the_oldest_age(
    db: Backend, store: SqlStore, service: PlanningService, clock: ManualClock
) -> None:
    for name in ("ada", "bob", "cy"):
        await store.create_agent(agent_record(name, channel_id=None))
    await service.enter("ada", source=EntrySource.USER, actor=ANA)
    await service.submit("ada", PLAN)
    clock.advance(minutes=30)
    await service.enter("bob", source=EntrySource.USER, actor=ANA)
    await service.submit("bob", PLAN)
    clock.advance(minutes=15)

    found = await read_store(db, clock.now(), {})

    assert found.phases == {"inactive": 1, "gathering": 0, "submitted": 2, "executing": 0}
    assert found.plans_waiting == 2
    assert found.oldest_plan_seconds == 45 * 60
    assert found.results_waiting == 0


async def test_usage_by_agent_and_model_with_its_cost(db: Backend, clock: ManualClock) -> None:
    conversations = ConversationStore(db)
    calls = [
        ("ada", "claude-test", ModelUsage(1000, 200, 5000, 300)),
        ("ada", "claude-test", ModelUsage(10, 20, 0, 0)),
        ("ada", "claude-other", ModelUsage(7, 8, 0, 0)),
        ("bob", "claude-test", ModelUsage(1, 2, 3, 4)),
    ]
    for agent, model, usage in calls:
        await conversations.record_usage(agent, model, usage, "end_turn", clock.now())

    found = await read_store(db, clock.now(), PRICES)

    by_key = {(u.agent, u.model): u for u in found.usage}
    assert by_key[("ada", "claude-test")].usage == ModelUsage(1010, 220, 5000, 300)
    billed = 1010 + 0.1 * 5000 + 1.25 * 300
    assert by_key[("ada", "claude-test")].dollars == pytest.approx((billed * 3 + 220 * 15) / 1e6)
    assert by_key[("ada", "claude-other")].dollars is None  # no price: no money
    assert by_key[("bob", "claude-test")].usage == ModelUsage(1, 2, 3, 4)
    assert found.phases["inactive"] == 0  # usage of agents that no longer exist still counts


async def test_scheduled_runs_by_outcome_and_each_schedules_next_run(
    db: Backend, clock: ManualClock
) -> None:
    from tests.core.test_schedule_runs import ANA, Scene, ada

    await SqlStore(db).create_agent(ada())
    scene = Scene(db, clock)
    hourly = await scene.book.create("ada", ANA, task="t", every="1h")
    paused = await scene.book.create("ada", ANA, task="t", every="2h")
    await scene.book.pause(paused.id, ANA)
    clock.advance(hours=1, seconds=1)
    await scene.runner.fire_due()
    scene.agents.busy_reason = "busy"
    clock.advance(hours=1)
    await scene.runner.fire_due()

    found = await read_store(db, clock.now(), {})

    assert found.schedule_runs == {"started": 1, "skipped-busy": 1}
    moved = await scene.book.get(hourly.id)
    assert found.next_schedule_runs == {("ada", hourly.id): moved.next_run_at.timestamp()}
