"""PlanningService over a real SQLite file: restarts, races, staleness, policy, deadlines."""

from __future__ import annotations

import asyncio
import logging
from datetime import timedelta
from pathlib import Path

import psycopg
import pytest

from plancord.core.errors import (
    AlreadyDecided,
    EntryRefused,
    InvalidTransition,
    NotAuthorised,
    PlanModeDisabled,
    PlanValidationError,
    StalePlan,
    StorageError,
    VersionConflict,
)
from plancord.core.planning import (
    Actor,
    ApprovalMode,
    AuditEntry,
    EntrySource,
    Phase,
    PlanningState,
    PlanRef,
    RevisionAuthor,
    StepStatus,
)
from plancord.core.ports import PlanningChange, StaticSettings, Transition
from plancord.core.scheduler import DeadlineScheduler
from plancord.core.service import PlanningService
from plancord.core.settings import PlanModeSettings
from plancord.storage.backend import Backend
from plancord.storage.db import Database
from plancord.storage.engines import open_database
from plancord.storage.postgres import PgDatabase
from plancord.storage.store import SqlStore
from tests.conftest import ManualClock, RecordingNotifier

ANA = Actor.user(42, "ana")
BOB = Actor.user(7, "bob")
REVIEWER = Actor.user(9, "rita", roles=frozenset({"reviewers"}))
ADMIN = Actor.user(1, "root", is_admin=True)
PLAN = {
    "summary": "Add a health endpoint",
    "steps": [
        {"description": "Read the router", "tools": ["view"]},
        {"description": "Add /health", "tools": ["str_replace"], "risk": "medium"},
    ],
}
PLAN_V2 = {**PLAN, "summary": "Add a health endpoint with a DB check"}


async def submitted(service: PlanningService, agent: str, plan: object = PLAN) -> PlanRef:
    await service.enter(agent, source=EntrySource.USER, actor=ANA, task="health endpoint")
    revision = await service.submit(agent, plan)  # type: ignore[arg-type]
    return PlanRef(agent=agent, plan_id=revision.plan_id, revision=revision.revision)


async def reopen(
    db_target: str | Path, clock: ManualClock, settings: StaticSettings
) -> tuple[Backend, PlanningService]:
    """A second connection to the test's database, as a second process would have."""
    db = await open_database(db_target)
    return db, PlanningService(SqlStore(db), clock, settings)


async def test_enter_records_who_and_why(
    service: PlanningService, agent: str, notifier: RecordingNotifier, clock: ManualClock
) -> None:
    outcome = await service.enter(
        agent, source=EntrySource.USER, actor=ANA, task="health", reason="asked"
    )
    state = outcome.state
    assert outcome.entered
    assert (state.phase, state.requested_by, state.requested_by_name) == (
        Phase.GATHERING,
        "42",
        "ana",
    )
    assert state.entry_source is EntrySource.USER
    assert state.entered_at == clock.now()
    assert state.idle_deadline == clock.now() + timedelta(minutes=60)
    assert state.plan_id is not None and len(state.plan_id) == 16
    assert notifier.actions == ["entered"]


async def test_enter_while_planning_changes_nothing(
    service: PlanningService, store: SqlStore, agent: str
) -> None:
    await service.enter(agent, source=EntrySource.USER, actor=ANA, task="first")
    before = await store.load_state(agent)
    outcome = await service.enter(
        agent, source=EntrySource.AGENT, actor=Actor.agent(agent), task="second"
    )
    assert not outcome.entered
    assert outcome.state == before
    assert [a.action for a in await store.list_audit(agent)] == ["entered"]


async def test_agent_self_entry_keeps_the_human_as_requester(
    service: PlanningService, agent: str
) -> None:
    outcome = await service.enter(
        agent,
        source=EntrySource.AGENT,
        actor=Actor.agent(agent),
        reason="touches 5 files",
        requested_by=ANA,
    )
    assert outcome.state.requested_by == "42"
    assert outcome.state.entry_reason == "touches 5 files"


