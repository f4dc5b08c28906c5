"""The executions store on both engines: a record's steps and checkpoint mark, its events in
order with how each drift was decided, and its end written once."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from plancord.core.authority import Answer
from plancord.core.execution import (
    DriftDecision,
    ExecutionEvent,
    ExecutionEventKind,
    ExecutionRecord,
    StepOutcome,
)
from plancord.storage.backend import Backend
from plancord.storage.executions import ExecutionStore

AT = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


def _record(plan_id: str = "p1", at: datetime = AT) -> ExecutionRecord:
    return ExecutionRecord(
        agent="ada",
        plan_id=plan_id,
        revision=1,
        branch=f"plancord/{plan_id}-v1",
        base="main",
        base_commit="a" * 40,
        reviewed_commit="b" * 40,
        reviewed_index="c" * 40,
        steps=(StepOutcome.CURRENT, StepOutcome.PENDING, StepOutcome.PENDING),
        started_at=at,
    )


async def test_a_record_round_trips_and_its_steps_move(db: Backend) -> None:
    store = ExecutionStore(db)
    await store.begin(_record())
    assert await store.running("ada") == _record()

    moved = (StepOutcome.DONE, StepOutcome.SKIPPED, StepOutcome.CURRENT)
    await store.save_steps("p1", 2, moved)
    await store.set_waiting_checkpoint("p1", 2)
    record = await store.get("p1")
    assert record is not None
    assert (record.current_step, record.steps, record.waiting_checkpoint) == (2, moved, 2)

    await store.save_steps("p1", 1, moved[:2], revision=2)
    record = await store.get("p1")
    assert record is not None and (record.revision, record.steps) == (2, moved[:2])


async def test_events_keep_their_order_and_decisions(db: Backend) -> None:
    store = ExecutionStore(db)
    await store.begin(_record())
    for seconds, decision in enumerate((None, DriftDecision.DENIED, DriftDecision.LOGGED)):
        await store.add_event(
            ExecutionEvent(
                plan_id="p1",
                at=AT + timedelta(seconds=seconds),
                step=1,
                kind=ExecutionEventKind.DRIFT if decision else ExecutionEventKind.COMMAND,
                tool="bash_execute",
                action="bash_execute: make",
                paths=("README.md", "a b.txt"),
                reason="outside" if decision else None,
                decision=decision,
            )
        )
    events = await store.events("p1")
    assert [e.seq for e in events] == [1, 2, 3]
    assert [e.decision for e in events] == [None, DriftDecision.DENIED, DriftDecision.LOGGED]
    assert events[1].paths == ("README.md", "a b.txt")
    drifts = await store.events("p1", ExecutionEventKind.DRIFT)
    assert [e.seq for e in drifts] == [2, 3]


async def test_checkpoint_answers_keep_the_text_their_rows_always_held(db: Backend) -> None:
    store = ExecutionStore(db)
    await store.begin(_record())
    for seconds, answer in enumerate(Answer):
        await store.add_event(
            ExecutionEvent(
                plan_id="p1",
                at=AT + timedelta(seconds=seconds),
                step=1,
                kind=ExecutionEventKind.CHECKPOINT,
                tool="bash_execute",
                action="bash_execute: deploy",
                answer=answer,
            )
        )
    rows = await db.fetchall("SELECT decision FROM execution_events ORDER BY seq")
    assert [row["decision"] for row in rows] == ["allowed", "denied", "timed-out", "stopped"]
    events = await store.events("p1", ExecutionEventKind.CHECKPOINT)
    assert [(e.answer, e.decision) for e in events] == [(a, None) for a in Answer]


def test_an_event_is_decided_as_its_kind() -> None:
    with pytest.raises(ValueError, match="checkpoint is answered"):
        ExecutionEvent(
            plan_id="p1",
            at=AT,
            step=1,
            kind=ExecutionEventKind.CHECKPOINT,
            tool="t",
            action="a",
            decision=DriftDecision.ALLOWED,
        )
    with pytest.raises(ValueError, match="drift event has no checkpoint answer"):
        ExecutionEvent(
            plan_id="p1",
            at=AT,
            step=1,
            kind=ExecutionEventKind.DRIFT,
            tool="t",
            action="a",
            answer=Answer.ALLOWED,
        )


async def test_an_execution_ends_once_and_the_newest_is_found(db: Backend) -> None:
    store = ExecutionStore(db)
    await store.begin(_record())
    final = (StepOutcome.DONE, StepOutcome.STOPPED, StepOutcome.PENDING)
    assert await store.end("p1", AT + timedelta(hours=1), "cancelled by ana", final)
    assert not await store.end("p1", AT + timedelta(hours=2), "again", final)
    assert await store.running("ada") is None
    ended = await store.latest("ada")
    assert ended is not None
    assert (ended.steps, ended.end_reason, ended.running) == (final, "cancelled by ana", False)

    await store.begin(_record("p2", AT + timedelta(days=1)))
    newest = await store.latest("ada")
    assert newest is not None and newest.plan_id == "p2"
