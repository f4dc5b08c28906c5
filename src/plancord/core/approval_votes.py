"""The ballot for plans that need several approvers (``plan_mode.approvals``): each distinct
person's approval of one revision is an audit entry, counted once however often they click;
the plan executes when enough of them are in."""

from __future__ import annotations

from plancord.core.planning import (
    Actor,
    AuditAction,
    AuditEntry,
    PlanningState,
    PlanRef,
    PlanRevision,
)
from plancord.core.ports import Clock, PlanningChange, PlanStore
from plancord.core.transition_runner import TransitionRunner


class ApprovalVotes:
    """Records and counts approval votes, kept in the audit log so they survive restarts."""

    def __init__(self, store: PlanStore, clock: Clock, runner: TransitionRunner) -> None:
        self._store = store
        self._clock = clock
        self._runner = runner

    async def voters(self, ref: PlanRef) -> list[tuple[str, str]]:
        """(id, name) of each distinct person who approved ``ref``'s revision, in order."""
        entries = await self._store.list_audit(ref.agent, limit=1000)
        seen: dict[str, str] = {}
        for entry in sorted(entries, key=lambda e: (e.at, e.id or 0)):
            if (
                entry.action == AuditAction.APPROVAL_VOTE
                and entry.plan_id == ref.plan_id
                and entry.revision == ref.revision
            ):
                voter = str(entry.detail.get("voter_id"))
                seen.setdefault(voter, str(entry.detail.get("voter_name")))
        return list(seen.items())

    async def cast(
        self,
        ref: PlanRef,
        state: PlanningState,
        revision: PlanRevision,
        approver: Actor,
        needed: int,
    ) -> list[tuple[str, str]]:
        """Record ``approver``'s approval once (a second click counts once) and return every
        vote so far; the caller executes the plan when there are ``needed`` of them."""
        votes = await self.voters(ref)
        if all(voter != approver.id for voter, _ in votes):
            detail = {
                "sha256": revision.sha256,
                "voter_id": approver.id,
                "voter_name": approver.name,
                "needed": needed,
            }
            await self._store.append_audit(
                AuditEntry(
                    at=self._clock.now(),
                    agent=ref.agent,
                    actor=approver.label,
                    action=AuditAction.APPROVAL_VOTE,
                    plan_id=ref.plan_id,
                    revision=ref.revision,
                    detail=detail,
                )
            )
            votes = await self.voters(ref)
            if len(votes) < needed:
                change = PlanningChange(
                    AuditAction.APPROVAL_VOTE, state, state, approver, revision, detail
                )
                await self._runner.notify(change)
        return votes