async def test_entry_from_a_run_nobody_can_answer_is_refused(
    service: PlanningService, store: SqlStore, agent: str
) -> None:
    with pytest.raises(EntryRefused, match="nobody can answer"):
        await service.enter(
            agent, source=EntrySource.AGENT, actor=Actor.agent(agent), interactive=False
        )
    assert (await store.load_state(agent)).phase is Phase.INACTIVE


async def test_disabled_plan_mode_refuses_entry(
    store: SqlStore, clock: ManualClock, agent: str
) -> None:
    service = PlanningService(store, clock, StaticSettings(PlanModeSettings(enabled=False)))
    with pytest.raises(PlanModeDisabled):
        await service.enter(agent, source=EntrySource.USER, actor=ANA)


async def test_default_phase_by_role(service: PlanningService, agent: str) -> None:
    assert await service.enter_default(agent, "worker", task="t") is None
    assert await service.enter_default(agent, None, task="t") is None
    outcome = await service.enter_default(agent, "coordinator", task="t")
    assert outcome is not None and outcome.state.entry_source is EntrySource.DEFAULT


async def test_submit_stores_the_revision_with_its_sha(
    service: PlanningService, store: SqlStore, agent: str, clock: ManualClock
) -> None:
    ref = await submitted(service, agent)
    revision = await store.get_revision(ref.plan_id, 1)
    assert revision is not None
    assert revision.sha256 == revision.plan.sha256()
    assert revision.markdown.startswith("# Plan: Add a health endpoint")
    state = await store.load_state(agent)
    assert (state.phase, state.revision, state.plan_sha) == (Phase.SUBMITTED, 1, revision.sha256)
    assert state.approval_deadline == clock.now() + timedelta(minutes=30)
    assert state.idle_deadline is None


async def test_invalid_plan_changes_nothing(
    service: PlanningService, store: SqlStore, agent: str
) -> None:
    await service.enter(agent, source=EntrySource.USER, actor=ANA)
    before = await store.load_state(agent)
    with pytest.raises(PlanValidationError, match="summary"):
        await service.submit(agent, {"steps": [{"description": "x"}]})
    assert await store.load_state(agent) == before


async def test_approval_binds_revision_and_sha(
    service: PlanningService, store: SqlStore, agent: str, notifier: RecordingNotifier
) -> None:
    ref = await submitted(service, agent)
    state = await service.approve(ref, ANA, ApprovalMode.CONFIRM_EACH_EDIT)
    assert state.phase is Phase.EXECUTING
    assert (state.approved_by, state.approved_by_name) == ("42", "ana")
    assert state.approval_mode is ApprovalMode.CONFIRM_EACH_EDIT
    assert [s.status for s in state.steps] == [StepStatus.PENDING, StepStatus.PENDING]
    audit = (await store.list_audit(agent))[-1]
    assert (audit.action, audit.actor, audit.revision) == ("approved", "user:42(ana)", 1)
    assert audit.detail["sha256"] == state.plan_sha
    assert notifier.changes[-1].revision is not None


async def test_wrong_sha_is_stale(service: PlanningService, store: SqlStore, agent: str) -> None:
    ref = await submitted(service, agent)
    with pytest.raises(StalePlan):
        await service.approve(ref.model_copy(update={"sha256": "0" * 64}), ANA)
    assert (await store.load_state(agent)).phase is Phase.SUBMITTED


async def test_superseded_revision_cannot_be_approved(
    service: PlanningService, store: SqlStore, agent: str
) -> None:
    v1 = await submitted(service, agent)
    await service.request_changes(v1, ANA, "also check the DB", step=2)
    assert (await store.load_state(agent)).phase is Phase.GATHERING
    v2 = await service.submit(agent, PLAN_V2)
    assert v2.revision == 2 and v2.plan_id == v1.plan_id
    with pytest.raises(StalePlan, match="superseded by v2") as info:
        await service.approve(v1, ANA)
    assert info.value.current_revision == 2
    assert (await store.load_state(agent)).phase is Phase.SUBMITTED
    state = await service.approve(PlanRef(agent=agent, plan_id=v2.plan_id, revision=2), ANA)
    assert state.plan_sha == v2.sha256


