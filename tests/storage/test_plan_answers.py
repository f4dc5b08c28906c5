"""Answers to plan questions on both engines: a pick and its audit row together, a second
pick of the same question replacing the first, each revision's answers apart."""

from __future__ import annotations

from datetime import UTC, datetime

from plancord.core.plan_answers import PlanAnswer
from plancord.storage.backend import Backend
from plancord.storage.plan_answers import PlanAnswerStore
from plancord.storage.store import SqlStore

AT = datetime(2026, 1, 5, 9, 30, tzinfo=UTC)


def pick(answer: str, revision: int = 1, question: int = 1) -> PlanAnswer:
    return PlanAnswer(
        plan_id="abc123",
        revision=revision,
        question=question,
        answer=answer,
        by="user:42(ana)",
        by_name="ana",
        at=AT,
    )


async def test_a_pick_is_kept_with_its_audit_row_and_a_second_replaces_it(
    db: Backend, store: SqlStore, agent: str
) -> None:
    answers = PlanAnswerStore(db)
    await answers.record(pick("staging"), agent, "Which environment?")
    await answers.record(pick("production"), agent, "Which environment?")
    await answers.record(pick("yes", revision=2, question=0), agent, "Smoke test?")

    first = await answers.for_revision("abc123", 1)
    assert first == {1: pick("production")}
    assert await answers.for_revision("abc123", 2) == {0: pick("yes", revision=2, question=0)}
    audit = [a for a in await store.list_audit(agent) if a.action == "question-answered"]
    assert [(a.revision, a.detail["question"], a.detail["answer"]) for a in audit] == [
        (1, 2, "staging"),
        (1, 2, "production"),
        (2, 1, "yes"),
    ]
    assert {a.actor for a in audit} == {"user:42(ana)"}
