"""Schedules in the store (both engines) and their runs: each run claimed once, however
many runners look; a run while the agent is busy skipped or queued; missed runs after a
stop run once or are skipped, never many times; a run a stopped process had claimed is taken
over once its lease expires, and not started twice; the runs of a day are bounded."""

from __future__ import annotations

import asyncio
import random
from datetime import datetime, timedelta

import pytest

from plancord.core.agents import AgentRecord
from plancord.core.errors import NotAuthorised
from plancord.core.planning import Actor
from plancord.core.ports import StaticSettings
from plancord.core.schedule_runs import MissedRuns, RunSettings, ScheduleRunner
from plancord.core.schedules import (
    InvalidSchedule,
    RunOutcome,
    ScheduleBook,
    ScheduleRun,
    WhenBusy,
)
from plancord.core.settings import PlanModeSettings
from plancord.storage.backend import Backend
from plancord.storage.engines import open_database
from plancord.storage.schedules import SqlScheduleStore
from plancord.storage.store import SqlStore
from tests.conftest import ManualClock, agent_record

ANA = Actor.user(7, "ana")
BOB = Actor.user(8, "bob")


def ada() -> AgentRecord:
    return agent_record().model_copy(update={"created_by": ANA.label})


class Agents:
    """The agents as a run sees them: busy or not, and the plans started."""

    def __init__(self) -> None:
        self.busy_reason: str | None = None
        self.started: list[tuple[str, str, str]] = []
        self.entered: dict[str, str] = {}

    async def busy(self, agent: str) -> str | None:
        return self.busy_reason

    async def start(self, agent: str, task: str, requester: Actor, reason: str) -> str | None:
        plan_id = f"plan-{len(self.started) + 1}"
        self.started.append((agent, task, requester.id))
        self.entered[reason] = plan_id
        return plan_id

    async def started_for(self, agent: str, reason: str, since: datetime) -> str | None:
        return None


class Scene:
    def __init__(self, db: Backend, clock: ManualClock, **settings: object) -> None:
        self.clock = clock
        self.agents = Agents()
        self.said: list[str] = []
        self.store = SqlScheduleStore(db)
        self.book = ScheduleBook(
            self.store, clock, StaticSettings(PlanModeSettings()), SqlStore(db).get_agent
        )
        self.runner = self.runner_for(db, "one", **settings)

    def runner_for(self, db: Backend, owner: str, **settings: object) -> ScheduleRunner:
        async def say(agent: str, text: str) -> None:
            self.said.append(text)

        async def serves(agent: str) -> bool:
            return True

        return ScheduleRunner(
            SqlScheduleStore(db),
            self.clock,
            self.agents,
            say,
            serves,
            owner,
            RunSettings(**settings),  # type: ignore[arg-type]
        )


@pytest.fixture
async def scene(db: Backend, clock: ManualClock) -> Scene:
    await SqlStore(db).create_agent(ada())
    return Scene(db, clock)


async def test_a_run_fires_once_and_the_schedule_moves_on(scene: Scene) -> None:
    schedule = await scene.book.create("ada", ANA, task="triage issues", every="1h")
    assert await scene.runner.fire_due() == []
    scene.clock.advance(hours=1, seconds=1)
    [run] = await scene.runner.fire_due()
    assert run.outcome is RunOutcome.STARTED and run.plan_id == "plan-1"
    assert scene.agents.started == [("ada", "triage issues", "7")]
    assert await scene.runner.fire_due() == []
    moved = await scene.book.get(schedule.id)
    assert moved.next_run_at == schedule.next_run_at + timedelta(hours=1)
    assert "plans for ana: triage issues" in scene.said[-1]


async def test_only_who_may_instruct_creates_or_changes_and_refusals_are_audited(
    scene: Scene, db: Backend
) -> None:
    with pytest.raises(NotAuthorised, match="can create its schedules"):
        await scene.book.create("ada", BOB, task="x", every="1h")
    schedule = await scene.book.create("ada", ANA, task="x", every="1h")
    for change in (scene.book.pause, scene.book.delete, scene.book.for_change):
        with pytest.raises(NotAuthorised, match="can change its schedules"):
            await change(schedule.id, BOB)
    actions = [(a.action, a.actor) for a in await SqlStore(db).list_audit("ada")]
    assert actions.count(("instruct-refused", BOB.label)) == 4
    assert ("schedule-created", ANA.label) in actions


async def test_a_busy_agent_skips_or_queues_as_the_schedule_says(scene: Scene) -> None:
    await scene.book.create("ada", ANA, task="skip me", every="1h")
    await scene.book.create("ada", ANA, task="queue me", every="1h", when_busy=WhenBusy.QUEUE)
    scene.agents.busy_reason = "a plan waits for approval"
    scene.clock.advance(hours=1, seconds=1)
    runs = {run.outcome for run in await scene.runner.fire_due()}
    assert runs == {RunOutcome.SKIPPED_BUSY, RunOutcome.QUEUED}
    assert any("skipped: **ada** is busy (a plan waits for approval)" in t for t in scene.said)
    assert any("queued" in t for t in scene.said)
    assert await scene.runner.fire_due() == []
    scene.agents.busy_reason = None
    [run] = await scene.runner.fire_due()
    assert run.outcome is RunOutcome.STARTED
    assert [task for _, task, _ in scene.agents.started] == ["queue me"]


