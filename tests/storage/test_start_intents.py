"""Intents of starting an execution, on both engines: opened only while the plan waits for
a decision at the revision named, the agent has no execution running or waiting, and no
other start of the agent is open (the loser learns who is starting); completed by the
approval's own transaction together with the execution's record, which refuses (writing
nothing) once the start was undone; taken over by one recovering process only."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from plancord.core.errors import ExecutionRefused
from plancord.core.execution import ExecutionRecord, StepOutcome
from plancord.core.intents import IntentState, StartIntent
from plancord.core.planning import AuditEntry, Phase
from plancord.core.ports import ExecutionStart, Transition
from plancord.storage.backend import Backend
from plancord.storage.executions import ExecutionStore
from plancord.storage.start_intents import StartIntentStore
from plancord.storage.store import SqlStore
from tests.conftest import agent_record

AT = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


async def _submitted(db: Backend, agent: str = "ada", plan_id: str = "p1") -> SqlStore:
    store = SqlStore(db)
    await store.create_agent(agent_record(agent, channel_id=None))
    await db.execute(
        "UPDATE planning_state SET phase = 'submitted', plan_id = ?, revision = 1 WHERE agent = ?",
        (plan_id, agent),
    )
    return store


def _intent(name: str, plan_id: str = "p1", revision: int = 1, agent: str = "ada") -> StartIntent:
    return StartIntent(
        id=f"s-{name}-{plan_id}-{revision}",
        agent=agent,
        plan_id=plan_id,
        revision=revision,
        actor=f"user:{name}({name})",
        actor_name=name,
        owner=f"host:1:1:{name}",
        opened_at=AT,
    )


def _record(plan_id: str = "p1", agent: str = "ada") -> ExecutionRecord:
    return ExecutionRecord(
        agent=agent,
        plan_id=plan_id,
        revision=1,
        branch=f"plancord/{plan_id}-v1",
        base="main",
        base_commit="a" * 40,
        reviewed_commit="b" * 40,
        reviewed_index="c" * 40,
        steps=(StepOutcome.CURRENT,),
        started_at=AT,
    )


async def _approve(store: SqlStore, start: ExecutionStart) -> None:
    """The approval's transaction, as ``TransitionRunner.commit`` writes it."""
    before = await store.load_state(start.record.agent)
    after = before.model_copy(
        update={"phase": Phase.EXECUTING, "approved_by": "42", "version": before.version + 1}
    )
    audit = AuditEntry(
        at=AT, agent=before.agent, actor="user:42(ana)", action="approved", plan_id="p1"
    )
    await store.save_transition(
        Transition(state=after, expected_version=before.version, audit=audit, start=start)
    )


async def test_one_start_per_agent_and_only_of_the_plan_waiting_at_its_revision(
    db: Backend,
) -> None:
    await _submitted(db)
    await _submitted(db, "bea", "p2")
    starts = StartIntentStore(db)
    ana = _intent("ana")

    assert not (await starts.open(_intent("cy", revision=2))).opened
    assert not (await starts.open(_intent("cy", plan_id="p0"))).opened
    assert (await starts.open(ana)).opened
    losing = await starts.open(_intent("bob"))
    assert not losing.opened and losing.in_the_way == ana
    assert (await starts.open(_intent("bob", plan_id="p2", agent="bea"))).opened, "bea's own"

    assert await starts.undone(ana, AT, "refused", None)
    assert not await starts.undone(ana, AT, "again", None), "closed once"
    assert (await starts.open(_intent("bob"))).opened
    assert [i.state for i in await starts.of_plan("p1")] == [IntentState.UNDONE, IntentState.OPEN]


async def test_no_start_while_an_execution_of_the_agent_runs_or_its_result_waits(
    db: Backend,
) -> None:
    await _submitted(db)
    executions = ExecutionStore(db)
    starts = StartIntentStore(db)
    await executions.begin(_record("p0"))

    claim = await starts.open(_intent("ana"))
    assert not claim.opened and claim.in_the_way is None

    await executions.end("p0", AT + timedelta(minutes=1), "completed", (StepOutcome.DONE,))
    assert not (await starts.open(_intent("ana"))).opened, "its result is still to open"
    assert await executions.open_result("p0", "42", "ana", "d" * 40)
    assert not (await starts.open(_intent("ana"))).opened
    await db.execute("UPDATE executions SET result = 'merged' WHERE plan_id = 'p0'")
    assert (await starts.open(_intent("ana"))).opened


async def test_the_approval_records_the_execution_and_completes_its_start_in_one_transaction(
    db: Backend,
) -> None:
    store = await _submitted(db)
    starts = StartIntentStore(db)
    intent = _intent("ana")
    assert (await starts.open(intent)).opened

    await _approve(store, ExecutionStart(intent.id, _record(), intent.owner))

    assert (await store.load_state("ada")).phase is Phase.EXECUTING
    assert await ExecutionStore(db).get("p1") == _record()
    [done] = await starts.of_plan("p1")
    assert done.state is IntentState.DONE and done.outcome == "started on `plancord/p1-v1`"


async def test_an_approval_whose_start_was_undone_meanwhile_writes_nothing(db: Backend) -> None:
    store = await _submitted(db)
    starts = StartIntentStore(db)
    intent = _intent("ana")
    assert (await starts.open(intent)).opened
    assert await starts.undone(intent, AT, "recovered", None)

    with pytest.raises(ExecutionRefused, match="undone meanwhile"):
        await _approve(store, ExecutionStart(intent.id, _record(), intent.owner))

    assert (await store.load_state("ada")).phase is Phase.SUBMITTED
    assert await ExecutionStore(db).get("p1") is None
    assert [e.action for e in await store.list_audit("ada")] == []


async def test_only_one_process_takes_an_orphan_over_and_a_note_needs_its_owner(
    db: Backend,
) -> None:
    await _submitted(db)
    starts = StartIntentStore(db)
    intent = _intent("ana")
    assert (await starts.open(intent)).opened

    assert await starts.take_over(intent, "host:2:2:x")
    assert not await starts.take_over(intent, "host:3:3:y")
    noted = intent.model_copy(update={"detail": {"base": "main"}})
    assert not await starts.note(noted), "the old owner no longer writes it"
    mine = noted.model_copy(update={"owner": "host:2:2:x"})
    assert await starts.note(mine)
    assert [i.detail for i in await starts.open_intents()] == [{"base": "main"}]
    assert await starts.plan_waits(intent)