async def test_old_button_after_changes_requested_says_who_sent_it_back(
    service: PlanningService, agent: str
) -> None:
    v1 = await submitted(service, agent)
    await service.request_changes(v1, REVIEWER, "smaller steps")
    with pytest.raises(AlreadyDecided, match="sent back for changes by rita"):
        await service.approve(v1, ANA)


async def test_request_changes_needs_feedback_and_a_real_step(
    service: PlanningService, agent: str
) -> None:
    ref = await submitted(service, agent)
    with pytest.raises(InvalidTransition, match="Say what should change"):
        await service.request_changes(ref, ANA, "   ")
    with pytest.raises(InvalidTransition, match="no step 3"):
        await service.request_changes(ref, ANA, "x", step=3)


async def test_approver_policy(service: PlanningService, store: SqlStore, agent: str) -> None:
    ref = await submitted(service, agent)
    with pytest.raises(
        NotAuthorised,
        match=r"requester \(ana\), members with an approver role or server administrators",
    ):
        await service.approve(ref, BOB)
    with pytest.raises(NotAuthorised):
        await service.reject(ref, BOB)
    with pytest.raises(NotAuthorised):
        await service.cancel(agent, BOB)
    with pytest.raises(NotAuthorised):
        await service.approve(ref, Actor.agent(agent))
    assert (await store.load_state(agent)).phase is Phase.SUBMITTED
    actions = [a.action for a in await store.list_audit(agent)]
    assert actions == ["entered", "submitted", *["decision-refused"] * 4]
    for approver in (REVIEWER, ADMIN, Actor.operator()):
        await service.approve(ref, approver)
        await service.cancel(agent, approver)
        ref = await submitted(service, agent)


async def test_the_approval_race_has_one_winner(
    store: SqlStore, clock: ManualClock, settings: StaticSettings, agent: str
) -> None:
    gate = asyncio.Barrier(2)

    class RacingStore(SqlStore):
        async def save_transition(self, transition: Transition) -> PlanningState:
            if transition.audit.action == "approved":
                await gate.wait()
            return await super().save_transition(transition)

    service = PlanningService(RacingStore(store.db), clock, settings)
    ref = await submitted(service, agent)
    results = await asyncio.gather(
        service.approve(ref, ANA), service.approve(ref, REVIEWER), return_exceptions=True
    )
    winners = [r for r in results if isinstance(r, PlanningState)]
    losers = [r for r in results if isinstance(r, AlreadyDecided)]
    assert len(winners) == 1 and len(losers) == 1
    assert losers[0].by == winners[0].approved_by_name
    assert f"already approved by {winners[0].approved_by_name}" in str(losers[0])
    approvals = [a for a in await store.list_audit(agent) if a.action == "approved"]
    assert len(approvals) == 1


async def test_approve_and_reject_race_across_two_connections(
    db_target: str | Path, store: SqlStore, clock: ManualClock, settings: StaticSettings, agent: str
) -> None:
    first = PlanningService(store, clock, settings)
    ref = await submitted(first, agent)
    db2, second = await reopen(db_target, clock, settings)
    try:
        results = await asyncio.gather(
            first.approve(ref, ANA), second.reject(ref, REVIEWER, "no"), return_exceptions=True
        )
    finally:
        await db2.close()
    assert sum(isinstance(r, PlanningState) for r in results) == 1
    assert sum(isinstance(r, AlreadyDecided) for r in results) == 1
    decisions = [
        a.action for a in await store.list_audit(agent) if a.action in ("approved", "rejected")
    ]
    assert len(decisions) == 1


async def test_a_stale_version_is_a_conflict(
    store: SqlStore, clock: ManualClock, agent: str
) -> None:
    state = await store.load_state(agent)
    audit = AuditEntry(at=clock.now(), agent=agent, actor="test", action="probe")
    with pytest.raises(VersionConflict):
        await store.save_transition(
            Transition(state=state, expected_version=state.version + 5, audit=audit)
        )
    assert await store.list_audit(agent) == []


