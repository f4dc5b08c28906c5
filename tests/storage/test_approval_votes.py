"""Approval votes on both engines: a vote and its audit row together, a person's second vote
writing nothing, votes read back per exact revision in the order cast, nothing kept once the
revision no longer waits; and a plan's answers frozen by the first vote, checked in the same
transaction as the pick, also when a pick and a vote race on two connections."""

from __future__ import annotations

import asyncio
from pathlib import Path

from plancord.core.ballot import ApprovalVote, VoteWrite
from plancord.core.plan_answers import AnswerOutcome, PlanAnswer
from plancord.core.planning import (
    Actor,
    AuditAction,
    AuditEntry,
    EntrySource,
    PlanRef,
    PlanRevision,
)
from plancord.core.service import PlanningService
from plancord.storage.backend import Backend
from plancord.storage.engines import open_database
from plancord.storage.plan_answers import PlanAnswerStore
from plancord.storage.store import SqlStore
from tests.conftest import ManualClock

ANA = Actor.user(42, "ana")
RITA = Actor.user(7, "rita")
PLAN = {
    "summary": "Deploy",
    "steps": [{"description": "Write deploy.sh"}],
    "questions": [{"question": "Where first?", "choices": ["staging", "production"]}],
}


def vote(revision: PlanRevision, voter: Actor, clock: ManualClock) -> ApprovalVote:
    return ApprovalVote(
        plan_id=revision.plan_id,
        revision=revision.revision,
        sha256=revision.sha256,
        voter_id=voter.id,
        voter_name=voter.name,
        at=clock.now(),
    )


def audit(revision: PlanRevision, voter: Actor, clock: ManualClock) -> AuditEntry:
    return AuditEntry(
        at=clock.now(),
        agent=revision.agent,
        actor=voter.label,
        action=AuditAction.APPROVAL_VOTE,
        plan_id=revision.plan_id,
        revision=revision.revision,
        detail={"voter_id": voter.id},
    )


def pick(revision: PlanRevision, answer: str, clock: ManualClock) -> PlanAnswer:
    return PlanAnswer(
        plan_id=revision.plan_id,
        revision=revision.revision,
        question=0,
        answer=answer,
        by=ANA.label,
        by_name=ANA.name,
        at=clock.now(),
    )


async def submitted(service: PlanningService, agent: str) -> PlanRevision:
    await service.enter(agent, source=EntrySource.USER, actor=ANA, task="deploy")
    return await service.submit(agent, PLAN)


async def test_a_vote_is_kept_once_with_its_audit_row(
    store: SqlStore, service: PlanningService, clock: ManualClock, agent: str
) -> None:
    revision = await submitted(service, agent)

    assert (
        await store.record_vote(vote(revision, RITA, clock), agent, audit(revision, RITA, clock))
        is VoteWrite.RECORDED
    )
    clock.advance(seconds=1)
    assert (
        await store.record_vote(vote(revision, ANA, clock), agent, audit(revision, ANA, clock))
        is VoteWrite.RECORDED
    )
    again = await store.record_vote(
        vote(revision, RITA, clock), agent, audit(revision, RITA, clock)
    )

    assert again is VoteWrite.ALREADY
    votes = await store.list_votes(revision.plan_id, 1, revision.sha256)
    assert [(v.voter_id, v.voter_name) for v in votes] == [("7", "rita"), ("42", "ana")]
    assert votes[0].at < votes[1].at
    assert await store.list_votes(revision.plan_id, 1, "0" * 64) == []
    assert await store.list_votes(revision.plan_id, 2, revision.sha256) == []
    logged = [a.actor for a in await store.list_audit(agent) if a.action == "approval-vote"]
    assert logged == [RITA.label, ANA.label]


async def test_no_vote_is_kept_for_a_revision_no_longer_waiting(
    store: SqlStore, service: PlanningService, clock: ManualClock, agent: str
) -> None:
    revision = await submitted(service, agent)
    await service.reject(PlanRef(agent=agent, plan_id=revision.plan_id, revision=1), ANA, "no")

    written = await store.record_vote(
        vote(revision, RITA, clock), agent, audit(revision, RITA, clock)
    )

    assert written is VoteWrite.CLOSED
    assert await store.list_votes(revision.plan_id, 1, revision.sha256) == []
    assert not [a for a in await store.list_audit(agent) if a.action == "approval-vote"]


async def test_answers_are_frozen_by_the_first_vote(
    db: Backend, store: SqlStore, service: PlanningService, clock: ManualClock, agent: str
) -> None:
    revision = await submitted(service, agent)
    answers = PlanAnswerStore(db)
    assert await answers.record(pick(revision, "staging", clock), agent, "?") is AnswerOutcome.KEPT

    await store.record_vote(vote(revision, RITA, clock), agent, audit(revision, RITA, clock))
    later = await answers.record(pick(revision, "production", clock), agent, "?")

    assert later is AnswerOutcome.FROZEN
    kept = await answers.for_revision(revision.plan_id, 1)
    assert kept[0].answer == "staging"
    picks = [
        a.detail["answer"] for a in await store.list_audit(agent) if a.action == "question-answered"
    ]
    assert picks == ["staging"]


async def test_a_pick_racing_a_vote_lands_before_it_or_not_at_all(
    db_target: str | Path,
    db: Backend,
    store: SqlStore,
    service: PlanningService,
    clock: ManualClock,
    agent: str,
) -> None:
    """On two connections (PostgreSQL runs them side by side): whichever order the database
    takes them in, a kept pick is never later than the vote."""
    revision = await submitted(service, agent)
    other = await open_database(db_target)
    try:
        answered, voted = await asyncio.gather(
            PlanAnswerStore(other).record(pick(revision, "production", clock), agent, "?"),
            store.record_vote(vote(revision, RITA, clock), agent, audit(revision, RITA, clock)),
        )
    finally:
        await other.close()

    assert voted is VoteWrite.RECORDED
    order = [
        a.action
        for a in await store.list_audit(agent)
        if a.action in ("approval-vote", "question-answered")
    ]
    if answered is AnswerOutcome.KEPT:
        assert order == ["question-answered", "approval-vote"]
    else:
        assert answered is AnswerOutcome.FROZEN
        assert order == ["approval-vote"]
        assert await PlanAnswerStore(db).for_revision(revision.plan_id, 1) == {}
