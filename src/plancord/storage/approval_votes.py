"""Approval votes (``core.ballot``) on either engine: a vote and its audit row in one
transaction, kept only while its revision is the one its agent waits on, and a revision's
votes read back in the order they were cast.

``HOLD_WAITING`` is the check both a vote and an answer to a plan question make first, in
their own transaction: it matches the agent's state row only while the revision waits for a
decision, and takes that row's lock (PostgreSQL; SQLite has one writer), so a vote, an
answer and a decision on one revision are written one after the other, each seeing what the
one before committed. That is what lets an answer be refused once a vote is cast
(``storage.plan_answers``) without a vote slipping in between the check and the write."""

from __future__ import annotations

from typing import Any

from plancord.core.ballot import ApprovalVote, VoteWrite
from plancord.core.planning import AuditEntry
from plancord.storage.backend import Backend, Tx
from plancord.storage.codec import INSERT_AUDIT, audit_values, parse_required_ts, ts

HOLD_WAITING = (
    "UPDATE planning_state SET version = version WHERE agent = ? AND phase = 'submitted' "
    "AND plan_id = ? AND revision = ?"
)
"""Parameters ``(agent, plan_id, revision)``; one row changed when the revision waits."""

_INSERT = (
    "INSERT INTO approval_votes (plan_id, revision, sha256, voter_id, voter_name, voted_at) "
    "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (plan_id, revision, voter_id) DO NOTHING"
)


class ApprovalVoteStore:
    def __init__(self, db: Backend) -> None:
        self.db = db

    async def record(self, vote: ApprovalVote, agent: str, audit: AuditEntry) -> VoteWrite:
        """Keep ``vote`` and ``audit`` together or not at all: ``CLOSED`` (nothing written)
        when the revision no longer waits, ``ALREADY`` (nothing written) when this person
        voted on it before."""
        waiting = (agent, vote.plan_id, vote.revision)
        values = vote_values(vote)
        audited = audit_values(audit)
        return await self.db.write(
            lambda conn: write_vote(conn, (HOLD_WAITING, waiting), (_INSERT, values), audited)
        )

    async def for_revision(self, plan_id: str, revision: int, sha256: str) -> list[ApprovalVote]:
        rows = await self.db.fetchall(
            "SELECT * FROM approval_votes WHERE plan_id = ? AND revision = ? AND sha256 = ? "
            "ORDER BY id",
            (plan_id, revision, sha256),
        )
        return [_vote(row) for row in rows]


def vote_values(vote: ApprovalVote) -> tuple[object, ...]:
    """A vote's row, in the column order both vote tables share (what it is for, which
    revision or version, its sha or pinned commit, who, when)."""
    return (vote.plan_id, vote.revision, vote.sha256, vote.voter_id, vote.voter_name, ts(vote.at))


def _vote(row: Any) -> ApprovalVote:
    return ApprovalVote(
        plan_id=row["plan_id"],
        revision=int(row["revision"]),
        sha256=row["sha256"],
        voter_id=row["voter_id"],
        voter_name=row["voter_name"],
        at=parse_required_ts(row["voted_at"], "approval_votes"),
    )


def write_vote(
    conn: Tx,
    hold: tuple[str, tuple[Any, ...]],
    insert: tuple[str, tuple[Any, ...]],
    audited: tuple[Any, ...],
) -> VoteWrite:
    """One ballot's write, whatever it votes on: ``hold`` must match (and lock) the one row
    saying the ballot is open, ``insert`` keeps the vote once per voter, and the audit row
    goes in the same transaction or not at all."""
    if conn.execute(*hold).rowcount != 1:
        return VoteWrite.CLOSED
    if conn.execute(*insert).rowcount != 1:
        return VoteWrite.ALREADY
    conn.execute(INSERT_AUDIT, audited)
    return VoteWrite.RECORDED