@pytest.mark.parametrize("phase", list(Phase))
async def test_every_phase_survives_a_restart(
    db_target: str | Path,
    store: SqlStore,
    service: PlanningService,
    clock: ManualClock,
    settings: StaticSettings,
    agent: str,
    phase: Phase,
) -> None:
    if phase is not Phase.INACTIVE:
        ref = await submitted(service, agent) if phase is not Phase.GATHERING else None
        if phase is Phase.GATHERING:
            await service.enter(agent, source=EntrySource.USER, actor=ANA, task="t")
        if phase is Phase.EXECUTING and ref is not None:
            await service.approve(ref, ANA)
            await service.update_step(agent, 1, StepStatus.DONE, "read it")
    before = await store.load_state(agent)
    db2, fresh = await reopen(db_target, clock, settings)
    try:
        status = await fresh.status(agent)
    finally:
        await db2.close()
    assert status.state == before
    assert status.state.phase is phase
    if phase in (Phase.SUBMITTED, Phase.EXECUTING):
        assert status.revision is not None and status.revision.sha256 == before.plan_sha


async def test_approval_still_works_after_a_restart(
    db_target: str | Path,
    service: PlanningService,
    clock: ManualClock,
    settings: StaticSettings,
    agent: str,
) -> None:
    ref = await submitted(service, agent)
    db2, fresh = await reopen(db_target, clock, settings)
    try:
        state = await fresh.approve(ref, ANA)
    finally:
        await db2.close()
    assert state.phase is Phase.EXECUTING


async def test_timeout_fires_once_after_a_restart(
    db_target: str | Path,
    service: PlanningService,
    store: SqlStore,
    clock: ManualClock,
    settings: StaticSettings,
    agent: str,
) -> None:
    ref = await submitted(service, agent)
    clock.advance(minutes=29)
    assert await service.fire_due() == []
    clock.advance(minutes=2)
    db2, fresh = await reopen(db_target, clock, settings)
    notifier = RecordingNotifier()
    fresh.listen([notifier])
    try:
        fired = await fresh.fire_due()
        again = await fresh.fire_due()
    finally:
        await db2.close()
    assert [c.action for c in fired] == ["timed-out"]
    assert fired[0].detail["deadline"] == "approval"
    assert again == []
    assert notifier.actions == ["timed-out"]
    state = await store.load_state(agent)
    assert state.phase is Phase.INACTIVE and state.approved_by is None
    assert [a.action for a in await store.list_audit(agent)].count("timed-out") == 1
    with pytest.raises(AlreadyDecided, match="already timed out"):
        await service.approve(ref, ANA)


async def test_gathering_idle_timeout_and_activity(
    service: PlanningService, store: SqlStore, clock: ManualClock, agent: str
) -> None:
    await service.enter(agent, source=EntrySource.USER, actor=ANA)
    clock.advance(minutes=50)
    await service.touch(agent)
    clock.advance(minutes=50)
    assert await service.fire_due() == []
    clock.advance(minutes=11)
    fired = await service.fire_due()
    assert [c.detail["deadline"] for c in fired] == ["gathering"]
    assert (await store.load_state(agent)).phase is Phase.INACTIVE


async def test_two_racing_schedulers_time_out_once(
    db_target: str | Path,
    service: PlanningService,
    store: SqlStore,
    clock: ManualClock,
    settings: StaticSettings,
    agent: str,
) -> None:
    await submitted(service, agent)
    clock.advance(hours=1)
    db2, other = await reopen(db_target, clock, settings)
    try:
        results = await asyncio.gather(service.fire_due(), other.fire_due())
    finally:
        await db2.close()
    assert sum(len(r) for r in results) == 1
    assert [a.action for a in await store.list_audit(agent)].count("timed-out") == 1


async def test_scheduler_wakes_for_new_deadlines(
    service: PlanningService, store: SqlStore, clock: ManualClock, agent: str
) -> None:
    scheduler = DeadlineScheduler(service, max_sleep=0.05)
    scheduler.start()
    try:
        await submitted(service, agent)
        assert 0 < await scheduler.seconds_until_next() <= 0.05
        clock.advance(hours=1)
        scheduler.wake()
        for _ in range(100):
            if (await store.load_state(agent)).phase is Phase.INACTIVE:
                break
            await asyncio.sleep(0.01)
    finally:
        await scheduler.stop()
    assert (await store.load_state(agent)).phase is Phase.INACTIVE