@pytest.mark.parametrize("missed", list(MissedRuns))
async def test_runs_missed_while_down_run_once_or_are_skipped(
    db: Backend, clock: ManualClock, missed: MissedRuns
) -> None:
    await SqlStore(db).create_agent(ada())
    scene = Scene(db, clock, missed=missed)
    await scene.book.create("ada", ANA, task="t", every="15m", max_runs_per_day=96)
    clock.advance(hours=3)
    [run] = await scene.runner.fire_due()
    assert run.missed == 12
    if missed is MissedRuns.RUN_ONCE:
        assert run.outcome is RunOutcome.STARTED and len(scene.agents.started) == 1
        assert "12 runs fell due while plancord was down" in scene.said[-1]
        assert "running once now" in scene.said[-1]
    else:
        assert run.outcome is RunOutcome.SKIPPED_MISSED and scene.agents.started == []
        assert "skipped (`schedules.missed`)" in scene.said[-1]
    assert await scene.runner.fire_due() == []


async def test_a_run_a_stopped_process_claimed_is_taken_over_once(scene: Scene) -> None:
    schedule = await scene.book.create("ada", ANA, task="t", every="1h")
    scene.clock.advance(hours=1, seconds=1)
    now = scene.clock.now()
    left = ScheduleRun(
        schedule_id=schedule.id,
        due_at=schedule.next_run_at,
        agent="ada",
        owner="gone",
        claimed_at=now,
    )
    assert await scene.store.claim(schedule, schedule.next_run_at + timedelta(hours=1), left)
    assert await scene.runner.fire_due() == []  # the lease still holds
    scene.clock.advance(minutes=3)
    [run] = await scene.runner.fire_due()
    assert (run.outcome, run.owner) == (RunOutcome.STARTED, "one")
    assert await scene.runner.fire_due() == []
    assert len(scene.agents.started) == 1


async def test_a_taken_over_run_whose_plan_had_entered_is_not_started_again(
    scene: Scene,
) -> None:
    schedule = await scene.book.create("ada", ANA, task="t", every="1h")
    scene.clock.advance(hours=1, seconds=1)
    left = ScheduleRun(
        schedule_id=schedule.id,
        due_at=schedule.next_run_at,
        agent="ada",
        owner="gone",
        claimed_at=scene.clock.now(),
    )
    await scene.store.claim(schedule, schedule.next_run_at + timedelta(hours=1), left)

    async def entered(agent: str, reason: str, since: datetime) -> str | None:
        return "plan-before-the-crash"

    scene.agents.started_for = entered  # type: ignore[method-assign]
    scene.clock.advance(minutes=3)
    [run] = await scene.runner.fire_due()
    assert (run.outcome, run.plan_id) == (RunOutcome.STARTED, "plan-before-the-crash")
    assert scene.agents.started == []


async def test_the_runs_of_a_day_are_bounded(scene: Scene) -> None:
    await scene.book.create("ada", ANA, task="t", every="15m", max_runs_per_day=2)
    outcomes = []
    for _ in range(4):
        scene.clock.advance(minutes=15, seconds=1)
        outcomes += [run.outcome for run in await scene.runner.fire_due()]
    assert outcomes == [RunOutcome.STARTED] * 2 + [RunOutcome.SKIPPED_BUDGET] * 2
    assert "its limit for a day" in scene.said[-1]


async def test_paused_schedules_do_not_run_and_resume_from_now(scene: Scene) -> None:
    schedule = await scene.book.create("ada", ANA, task="t", every="1h")
    await scene.book.pause(schedule.id, ANA)
    scene.clock.advance(hours=5)
    assert await scene.runner.fire_due() == []
    resumed = await scene.book.resume(schedule.id, ANA)
    assert resumed.next_run_at > scene.clock.now()
    gone = await scene.book.delete(schedule.id, ANA)
    assert gone.id == schedule.id and await scene.book.list("ada") == []


async def test_two_processes_over_one_postgresql_fire_each_of_200_runs_once(
    postgres_url: str, clock: ManualClock
) -> None:
    first, second = await open_database(postgres_url), await open_database(postgres_url)
    try:
        await SqlStore(first).create_agent(ada())
        scene = Scene(first, clock)
        schedule = await scene.book.create("ada", ANA, task="t", every="1h", max_runs_per_day=96)
        runners = [scene.runner, scene.runner_for(second, "two")]
        chance = random.Random(50)
        for _ in range(200):
            clock.advance(hours=1, seconds=chance.randint(1, 60))
            random_order = chance.sample(runners, 2)
            await asyncio.gather(*(runner.fire_due() for runner in random_order))
        runs = await scene.store.runs(schedule.id)
        assert len(runs) == 200
        assert len({run.due_at for run in runs}) == 200
        assert {run.outcome for run in runs} == {RunOutcome.STARTED}
        assert len(scene.agents.started) == 200
        assert {run.owner for run in runs} == {"one", "two"}
        assert (await scene.store.outcomes()) == {"started": 200}
    finally:
        await first.close()
        await second.close()


async def test_an_agent_has_at_most_25_schedules(scene: Scene) -> None:
    for n in range(25):
        await scene.book.create("ada", ANA, task=f"t{n}", every="1d")
    with pytest.raises(InvalidSchedule, match="25 schedules"):
        await scene.book.create("ada", ANA, task="one more", every="1d")
