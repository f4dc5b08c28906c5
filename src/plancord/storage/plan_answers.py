"""Answers to plan questions (``core.plan_answers``): a pick and its audit row in one
transaction, and a revision's answers read back for its message and its approval.

A pick is kept only while the revision is the one its agent waits on and no approval vote
has been cast on it (answers are frozen by the first vote: a later pick is refused). Both are
checked in the pick's own transaction, after ``HOLD_WAITING`` took the agent's state row, the
same row a vote and a decision take first, so neither can slip in between check and write."""

from __future__ import annotations

from plancord.core.plan_answers import AnswerOutcome, PlanAnswer
from plancord.core.planning import AuditAction, AuditEntry
from plancord.storage.approval_votes import HOLD_WAITING
from plancord.storage.backend import Backend, Tx
from plancord.storage.codec import INSERT_AUDIT, audit_values, parse_required_ts, ts

_VOTED = "SELECT 1 FROM approval_votes WHERE plan_id = ? AND revision = ? LIMIT 1"
_UPSERT = (
    "INSERT INTO plan_answers (plan_id, revision, question, answer, answered_by, by_name, "
    "answered_at) VALUES (?, ?, ?, ?, ?, ?, ?) "
    "ON CONFLICT (plan_id, revision, question) DO UPDATE SET answer = excluded.answer, "
    "answered_by = excluded.answered_by, by_name = excluded.by_name, "
    "answered_at = excluded.answered_at"
)


class PlanAnswerStore:
    def __init__(self, db: Backend) -> None:
        self.db = db

    async def record(self, answer: PlanAnswer, agent: str, question: str) -> AnswerOutcome:
        """Keep ``answer`` (replacing an earlier pick) and audit it, together or not at all;
        nothing is written when the revision no longer waits for a decision (``CLOSED``) or
        an approval vote was cast on it (``FROZEN``)."""
        waiting = (agent, answer.plan_id, answer.revision)
        voted = (answer.plan_id, answer.revision)
        values = (
            answer.plan_id,
            answer.revision,
            answer.question,
            answer.answer,
            answer.by,
            answer.by_name,
            ts(answer.at),
        )
        audit = audit_values(
            AuditEntry(
                at=answer.at,
                agent=agent,
                actor=answer.by,
                action=AuditAction.QUESTION_ANSWERED,
                plan_id=answer.plan_id,
                revision=answer.revision,
                detail={
                    "question": answer.question + 1,
                    "text": question[:200],
                    "answer": answer.answer,
                },
            )
        )

        def write(conn: Tx) -> AnswerOutcome:
            if conn.execute(HOLD_WAITING, waiting).rowcount != 1:
                return AnswerOutcome.CLOSED
            if conn.execute(_VOTED, voted).fetchone() is not None:
                return AnswerOutcome.FROZEN
            conn.execute(_UPSERT, values)
            conn.execute(INSERT_AUDIT, audit)
            return AnswerOutcome.KEPT

        return await self.db.write(write)

    async def for_revision(self, plan_id: str, revision: int) -> dict[int, PlanAnswer]:
        rows = await self.db.fetchall(
            "SELECT * FROM plan_answers WHERE plan_id = ? AND revision = ? ORDER BY question",
            (plan_id, revision),
        )
        return {
            int(row["question"]): PlanAnswer(
                plan_id=row["plan_id"],
                revision=int(row["revision"]),
                question=int(row["question"]),
                answer=row["answer"],
                by=row["answered_by"],
                by_name=row["by_name"],
                at=parse_required_ts(row["answered_at"], "plan_answers"),
            )
            for row in rows
        }
