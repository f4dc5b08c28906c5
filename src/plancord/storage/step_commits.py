"""The host's step commits of an execution, by id, in order, and the agent's own message
for the step being worked on.

Why this exists: the completion card says which step changed which files, and Roll back
goes back to before a step. Both must come from what the host recorded when it committed
the step, never from a commit's subject, which the agent can write (``step 1: …``). The
message the agent gave with ``git_commit`` waits on the execution row until its step is
committed, so the history reads as a person would write it.
"""

from __future__ import annotations

from dataclasses import dataclass

from plancord.core.execution import StepNumber
from plancord.storage.backend import Backend, Tx


@dataclass(frozen=True, slots=True)
class StepCommitId:
    """One step's commit as the host made it (``step`` as people count it)."""

    step: StepNumber
    commit: str


class StepCommitStore:
    """Reads and writes ``execution_commits`` and ``executions.step_message``."""

    def __init__(self, db: Backend) -> None:
        self.db = db

    async def add_message(self, plan_id: str, message: str) -> None:
        """The agent's commit message for the current step (a second one is appended as
        another paragraph, as a person squashing the commits would)."""

        def work(conn: Tx) -> None:
            row = conn.execute(
                "SELECT step_message FROM executions WHERE plan_id = ?", (plan_id,)
            ).fetchone()
            had = row["step_message"] if row is not None else None
            text = message if not had else f"{had}\n\n{message}"
            conn.execute(
                "UPDATE executions SET step_message = ? WHERE plan_id = ?", (text, plan_id)
            )

        await self.db.write(work)

    async def committed(self, plan_id: str, step: StepNumber, commit: str | None) -> None:
        """The step was committed as ``commit`` (None: it changed nothing, so no commit);
        its message is used up either way."""

        def work(conn: Tx) -> None:
            conn.execute("UPDATE executions SET step_message = NULL WHERE plan_id = ?", (plan_id,))
            if commit is not None:
                conn.execute(
                    "INSERT INTO execution_commits (plan_id, seq, step, commit_id) "
                    "SELECT ?, COALESCE(MAX(seq), 0) + 1, ?, ? FROM execution_commits "
                    "WHERE plan_id = ?",
                    (plan_id, step, commit, plan_id),
                )

        await self.db.write(work)

    async def commits(self, plan_id: str) -> list[StepCommitId]:
        """The step commits on the branch, oldest first: each is the parent of the next."""
        rows = await self.db.fetchall(
            "SELECT step, commit_id FROM execution_commits WHERE plan_id = ? "
            "AND rolled_back = 0 ORDER BY seq",
            (plan_id,),
        )
        return [StepCommitId(StepNumber(int(row["step"])), str(row["commit_id"])) for row in rows]

    async def rolled_back(self, plan_id: str) -> frozenset[StepNumber]:
        """The steps that had a commit rolled back from the card."""
        rows = await self.db.fetchall(
            "SELECT DISTINCT step FROM execution_commits WHERE plan_id = ? AND rolled_back = 1",
            (plan_id,),
        )
        return frozenset(StepNumber(int(row["step"])) for row in rows)

    async def keep_before(self, plan_id: str, count: int) -> None:
        """Only the first ``count`` step commits stay on the branch; the rest are marked
        rolled back."""

        await self.db.write(lambda conn: keep_before(conn, plan_id, count))


def keep_before(conn: Tx, plan_id: str, count: int) -> None:
    """Inside a write: mark every step commit of ``plan_id`` after the first ``count`` rolled
    back."""
    seqs = conn.execute(
        "SELECT seq FROM execution_commits WHERE plan_id = ? AND rolled_back = 0 ORDER BY seq",
        (plan_id,),
    ).fetchall()
    for row in seqs[count:]:
        conn.execute(
            "UPDATE execution_commits SET rolled_back = 1 WHERE plan_id = ? AND seq = ?",
            (plan_id, row["seq"]),
        )
