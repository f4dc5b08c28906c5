"""Answers to plan questions on both engines: a pick and its audit row together, a second
pick of the same question replacing the first, and nothing kept once the revision no longer
waits for a decision."""

from __future__ import annotations

from plancord.core.plan_answers import AnswerOutcome, PlanAnswer
from plancord.core.planning import Actor, EntrySource, PlanRef
from plancord.core.service import PlanningService
from plancord.storage.backend import Backend
from plancord.storage.plan_answers import PlanAnswerStore
from plancord.storage.store import SqlStore
from tests.conftest import ManualClock

ANA = Actor.user(42, "ana")
PLAN = {
    "summary": "Deploy",
    "steps": [{"description": "Write deploy.sh"}],
    "questions": [{"question": "Where first?", "choices": ["staging", "production"]}],
}


def pick(plan_id: str, answer: str, clock: ManualClock, revision: int = 1) -> PlanAnswer:
    return PlanAnswer(
        plan_id=plan_id,
        revision=revision,
        question=0,
        answer=answer,
        by=ANA.label,
        by_name="ana",
        at=clock.now(),
    )


async def test_a_pick_is_kept_with_its_audit_row_and_a_second_replaces_it(
    db: Backend, store: SqlStore, service: PlanningService, clock: ManualClock, agent: str
) -> None:
    await service.enter(agent, source=EntrySource.USER, actor=ANA, task="deploy")
    revision = await service.submit(agent, PLAN)
    answers = PlanAnswerStore(db)

    kept = AnswerOutcome.KEPT
    assert await answers.record(pick(revision.plan_id, "staging", clock), agent, "Where?") is kept
    assert await answers.record(pick(revision.plan_id, "production", clock), agent, "?") is kept

    assert await answers.for_revision(revision.plan_id, 1) == {
        0: pick(revision.plan_id, "production", clock)
    }
    audit = [a for a in await store.list_audit(agent) if a.action == "question-answered"]
    assert [(a.revision, a.detail["question"], a.detail["answer"]) for a in audit] == [
        (1, 1, "staging"),
        (1, 1, "production"),
    ]
    assert {a.actor for a in audit} == {ANA.label}


async def test_nothing_is_kept_for_a_revision_no_longer_waiting(
    db: Backend, store: SqlStore, service: PlanningService, clock: ManualClock, agent: str
) -> None:
    await service.enter(agent, source=EntrySource.USER, actor=ANA, task="deploy")
    revision = await service.submit(agent, PLAN)
    ref = PlanRef(agent=agent, plan_id=revision.plan_id, revision=1)
    await service.approve(ref, ANA)
    answers = PlanAnswerStore(db)

    closed = AnswerOutcome.CLOSED
    assert await answers.record(pick(revision.plan_id, "staging", clock), agent, "?") is closed
    assert await answers.record(pick(revision.plan_id, "staging", clock, 2), agent, "?") is closed

    assert await answers.for_revision(revision.plan_id, 1) == {}
    assert not [a for a in await store.list_audit(agent) if a.action == "question-answered"]
