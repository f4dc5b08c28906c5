"""Merge votes on a result, where the plan asks for more than one approver (``approvals:
N``): each vote bound to the result's version and its pinned commit, and counted only while
its voter is still entitled, as approval votes on a plan are.
"""

from __future__ import annotations

from collections.abc import Sequence

from plancord.core.approval_votes import entitled_votes
from plancord.core.ballot import ApprovalVote, VoteWrite
from plancord.core.execution import ExecutionRecord
from plancord.core.planning import Actor, AuditAction
from plancord.core.ports import Clock, MemberDirectory, SettingsProvider
from plancord.core.results import StaleResult, requester_state, result_row
from plancord.storage.result_votes import ResultVoteStore


class MergeVotes:
    """Cast and count the Merge votes of results."""

    def __init__(
        self,
        votes: ResultVoteStore,
        plan_settings: SettingsProvider,
        members: MemberDirectory | None,
        clock: Clock,
    ) -> None:
        self._votes = votes
        self._settings = plan_settings
        self._members = members
        self._clock = clock

    async def cast(self, record: ExecutionRecord, actor: Actor) -> Sequence[ApprovalVote]:
        """Record ``actor``'s vote with its audit row; the votes that count now. Raises
        ``StaleResult`` when the result changed meanwhile (nothing recorded)."""
        now = self._clock.now()
        vote = ApprovalVote(
            plan_id=record.plan_id,
            revision=record.result_version,
            sha256=record.result_commit or "",
            voter_id=actor.id,
            voter_name=actor.name,
            at=now,
        )
        entry = result_row(record, actor, AuditAction.RESULT_MERGE_VOTE, now, "merge vote")
        if await self._votes.record(vote, entry) is VoteWrite.CLOSED:
            raise StaleResult("Nothing changed: the result changed while you voted.")
        return await self.counted(record, actor)

    async def counted(self, record: ExecutionRecord, fresh: Actor | None) -> list[ApprovalVote]:
        """The votes for the result's version and commit whose voters are still entitled
        (``fresh``: who just voted, read just now)."""
        settings = await self._settings.plan_mode_for(record.agent)
        votes = await self._votes.for_version(
            record.plan_id, record.result_version, record.result_commit or ""
        )
        state = requester_state(record)
        return await entitled_votes(self._members, record.agent, votes, state, settings, fresh)