async def test_step_progress_and_completion(
    service: PlanningService, store: SqlStore, agent: str
) -> None:
    ref = await submitted(service, agent)
    with pytest.raises(InvalidTransition, match="only be recorded while"):
        await service.update_step(agent, 1, StepStatus.DONE)
    await service.approve(ref, ANA)
    await service.update_step(agent, 1, StepStatus.DONE, "read")
    state = await service.update_step(agent, 2, StepStatus.SKIPPED, "not needed")
    assert [s.status for s in state.steps] == [StepStatus.DONE, StepStatus.SKIPPED]
    with pytest.raises(InvalidTransition, match="no step 3"):
        await service.update_step(agent, 3, StepStatus.DONE)
    with pytest.raises(NotAuthorised):
        await service.complete(agent, BOB, "done")
    with pytest.raises(NotAuthorised):
        await service.complete(agent, Actor.agent("someone-else"), "done")
    final = await service.complete(agent, Actor.agent(agent), "all done")
    assert final.phase is Phase.INACTIVE
    audit = (await store.list_audit(agent))[-1]
    assert audit.action == "completed" and audit.detail["steps"] == ["done", "skipped"]


async def test_reject_ends_planning_and_says_why(
    service: PlanningService, store: SqlStore, agent: str
) -> None:
    ref = await submitted(service, agent)
    state = await service.reject(ref, ANA, "  too risky  ")
    assert state.phase is Phase.INACTIVE and state.plan_id is None
    assert (await store.list_audit(agent))[-1].detail["reason"] == "too risky"
    with pytest.raises(AlreadyDecided, match="already rejected by ana"):
        await service.approve(ref, ANA)


async def test_without_required_approval_the_policy_approves(
    store: SqlStore, clock: ManualClock, agent: str
) -> None:
    service = PlanningService(
        store, clock, StaticSettings(PlanModeSettings(require_approval=False))
    )
    await submitted(service, agent)
    state = await store.load_state(agent)
    assert state.phase is Phase.EXECUTING
    assert (await store.list_audit(agent))[-1].actor == "policy:require_approval=false"


async def test_a_human_edit_revision_needs_an_approver(
    service: PlanningService, agent: str
) -> None:
    await service.enter(agent, source=EntrySource.USER, actor=ANA)
    with pytest.raises(NotAuthorised):
        await service.submit(agent, PLAN, actor=BOB, author=RevisionAuthor.HUMAN_EDIT)
    revision = await service.submit(agent, PLAN, actor=ANA, author=RevisionAuthor.HUMAN_EDIT)
    assert revision.author is RevisionAuthor.HUMAN_EDIT


