"""Merge votes under ``plan_mode.approvals: N``: each a record of its own, bound to one
version of a waiting result and the commit it is pinned to, written with its audit row in
one transaction, only while the result still waits at that version and commit (a roll back
or a decision closes the ballot).

Why this exists apart from ``storage.approval_votes``: those votes bind to a plan revision
waiting in ``planning_state``; these bind to an execution's result, which waits after plan
mode has ended. Whether a vote *counts* is decided when the votes are counted
(``core.approval_votes.entitled_votes``), as for plan approvals."""

from __future__ import annotations

from typing import Any

from plancord.core.ballot import ApprovalVote, VoteWrite
from plancord.core.planning import AuditEntry
from plancord.storage.approval_votes import vote_values, write_vote
from plancord.storage.backend import Backend
from plancord.storage.codec import audit_values, parse_required_ts

_HOLD_WAITING = (
    "UPDATE executions SET result_version = result_version "
    "WHERE plan_id = ? AND result = 'waiting' AND result_version = ? AND result_commit = ?"
)
_INSERT = (
    "INSERT INTO result_votes (plan_id, version, result_commit, voter_id, voter_name, voted_at) "
    "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (plan_id, version, voter_id) DO NOTHING"
)


class ResultVoteStore:
    def __init__(self, db: Backend) -> None:
        self.db = db

    async def record(self, vote: ApprovalVote, audit: AuditEntry) -> VoteWrite:
        """Keep ``vote`` (its ``revision`` is the result's version, its ``sha256`` the
        pinned commit) and ``audit`` together, or not at all when the result no longer
        waits at that version and commit."""
        waiting = (vote.plan_id, vote.revision, vote.sha256)
        values = vote_values(vote)
        audited = audit_values(audit)
        return await self.db.write(
            lambda conn: write_vote(conn, (_HOLD_WAITING, waiting), (_INSERT, values), audited)
        )

    async def for_version(self, plan_id: str, version: int, commit: str) -> list[ApprovalVote]:
        """The votes for the result at ``version`` pinned to ``commit``."""
        rows = await self.db.fetchall(
            "SELECT * FROM result_votes WHERE plan_id = ? AND version = ? AND result_commit = ? "
            "ORDER BY voted_at, voter_id",
            (plan_id, version, commit),
        )
        return [_vote(row) for row in rows]


def _vote(row: Any) -> ApprovalVote:
    return ApprovalVote(
        plan_id=row["plan_id"],
        revision=int(row["version"]),
        sha256=row["result_commit"],
        voter_id=row["voter_id"],
        voter_name=row["voter_name"],
        at=parse_required_ts(row["voted_at"], "result_votes"),
    )
