"""Answers to plan questions (``core.plan_answers``): a pick and its audit row in one
transaction, and a revision's answers read back for its message and its approval."""

from __future__ import annotations

from plancord.core.plan_answers import ANSWERED, PlanAnswer
from plancord.core.planning import AuditEntry
from plancord.storage.backend import Backend, Tx
from plancord.storage.codec import INSERT_AUDIT, audit_values, parse_ts, ts

# Kept only while the revision is the one its agent waits on, checked in the same
# statement, so a pick racing a decision never lands on a decided revision.
_UPSERT = (
    "INSERT INTO plan_answers (plan_id, revision, question, answer, answered_by, by_name, "
    "answered_at) SELECT ?, ?, ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM planning_state "
    "WHERE agent = ? AND phase = 'submitted' AND plan_id = ? AND revision = ?) "
    "ON CONFLICT (plan_id, revision, question) DO UPDATE SET answer = excluded.answer, "
    "answered_by = excluded.answered_by, by_name = excluded.by_name, "
    "answered_at = excluded.answered_at"
)


class PlanAnswerStore:
    def __init__(self, db: Backend) -> None:
        self.db = db

    async def record(self, answer: PlanAnswer, agent: str, question: str) -> bool:
        """Keep ``answer`` (replacing an earlier pick) and audit it, together or not at all;
        False, with nothing written, when the revision no longer waits for a decision."""
        values = (
            answer.plan_id,
            answer.revision,
            answer.question,
            answer.answer,
            answer.by,
            answer.by_name,
            ts(answer.at),
            agent,
            answer.plan_id,
            answer.revision,
        )
        audit = audit_values(
            AuditEntry(
                at=answer.at,
                agent=agent,
                actor=answer.by,
                action=ANSWERED,
                plan_id=answer.plan_id,
                revision=answer.revision,
                detail={
                    "question": answer.question + 1,
                    "text": question[:200],
                    "answer": answer.answer,
                },
            )
        )

        def write(conn: Tx) -> bool:
            if conn.execute(_UPSERT, values).rowcount != 1:
                return False
            conn.execute(INSERT_AUDIT, audit)
            return True

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
                at=parse_ts(row["answered_at"]),
            )
            for row in rows
        }