async def test_a_failing_notifier_does_not_undo_the_decision(
    store: SqlStore,
    clock: ManualClock,
    settings: StaticSettings,
    agent: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    class Broken:
        async def planning_changed(self, change: PlanningChange) -> None:
            raise RuntimeError("discord is down")

    service = PlanningService(store, clock, settings, [Broken()])
    ref = await submitted(service, agent)
    await service.approve(ref, ANA)
    assert (await store.load_state(agent)).phase is Phase.EXECUTING
    assert "discord is down" in caplog.text


async def test_frozen_log_lines(
    service: PlanningService, agent: str, clock: ManualClock, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="plancord.plan_mode")
    ref = await submitted(service, agent)
    await service.request_changes(ref, ANA, "smaller")
    v2 = await service.submit(agent, PLAN_V2)
    await service.approve(PlanRef(agent=agent, plan_id=v2.plan_id, revision=2), ANA)
    await service.complete(agent, Actor.agent(agent))
    ref = await submitted(service, agent)
    await service.reject(ref, ANA, "not now")
    await service.enter(agent, source=EntrySource.OPERATOR, actor=Actor.operator(), reason="ops")
    await service.cancel(agent, Actor.operator())
    await submitted(service, agent)
    clock.advance(hours=2)
    await service.fire_due()
    lines = [r.getMessage() for r in caplog.records if r.name == "plancord.plan_mode"]
    pid, sha2 = ref.plan_id, v2.sha256[:8]
    assert lines[0] == "[plan-mode] entered agent=ada source=user reason=health endpoint"
    assert lines[1].startswith("[plan-mode] submitted agent=ada plan_id=")
    assert lines[1].endswith(" rev=1 sha=" + lines[1][-8:])
    assert lines[2].startswith("[plan-mode] changes-requested agent=ada plan_id=")
    assert lines[2].endswith(" by=ana")
    assert lines[4].endswith(f"rev=2 sha={sha2} by=ana")
    assert lines[4].startswith("[plan-mode] approved agent=ada")
    assert lines[5].startswith("[plan-mode] completed agent=ada")
    rejected = f"[plan-mode] rejected agent=ada plan_id={pid} rev=1 sha={lines[7][-8:]}"
    assert lines[8] == rejected + " by=ana reason=not now"
    assert lines[9] == "[plan-mode] entered agent=ada source=operator reason=ops"
    assert lines[10].startswith("[plan-mode] cancelled agent=ada") and lines[10].endswith(
        "by=operator"
    )
    assert (
        lines[-1].startswith("[plan-mode] timed-out agent=ada") and "deadline=approval" in lines[-1]
    )


@pytest.mark.parametrize("db_target", ["sqlite"], indirect=True)
async def test_a_locked_database_fails_cleanly_then_recovers(
    db_path: Path, clock: ManualClock, settings: StaticSettings, agent: str, store: SqlStore
) -> None:
    db = await Database.open(db_path, busy_timeout_ms=50)
    service = PlanningService(SqlStore(db), clock, settings)
    blocker = await Database.open(db_path, migrate=False)
    try:
        await blocker.conn.execute("BEGIN IMMEDIATE")
        with pytest.raises(
            StorageError, match="locked by another process; nothing was changed"
        ) as info:
            await service.enter(agent, source=EntrySource.USER, actor=ANA)
        assert info.value.kind == "locked"
        await blocker.conn.execute("ROLLBACK")
        assert (await service.status(agent)).state.phase is Phase.INACTIVE
        outcome = await service.enter(agent, source=EntrySource.USER, actor=ANA)
        assert outcome.entered
    finally:
        await blocker.close()
        await db.close()


@pytest.mark.parametrize("db_target", ["postgresql"], indirect=True)
async def test_a_locked_postgres_table_fails_cleanly_then_recovers(
    db_target: str, clock: ManualClock, settings: StaticSettings, agent: str, store: SqlStore
) -> None:
    db = await PgDatabase.open(db_target, lock_timeout_ms=50)
    service = PlanningService(SqlStore(db), clock, settings)
    blocker = await psycopg.AsyncConnection.connect(db_target)
    try:
        await blocker.execute("LOCK TABLE planning_state IN ACCESS EXCLUSIVE MODE")
        with pytest.raises(
            StorageError, match="locked by another session; nothing was changed"
        ) as info:
            await service.enter(agent, source=EntrySource.USER, actor=ANA)
        assert info.value.kind == "locked"
        await blocker.rollback()
        assert (await service.status(agent)).state.phase is Phase.INACTIVE
        outcome = await service.enter(agent, source=EntrySource.USER, actor=ANA)
        assert outcome.entered
    finally:
        await blocker.close()
        await db.close()


@pytest.mark.parametrize("db_target", ["sqlite"], indirect=True)
async def test_a_full_disk_fails_cleanly_then_recovers(
    db: Database, service: PlanningService, store: SqlStore, agent: str
) -> None:
    """SQLite's disk-full path; a full PostgreSQL server is not simulated here."""
    await service.enter(agent, source=EntrySource.USER, actor=ANA)
    before = await store.load_state(agent)
    row = await db.fetchone("PRAGMA page_count")
    assert row is not None
    await db.conn.execute(f"PRAGMA max_page_count = {row[0]}")
    big = {**PLAN, "context_notes": "x" * 3900, "steps": [{"description": "y" * 900}] * 4}
    with pytest.raises(StorageError, match="full") as info:
        await service.submit(agent, big)
    assert info.value.kind == "full"
    assert await store.load_state(agent) == before
    assert await store.list_revisions(before.plan_id or "") == []
    await db.conn.execute("PRAGMA max_page_count = 1073741823")
    revision = await service.submit(agent, big)
    assert revision.revision == 1
