"""The ballot for plans that need several approvers (``plan_mode.approvals``).

Each person's approval of one revision is a vote of its own in the store (``core.ballot``),
bound to the revision and its sha256 and counted once however often they click; a click
the approver policy refuses never becomes a vote. A vote counts only if its voter is still
entitled to approve when the votes are counted: each voter is read again through the
``MemberDirectory`` (their roles now, the admin flag) and held to the approval policy and
the state as they are at that moment, so a removed approver role, a changed policy or a
voter who may no longer decide takes their vote out of the count. A voter who cannot be read
again does not count (fail closed). The plan executes when enough votes count."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from plancord.core.authority import approver_rule
from plancord.core.ballot import ApprovalVote, VoteWrite
from plancord.core.errors import StalePlan
from plancord.core.planning import (
    Actor,
    AuditAction,
    AuditEntry,
    PlanningState,
    PlanRef,
    PlanRevision,
)
from plancord.core.ports import Clock, MemberDirectory, PlanningChange, PlanStore
from plancord.core.settings import PlanModeSettings
from plancord.core.transition_runner import TransitionRunner, already_decided


class ApprovalVotes:
    """Records approval votes in the store and counts the ones whose voters may still
    approve."""

    def __init__(
        self,
        store: PlanStore,
        clock: Clock,
        runner: TransitionRunner,
        members: MemberDirectory | None = None,
    ) -> None:
        self._store = store
        self._clock = clock
        self._runner = runner
        self._members = members

    async def counted(
        self,
        ref: PlanRef,
        state: PlanningState,
        revision: PlanRevision,
        settings: PlanModeSettings,
        fresh: Actor | None = None,
    ) -> list[ApprovalVote]:
        """The votes on ``revision`` that count now, in the order they were cast: each
        voter as the member directory reads them now (``fresh``: someone read just now, who
        need not be read again) may approve under ``settings`` in ``state``."""
        votes = await self._store.list_votes(ref.plan_id, ref.revision, revision.sha256)
        return await entitled_votes(self._members, ref.agent, votes, state, settings, fresh)

    async def cast(
        self,
        ref: PlanRef,
        state: PlanningState,
        revision: PlanRevision,
        approver: Actor,
        settings: PlanModeSettings,
    ) -> Sequence[ApprovalVote]:
        """Record ``approver``'s vote once (a second click counts once) and return the votes
        that count now; the caller executes the plan when there are enough of them. The
        caller has checked that ``approver`` may approve; a revision decided meanwhile
        raises what deciding it again would."""
        vote = ApprovalVote(
            plan_id=ref.plan_id,
            revision=ref.revision,
            sha256=revision.sha256,
            voter_id=approver.id,
            voter_name=approver.name,
            at=self._clock.now(),
        )
        detail = {
            "sha256": revision.sha256,
            "voter_id": approver.id,
            "voter_name": approver.name,
            "needed": settings.approvals,
        }
        audit = AuditEntry(
            at=vote.at,
            agent=ref.agent,
            actor=approver.label,
            action=AuditAction.APPROVAL_VOTE,
            plan_id=ref.plan_id,
            revision=ref.revision,
            detail=detail,
        )
        written = await self._store.record_vote(vote, ref.agent, audit)
        if written is VoteWrite.CLOSED:
            decision = await self._store.find_decision(ref.plan_id, ref.revision)
            if decision is not None:
                raise already_decided(decision)
            raise StalePlan(ref.plan_id, ref.revision, None)
        votes = await self.counted(ref, state, revision, settings, fresh=approver)
        if written is VoteWrite.RECORDED and len(votes) < settings.approvals:
            change = PlanningChange(
                AuditAction.APPROVAL_VOTE, state, state, approver, revision, detail
            )
            await self._runner.notify(change)
        return votes


async def entitled_votes(
    members: MemberDirectory | None,
    agent: str,
    votes: Sequence[ApprovalVote],
    state: PlanningState,
    settings: PlanModeSettings,
    fresh: Actor | None = None,
) -> list[ApprovalVote]:
    """The ``votes`` that count now, in their order: each voter as ``members`` reads them
    now (``fresh``: someone read just now) may approve under ``settings`` in ``state``. A
    voter who cannot be read again does not count. Plan approvals and Merge votes on a
    completion card are both counted here."""
    now = await asyncio.gather(*(_voter_now(members, agent, vote, fresh) for vote in votes))
    return [
        vote
        for vote, voter in zip(votes, now, strict=True)
        if voter is not None and approver_rule(voter, state, settings, approving=True) is None
    ]


async def _voter_now(
    members: MemberDirectory | None, agent: str, vote: ApprovalVote, fresh: Actor | None
) -> Actor | None:
    if fresh is not None and fresh.id == vote.voter_id:
        return fresh
    if members is None:
        return None
    voter = await members.member(agent, vote.voter_id)
    return voter if voter is not None and voter.id == vote.voter_id else None
