"""Decisions on a submitted plan: approve (with several approvers when the settings ask for
them), request changes, reject; each bound to exactly one revision and the approver policy."""

from __future__ import annotations

import logging
from typing import Any

from plancord.core.errors import (
    InvalidTransition,
    StaleTree,
)
from plancord.core.planning import (
    Actor,
    ActorKind,
    ApprovalMode,
    AuditAction,
    AuditEntry,
    Phase,
    PlanEvent,
    PlanningState,
    PlanRef,
    PlanRevision,
    StepProgress,
    StepStatus,
)
from plancord.core.ports import (
    PlanningChange,
)
from plancord.core.service_base import ServiceBase

log = logging.getLogger(__name__)


class Decisions(ServiceBase):
    async def approve(
        self, ref: PlanRef, approver: Actor, mode: ApprovalMode = ApprovalMode.NORMAL
    ) -> PlanningState:
        """Approve exactly ``ref``'s revision; stale, already decided or unauthorised refuse."""
        return await self._approve(ref, approver, mode, by_policy=False)

    async def _approve(
        self, ref: PlanRef, approver: Actor, mode: ApprovalMode, *, by_policy: bool
    ) -> PlanningState:
        state, revision, settings = await self._decidable(
            ref, approver, PlanEvent.APPROVE, by_policy=by_policy
        )
        if not by_policy and approver.kind is not ActorKind.OPERATOR:
            await self._check_tree(ref, revision, approver)
        counted = not by_policy and approver.kind is ActorKind.USER and settings.approvals > 1
        if counted:
            votes = await self._vote(ref, state, revision, approver, settings.approvals)
            if len(votes) < settings.approvals:
                return state
        now = self.clock.now()
        steps = await self._steps_for(state, revision)
        new = state.model_copy(
            update={
                "phase": Phase.EXECUTING,
                "amends": None,
                "approval_deadline": None,
                "idle_deadline": None,
                "approved_by": approver.id,
                "approved_by_name": approver.name,
                "approved_at": now,
                "approval_mode": mode,
                "steps": steps,
            }
        )
        detail: dict[str, Any] = {"sha256": revision.sha256, "mode": mode.value}
        if state.amends is not None:
            detail["amends"] = state.amends
        return await self._decided(
            AuditAction.APPROVED,
            ref,
            state,
            new,
            approver,
            revision,
            detail,
            mode=mode.value if mode is not ApprovalMode.NORMAL else None,
        )

    async def _steps_for(
        self, state: PlanningState, revision: PlanRevision
    ) -> tuple[StepProgress, ...]:
        """Progress for ``revision``'s steps: all pending, except that an amendment keeps the
        progress of every step it carries over word for word from the plan it amends."""
        fresh = [StepProgress() for _ in revision.plan.steps]
        if state.amends is None or state.plan_id is None:
            return tuple(fresh)
        amended = await self.store.get_revision(state.plan_id, state.amends)
        if amended is None:
            return tuple(fresh)
        kept = {
            step.description: progress
            for step, progress in zip(amended.plan.steps, state.steps, strict=False)
            if progress.status is not StepStatus.PENDING
        }
        return tuple(kept.get(step.description, StepProgress()) for step in revision.plan.steps)

    async def _check_tree(self, ref: PlanRef, revision: PlanRevision, approver: Actor) -> None:
        """Refuse to execute a plan on a different tree from the one it was reviewed against:
        someone pushed, or another tool wrote, between submission and approval."""
        if self.probe is None or revision.tree is None:
            return
        now = await self.probe.tree(ref.agent)
        if now == revision.tree:
            return
        why = f"the workspace changed since v{ref.revision} was submitted"
        await self._audit_refusal(ref, approver, PlanEvent.APPROVE, why)
        raise StaleTree(
            f"Not approved: {why} ({_short(revision.tree)} then, {_short(now)} now), so the plan "
            "was reviewed against another tree. Take a fresh look: Edit asks the agent to "
            "check the plan against the workspace as it is, and submit it again."
        )

    async def approvals(self, ref: PlanRef) -> list[str]:
        """The names of the distinct people who approved ``ref``'s revision so far, when it
        needs several approvals (``plan_mode.approvals``), in the order they approved."""
        return [name for _, name in await self._votes(ref)]

    async def _votes(self, ref: PlanRef) -> list[tuple[str, str]]:
        entries = await self.store.list_audit(ref.agent, limit=1000)
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

    async def _vote(
        self,
        ref: PlanRef,
        state: PlanningState,
        revision: PlanRevision,
        approver: Actor,
        needed: int,
    ) -> list[tuple[str, str]]:
        """Record ``approver``'s approval once (a second click counts once) and return every
        vote so far; the caller executes the plan when there are ``needed`` of them."""
        votes = await self._votes(ref)
        if all(voter != approver.id for voter, _ in votes):
            detail = {
                "sha256": revision.sha256,
                "voter_id": approver.id,
                "voter_name": approver.name,
                "needed": needed,
            }
            await self.store.append_audit(
                AuditEntry(
                    at=self.clock.now(),
                    agent=ref.agent,
                    actor=approver.label,
                    action=AuditAction.APPROVAL_VOTE,
                    plan_id=ref.plan_id,
                    revision=ref.revision,
                    detail=detail,
                )
            )
            votes = await self._votes(ref)
            if len(votes) < needed:
                change = PlanningChange(
                    AuditAction.APPROVAL_VOTE, state, state, approver, revision, detail
                )
                await self._notify(change)
        return votes

    async def check_decision(self, ref: PlanRef, actor: Actor, event: PlanEvent) -> None:
        """Raise exactly what deciding ``event`` on ``ref`` as ``actor`` would raise now, and
        change nothing: lets a front end refuse before asking someone to fill in a form."""
        await self._decidable(ref, actor, event)

    async def request_changes(
        self, ref: PlanRef, approver: Actor, feedback: str, step: int | None = None
    ) -> PlanningState:
        """Send the plan back to the agent with feedback; it will submit revision n+1."""
        feedback = feedback.strip()
        if not feedback:
            raise InvalidTransition(
                "submitted", "request_changes", "Say what should change in the plan."
            )
        state, revision, settings = await self._decidable(ref, approver, PlanEvent.REQUEST_CHANGES)
        if step is not None and not 1 <= step <= len(revision.plan.steps):
            raise InvalidTransition(
                "submitted",
                "request_changes",
                f"Plan v{revision.revision} has steps 1 to {len(revision.plan.steps)}; "
                f"there is no step {step}.",
            )
        now = self.clock.now()
        new = state.model_copy(
            update={
                "phase": Phase.GATHERING,
                "approval_deadline": None,
                "idle_deadline": now + settings.gathering_idle_timeout,
            }
        )
        detail = {"sha256": revision.sha256, "feedback": feedback, "step": step}
        return await self._decided(
            AuditAction.CHANGES_REQUESTED, ref, state, new, approver, revision, detail
        )

    async def reject(
        self, ref: PlanRef, approver: Actor, reason: str | None = None
    ) -> PlanningState:
        """Reject the plan; planning ends and nothing is executed."""
        state, revision, _ = await self._decidable(ref, approver, PlanEvent.REJECT)
        reason = (reason or "").strip() or None
        new = state.cleared()
        detail = {"sha256": revision.sha256, "reason": reason}
        return await self._decided(
            AuditAction.REJECTED, ref, state, new, approver, revision, detail, reason=reason or "-"
        )


def _short(tree: str | None) -> str:
    return tree.split(" ", 1)[0] if tree else "unreadable"
