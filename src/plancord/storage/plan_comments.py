"""Comments on plans (``core.plan_comments``): each written with its audit row in one
transaction, read back for the plan message, the agent and the approval."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from plancord.core.plan_comments import PlanComment
from plancord.core.planning import AuditEntry
from plancord.storage.backend import Backend, Tx
from plancord.storage.codec import INSERT_AUDIT, audit_values, parse_ts, ts

_COLUMNS = "plan_id, revision, agent, step, body, author_id, author_name, created_at"


def _comment(row: Any) -> PlanComment:
    return PlanComment(
        id=row["id"],
        plan_id=row["plan_id"],
        revision=row["revision"],
        agent=row["agent"],
        step=row["step"],
        body=row["body"],
        author_id=row["author_id"],
        author_name=row["author_name"],
        created_at=datetime.fromisoformat(row["created_at"]),
        told_at=parse_ts(row["told_at"]),
        addressed_in=row["addressed_in"],
        resolved_by_name=row["resolved_by_name"],
        resolved_at=parse_ts(row["resolved_at"]),
    )


class PlanCommentStore:
    def __init__(self, db: Backend) -> None:
        self.db = db

    async def add(self, comment: PlanComment, audit: AuditEntry) -> PlanComment:
        values = (
            comment.plan_id,
            comment.revision,
            comment.agent,
            comment.step,
            comment.body,
            comment.author_id,
            comment.author_name,
            ts(comment.created_at),
        )
        row_audit = audit_values(audit)

        def write(conn: Tx) -> int:
            conn.execute(
                f"INSERT INTO plan_comments ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",  # noqa: S608
                values,
            )
            found = conn.execute(
                "SELECT max(id) FROM plan_comments WHERE plan_id = ? AND author_id = ?",
                (comment.plan_id, comment.author_id),
            ).fetchone()
            conn.execute(INSERT_AUDIT, row_audit)
            return int(found[0])

        new_id = await self.db.write(write)
        return comment.model_copy(update={"id": new_id})

    async def get(self, comment_id: int) -> PlanComment | None:
        row = await self.db.fetchone("SELECT * FROM plan_comments WHERE id = ?", (comment_id,))
        return _comment(row) if row else None

    async def for_plan(self, plan_id: str) -> list[PlanComment]:
        rows = await self.db.fetchall(
            "SELECT * FROM plan_comments WHERE plan_id = ? ORDER BY id", (plan_id,)
        )
        return [_comment(r) for r in rows]

    async def open_count(self, plan_id: str) -> int:
        row = await self.db.fetchone(
            "SELECT count(*) FROM plan_comments WHERE plan_id = ? AND resolved_at IS NULL",
            (plan_id,),
        )
        return int(row[0]) if row else 0

    async def resolve(self, comment: PlanComment, by_name: str, audit: AuditEntry) -> bool:
        values = (by_name, ts(audit.at), comment.id)
        row_audit = audit_values(audit)

        def write(conn: Tx) -> bool:
            changed = conn.execute(
                "UPDATE plan_comments SET resolved_by_name = ?, resolved_at = ? "
                "WHERE id = ? AND resolved_at IS NULL",
                values,
            ).rowcount
            if changed != 1:
                return False
            conn.execute(INSERT_AUDIT, row_audit)
            return True

        return await self.db.write(write)

    async def take_untold(self, plan_id: str, at: datetime) -> list[PlanComment]:
        def write(conn: Tx) -> list[Any]:
            rows = conn.execute(
                "SELECT * FROM plan_comments WHERE plan_id = ? AND told_at IS NULL "
                "AND resolved_at IS NULL ORDER BY id",
                (plan_id,),
            ).fetchall()
            for row in rows:
                conn.execute(
                    "UPDATE plan_comments SET told_at = ? WHERE id = ?", (ts(at), row["id"])
                )
            return list(rows)

        return [_comment(r) for r in await self.db.write(write)]

    async def mark_addressed(self, plan_id: str, ids: Sequence[int], revision: int) -> list[int]:
        wanted = [int(i) for i in ids]

        def write(conn: Tx) -> list[int]:
            done = []
            for comment_id in wanted:
                changed = conn.execute(
                    "UPDATE plan_comments SET addressed_in = ? WHERE id = ? AND plan_id = ?",
                    (revision, comment_id, plan_id),
                ).rowcount
                if changed == 1:
                    done.append(comment_id)
            return done

        return await self.db.write(write)
