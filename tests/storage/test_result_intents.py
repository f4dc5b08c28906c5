"""Intents of decisions on a result, on both engines: opened only while the result waits at
the version named and no other intent of it is open (the loser learns who is deciding, or
that the result moved on), completed with the decision and its audit row in one
transaction, undone, and taken over by one recovering process only."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from plancord.core.execution import ExecutionRecord, ResultState, StepOutcome
from plancord.core.intents import IntentState, ResultIntent
from plancord.core.planning import AuditAction, AuditEntry
from plancord.core.results import ResultAction
from plancord.storage.backend import Backend
from plancord.storage.executions import ExecutionStore
from plancord.storage.result_intents import ResultIntentStore
from plancord.storage.step_commits import StepCommitStore

AT = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
PINNED = "d" * 40


async def _waiting(db: Backend) -> ExecutionStore:
    store = ExecutionStore(db)
    await store.begin(
        ExecutionRecord(
            agent="ada",
            plan_id="p1",
            revision=1,
            branch="plancord/p1-v1",
            base="main",
            base_commit="a" * 40,
            reviewed_commit="b" * 40,
            reviewed_index="c" * 40,
            steps=(StepOutcome.CURRENT,),
            started_at=AT,
        )
    )
    await store.end("p1", AT + timedelta(minutes=1), "completed", (StepOutcome.DONE,))
    assert await store.open_result("p1", "42", "ana", PINNED)
    return store


def _intent(name: str, action: ResultAction, version: int = 1, **detail: object) -> ResultIntent:
    return ResultIntent(
        id=f"i-{name}-{action.verb}",
        plan_id="p1",
        agent="ada",
        version=version,
        action=action,
        actor=f"user:{name}({name})",
        actor_name=name,
        detail=dict(detail),
        owner=f"host:1:1:{name}",
        opened_at=AT,
    )


def _audit(name: str, action: AuditAction) -> AuditEntry:
    return AuditEntry(at=AT, agent="ada", actor=f"user:{name}", action=action.value, plan_id="p1")


async def _actions(db: Backend) -> list[str]:
    rows = await db.fetchall("SELECT action FROM audit_log ORDER BY id")
    return [row["action"] for row in rows]


async def test_one_intent_at_a_time_and_the_decision_completes_it(db: Backend) -> None:
    executions = await _waiting(db)
    intents = ResultIntentStore(db)
    merge = _intent("ana", ResultAction.MERGE, commit=PINNED)

    assert (await intents.open(merge)).opened
    losing = await intents.open(_intent("bob", ResultAction.DISCARD))
    assert not losing.opened and losing.in_the_way == merge
    stale = await intents.open(_intent("cy", ResultAction.MERGE, version=2))
    assert not stale.opened and stale.in_the_way == merge

    audit = _audit("ana", AuditAction.RESULT_MERGE)
    assert await intents.decided(merge, ResultState.MERGED, AT, "merged", audit)
    decided = await executions.get("p1")
    assert decided is not None and decided.result is ResultState.MERGED
    assert decided.decided_by_name == "ana" and decided.result_version == 2
    [closed] = await intents.of_plan("p1")
    assert (closed.state, closed.outcome) == (IntentState.DONE, "merged")
    assert await intents.open_intents() == []
    assert await _actions(db) == ["result-merge"]

    late = await intents.open(_intent("bob", ResultAction.DISCARD, version=1))
    assert late == type(late)(opened=False, in_the_way=None)
    assert len(await intents.of_plan("p1")) == 1


async def test_an_undone_intent_frees_the_result_and_a_roll_back_pins_it_anew(
    db: Backend,
) -> None:
    executions = await _waiting(db)
    commits = StepCommitStore(db)
    await commits.committed("p1", 1, "1" * 40)
    await commits.committed("p1", 2, "2" * 40)
    intents = ResultIntentStore(db)
    push = _intent("ana", ResultAction.PUSH, remote="origin")
    assert (await intents.open(push)).opened
    await intents.undone(push, AT, "refused", _audit("ana", AuditAction.RESULT_REFUSED))

    back = _intent("bob", ResultAction.ROLL_BACK, step=2)
    assert (await intents.open(back)).opened
    audit = _audit("bob", AuditAction.RESULT_ROLL_BACK).model_copy(update={"detail": {"what": "x"}})
    assert await intents.rolled_back(back, 1, "1" * 40, AT, audit)
    moved = await executions.get("p1")
    assert moved is not None and (moved.result_version, moved.result_commit) == (2, "1" * 40)
    assert moved.result is ResultState.WAITING
    assert [c.step for c in await commits.commits("p1")] == [1]
    states = [(i.action, i.state) for i in await intents.of_plan("p1")]
    assert states == [
        (ResultAction.PUSH, IntentState.UNDONE),
        (ResultAction.ROLL_BACK, IntentState.DONE),
    ]
    assert await _actions(db) == ["result-refused", "result-roll-back"]


async def test_only_one_process_takes_an_orphan_over(db: Backend) -> None:
    await _waiting(db)
    intents = ResultIntentStore(db)
    merge = _intent("ana", ResultAction.MERGE)
    assert (await intents.open(merge)).opened

    assert await intents.take_over(merge, "host:2:2:first")
    assert not await intents.take_over(merge, "host:3:3:second")
    [still] = await intents.open_intents()
    assert still.owner == "host:2:2:first"
