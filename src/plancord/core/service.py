"""PlanningService: load → transition → save (state + audit + revision, one transaction) → notify.

Every path that changes plan mode (slash commands, buttons, modals, tool calls, the operator
CLI, the deadline scheduler) goes through here, so the approver policy, the revision binding
and the optimistic version check are decided in one place. Notification happens only after
the transaction committed; a failing notifier is logged and never undoes a decision.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from plancord.core.errors import (
    AlreadyDecided,
    EntryRefused,
    InvalidTransition,
    NotAuthorised,
    PlanModeDisabled,
    StalePlan,
    VersionConflict,
)
from plancord.core.logs import log_plan_mode
from plancord.core.plan import Plan, validate_plan
from plancord.core.planning import (
    Actor,
    ActorKind,
    ApprovalMode,
    AuditEntry,
    EntrySource,
    Phase,
    PlanEvent,
    PlanningState,
    PlanRef,
    PlanRevision,
    RevisionAuthor,
    StepProgress,
    StepStatus,
    decision_refusal,
    describe_approvers,
    may_decide,
    new_plan_id,
    next_phase,
)
from plancord.core.ports import (
    Clock,
    PlanningChange,
    PlanningListener,
    PlanStore,
    SettingsProvider,
    Transition,
)
from plancord.core.settings import DefaultPhase, PlanModeSettings

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class EnterOutcome:
    state: PlanningState
    entered: bool


@dataclass(frozen=True, slots=True)
class PlanningStatus:
    state: PlanningState
    revision: PlanRevision | None
    settings: PlanModeSettings


class PlanningService:
    def __init__(
        self,
        store: PlanStore,
        clock: Clock,
        settings: SettingsProvider,
        notifiers: Sequence[PlanningListener] = (),
    ) -> None:
        self.store = store
        self.clock = clock
        self.settings = settings
        self._notifiers: list[PlanningListener] = list(notifiers)
        self._deadline_listeners: list[Callable[[], None]] = []

    def add_notifier(self, notifier: PlanningListener) -> None:
        self._notifiers.append(notifier)

    def on_deadlines_changed(self, callback: Callable[[], None]) -> None:
        """Called after any transition, so a scheduler can re-arm for the earliest deadline."""
        self._deadline_listeners.append(callback)

    # -- queries ---------------------------------------------------------------------------

    async def status(self, agent: str) -> PlanningStatus:
        state = await self.store.load_state(agent)
        revision = None
        if state.plan_id is not None and state.revision > 0:
            revision = await self.store.get_revision(state.plan_id, state.revision)
        return PlanningStatus(state, revision, await self.settings.plan_mode_for(agent))

    async def current_revision(self, agent: str) -> PlanRevision | None:
        return (await self.status(agent)).revision

    # -- transitions -----------------------------------------------------------------------

    async def enter(
        self,
        agent: str,
        *,
        source: EntrySource,
        actor: Actor,
        task: str | None = None,
        reason: str | None = None,
        requested_by: Actor | None = None,
        interactive: bool = True,
    ) -> EnterOutcome:
        """Start planning. Already planning: nothing changes and the current state comes back.

        ``requested_by`` is the human the plan is for (defaults to ``actor`` when it is a user);
        ``interactive=False`` marks runs no human can answer (scheduled, sub-agent), refused.
        """
        settings = await self.settings.plan_mode_for(agent)
        if not settings.enabled:
            raise PlanModeDisabled(agent)
        state = await self.store.load_state(agent)
        if state.phase is not Phase.INACTIVE:
            return EnterOutcome(state, entered=False)
        if not interactive:
            raise EntryRefused(
                "Plan mode needs a human to approve the plan, and nobody can answer this run "
                "(scheduled or sub-agent). Ask in the agent's channel instead."
            )
        requester = requested_by
        if requester is None and actor.kind is ActorKind.USER:
            requester = actor
        now = self.clock.now()
        new = state.cleared(
            phase=next_phase(state.phase, PlanEvent.ENTER),
            task=task,
            requested_by=requester.id if requester else None,
            requested_by_name=requester.name if requester else None,
            entered_at=now,
            entry_source=source,
            entry_reason=reason,
            plan_id=new_plan_id(),
            idle_deadline=now + settings.gathering_idle_timeout,
        )
        detail = {"source": source.value, "reason": reason, "task": task}
        after = await self._commit(state, new, "entered", actor, detail)
        log_plan_mode("entered", agent, source=source.value, reason=reason or task or "-")
        await self._notify(PlanningChange("entered", state, after, actor, None, detail))
        return EnterOutcome(after, entered=True)

    async def enter_default(
        self,
        agent: str,
        role: str | None,
        *,
        task: str | None,
        requested_by: Actor | None = None,
        interactive: bool = True,
    ) -> EnterOutcome | None:
        """Apply ``default_phase_by_role`` to a new task; None when the role starts unplanned."""
        settings = await self.settings.plan_mode_for(agent)
        if not settings.enabled or settings.default_phase_for(role) is not DefaultPhase.PLAN:
            return None
        return await self.enter(
            agent,
            source=EntrySource.DEFAULT,
            actor=Actor.policy("default_phase_by_role"),
            task=task,
            reason=f"role {role or 'unset'} starts in plan mode",
            requested_by=requested_by,
            interactive=interactive,
        )

    async def submit(
        self,
        agent: str,
        plan: Plan | Mapping[str, Any] | str,
        *,
        actor: Actor | None = None,
        author: RevisionAuthor = RevisionAuthor.AGENT,
    ) -> PlanRevision:
        """Validate and store a new revision; the agent then waits for a human decision."""
        actor = actor or Actor.agent(agent)
        settings = await self.settings.plan_mode_for(agent)
        state = await self.store.load_state(agent)
        target = next_phase(state.phase, PlanEvent.SUBMIT)
        if author is RevisionAuthor.HUMAN_EDIT and not may_decide(actor, state, settings):
            raise NotAuthorised(self._refusal("edit", state, settings))
        valid = validate_plan(plan, max_plan_bytes=settings.max_plan_bytes)
        plan_id = state.plan_id or new_plan_id()
        now = self.clock.now()
        revision = PlanRevision(
            agent=agent,
            plan_id=plan_id,
            revision=state.revision + 1,
            plan=valid,
            markdown=valid.to_markdown(),
            sha256=valid.sha256(),
            submitted_at=now,
            author=author,
        )
        new = state.model_copy(
            update={
                "phase": target,
                "plan_id": plan_id,
                "revision": revision.revision,
                "plan_sha": revision.sha256,
                "idle_deadline": None,
                "approval_deadline": now + settings.approval_timeout,
            }
        )
        detail: dict[str, Any] = {
            "sha256": revision.sha256,
            "author": author.value,
            "bytes": valid.size_bytes(),
        }
        if not settings.require_approval:
            detail["auto_approved"] = True  # nobody is asked to review it
        after = await self._commit(state, new, "submitted", actor, detail, revision)
        log_plan_mode(
            "submitted", agent, plan_id=revision.plan_id, rev=revision.revision, sha=revision.sha8
        )
        await self._notify(PlanningChange("submitted", state, after, actor, revision, detail))
        if not settings.require_approval:
            await self._approve(
                PlanRef(agent=agent, plan_id=revision.plan_id, revision=revision.revision),
                Actor.policy("require_approval=false"),
                ApprovalMode.NORMAL,
                by_policy=True,
            )
        return revision

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
        counted = not by_policy and approver.kind is ActorKind.USER and settings.approvals > 1
        if counted:
            votes = await self._vote(ref, state, revision, approver, settings.approvals)
            if len(votes) < settings.approvals:
                return state
        now = self.clock.now()
        new = state.model_copy(
            update={
                "phase": Phase.EXECUTING,
                "approval_deadline": None,
                "idle_deadline": None,
                "approved_by": approver.id,
                "approved_by_name": approver.name,
                "approved_at": now,
                "approval_mode": mode,
                "steps": tuple(StepProgress() for _ in revision.plan.steps),
            }
        )
        detail = {"sha256": revision.sha256, "mode": mode.value}
        return await self._decided(
            "approved",
            ref,
            state,
            new,
            approver,
            revision,
            detail,
            mode=mode.value if mode is not ApprovalMode.NORMAL else None,
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
                entry.action == "approval-vote"
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
                    action="approval-vote",
                    plan_id=ref.plan_id,
                    revision=ref.revision,
                    detail=detail,
                )
            )
            votes = await self._votes(ref)
            if len(votes) < needed:
                change = PlanningChange("approval-vote", state, state, approver, revision, detail)
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
        return await self._decided("changes-requested", ref, state, new, approver, revision, detail)

    async def reject(
        self, ref: PlanRef, approver: Actor, reason: str | None = None
    ) -> PlanningState:
        """Reject the plan; planning ends and nothing is executed."""
        state, revision, _ = await self._decidable(ref, approver, PlanEvent.REJECT)
        reason = (reason or "").strip() or None
        new = state.cleared()
        detail = {"sha256": revision.sha256, "reason": reason}
        return await self._decided(
            "rejected", ref, state, new, approver, revision, detail, reason=reason or "-"
        )

    async def cancel(self, agent: str, actor: Actor, reason: str | None = None) -> PlanningState:
        """Leave plan mode from any planning phase; requester, approvers and the operator only."""
        settings = await self.settings.plan_mode_for(agent)
        state = await self.store.load_state(agent)
        next_phase(state.phase, PlanEvent.CANCEL)
        if not may_decide(actor, state, settings):
            ref = PlanRef(agent=agent, plan_id=state.plan_id or "", revision=state.revision)
            why = decision_refusal(actor, state, settings)
            await self._audit_refusal(ref, actor, PlanEvent.CANCEL, why)
            raise NotAuthorised(self._refusal("cancel", state, settings))
        revision = await self._revision_of(state)
        new = state.cleared()
        detail = {"reason": reason, "from": state.phase.value}
        after = await self._commit(state, new, "cancelled", actor, detail)
        log_plan_mode(
            "cancelled",
            agent,
            plan_id=state.plan_id,
            rev=state.revision,
            by=actor.name,
            reason=reason,
        )
        await self._notify(PlanningChange("cancelled", state, after, actor, revision, detail))
        return after

    async def complete(self, agent: str, actor: Actor, summary: str | None = None) -> PlanningState:
        """The executed plan is done: by the agent itself, or by someone who may decide."""
        settings = await self.settings.plan_mode_for(agent)
        state = await self.store.load_state(agent)
        next_phase(state.phase, PlanEvent.COMPLETE)
        is_own_agent = actor.kind is ActorKind.AGENT and actor.id == agent
        if not is_own_agent and not may_decide(actor, state, settings):
            raise NotAuthorised(self._refusal("complete", state, settings))
        revision = await self._revision_of(state)
        new = state.cleared()
        detail = {
            "summary": summary,
            "steps": [s.status.value for s in state.steps],
        }
        after = await self._commit(state, new, "completed", actor, detail)
        log_plan_mode("completed", agent, plan_id=state.plan_id, rev=state.revision, by=actor.name)
        await self._notify(PlanningChange("completed", state, after, actor, revision, detail))
        return after

    async def update_step(
        self,
        agent: str,
        step: int,
        status: StepStatus,
        note: str = "",
        *,
        actor: Actor | None = None,
    ) -> PlanningState:
        """Record progress on step ``step`` (1-based) of the plan being executed."""
        actor = actor or Actor.agent(agent)
        state = await self.store.load_state(agent)
        if state.phase is not Phase.EXECUTING:
            raise InvalidTransition(
                state.phase.value,
                "update_step",
                "Step progress can only be recorded while an approved plan is being executed.",
            )
        if not 1 <= step <= len(state.steps):
            raise InvalidTransition(
                state.phase.value,
                "update_step",
                f"The approved plan has steps 1 to {len(state.steps)}; there is no step {step}.",
            )
        steps = list(state.steps)
        steps[step - 1] = StepProgress(status=status, note=note.strip()[:500])
        new = state.model_copy(update={"steps": tuple(steps)})
        detail = {"step": step, "status": status.value, "note": note.strip()[:500] or None}
        after = await self._commit(state, new, "step-updated", actor, detail)
        revision = await self._revision_of(state)
        await self._notify(PlanningChange("step-updated", state, after, actor, revision, detail))
        return after

    async def touch(self, agent: str) -> None:
        """Agent activity while gathering pushes the inactivity deadline back."""
        settings = await self.settings.plan_mode_for(agent)
        moved = await self.store.extend_idle_deadline(
            agent, self.clock.now() + settings.gathering_idle_timeout
        )
        if moved:
            self._deadlines_changed()

    async def fire_due(self) -> list[PlanningChange]:
        """Time out every overdue planning session, once each; nothing executes on timeout."""
        now = self.clock.now()
        changes: list[PlanningChange] = []
        for due in await self.store.due_states(now):
            change = await self._time_out(due, now)
            if change is not None:
                changes.append(change)
        return changes

    async def next_deadline(self) -> datetime | None:
        return await self.store.next_deadline()

    # -- internals -------------------------------------------------------------------------

    async def _time_out(self, state: PlanningState, now: datetime) -> PlanningChange | None:
        if not state.phase.is_planning:
            return None
        which = "approval" if state.phase is Phase.SUBMITTED else "gathering"
        deadline = state.approval_deadline if which == "approval" else state.idle_deadline
        if deadline is None or deadline > now:
            return None
        actor = Actor.scheduler()
        revision = await self._revision_of(state)
        new = state.cleared()
        detail = {"deadline": which, "was": deadline.isoformat()}
        try:
            after = await self._commit(state, new, "timed-out", actor, detail)
        except VersionConflict:
            return None
        log_plan_mode(
            "timed-out", state.agent, plan_id=state.plan_id, rev=state.revision, deadline=which
        )
        change = PlanningChange("timed-out", state, after, actor, revision, detail)
        await self._notify(change)
        return change

    async def _decided(
        self,
        action: str,
        ref: PlanRef,
        before: PlanningState,
        new: PlanningState,
        approver: Actor,
        revision: PlanRevision,
        detail: Mapping[str, Any],
        *,
        reason: str | None = None,
        **log_fields: object,
    ) -> PlanningState:
        """Commit a human's decision on ``ref``, write its frozen log line, then notify."""
        after = await self._commit(before, new, action, approver, detail, race_ref=ref)
        log_plan_mode(
            action,
            ref.agent,
            reason=reason,
            plan_id=ref.plan_id,
            rev=ref.revision,
            sha=revision.sha8,
            by=approver.name,
            **log_fields,
        )
        await self._notify(PlanningChange(action, before, after, approver, revision, detail))
        return after

    async def _revision_of(self, state: PlanningState) -> PlanRevision | None:
        if state.plan_id is None or state.revision == 0:
            return None
        return await self.store.get_revision(state.plan_id, state.revision)

    async def _decidable(
        self, ref: PlanRef, actor: Actor, event: PlanEvent, *, by_policy: bool = False
    ) -> tuple[PlanningState, PlanRevision, PlanModeSettings]:
        """Load and check that ``ref`` names the revision waiting for a decision, and who asks."""
        settings = await self.settings.plan_mode_for(ref.agent)
        # Two independent reads (a revision never changes once written), asked together.
        state, revision = await asyncio.gather(
            self.store.load_state(ref.agent), self.store.get_revision(ref.plan_id, ref.revision)
        )
        if revision is None or revision.agent != ref.agent:
            next_phase(state.phase, event)
            same_plan = state.plan_id == ref.plan_id
            raise StalePlan(ref.plan_id, ref.revision, state.revision if same_plan else None)
        if ref.sha256 is not None and ref.sha256 != revision.sha256:
            raise StalePlan(ref.plan_id, ref.revision, None)
        current = state.plan_id == ref.plan_id and state.revision == ref.revision
        if not current or state.phase is not Phase.SUBMITTED:
            decision = await self.store.find_decision(ref.plan_id, ref.revision)
            if state.plan_id == ref.plan_id and state.revision > ref.revision:
                raise StalePlan(ref.plan_id, ref.revision, state.revision)
            if decision is not None:
                raise _already(decision)
            if not current:
                raise StalePlan(ref.plan_id, ref.revision, None)
            next_phase(state.phase, event)
        if state.plan_sha != revision.sha256:
            raise StalePlan(ref.plan_id, ref.revision, None)
        approving = event is PlanEvent.APPROVE
        if not by_policy and not may_decide(actor, state, settings, approving=approving):
            verb = {PlanEvent.APPROVE: "approve", PlanEvent.REJECT: "reject"}.get(event, "edit")
            why = decision_refusal(actor, state, settings, approving=approving)
            await self._audit_refusal(ref, actor, event, why)
            if may_decide(actor, state, settings):
                raise NotAuthorised(f"You cannot {verb} this plan: {why}.")
            raise NotAuthorised(self._refusal(verb, state, settings))
        return state, revision, settings

    async def _audit_refusal(
        self, ref: PlanRef, actor: Actor, event: PlanEvent, why: str | None
    ) -> None:
        """A refused decision changes nothing but is recorded: who tried what, and why not."""
        await self.store.append_audit(
            AuditEntry(
                at=self.clock.now(),
                agent=ref.agent,
                actor=actor.label,
                action="decision-refused",
                plan_id=ref.plan_id or None,
                revision=ref.revision or None,
                detail={"event": event.value, "why": why},
            )
        )

    @staticmethod
    def _refusal(verb: str, state: PlanningState, settings: PlanModeSettings) -> str:
        return f"Only {describe_approvers(state, settings)} can {verb} this plan."

    async def _commit(
        self,
        before: PlanningState,
        new: PlanningState,
        action: str,
        actor: Actor,
        detail: Mapping[str, Any],
        revision: PlanRevision | None = None,
        race_ref: PlanRef | None = None,
    ) -> PlanningState:
        now = self.clock.now()
        state = new.model_copy(update={"version": before.version + 1, "updated_at": now})
        audit = AuditEntry(
            at=now,
            agent=before.agent,
            actor=actor.label,
            action=action,
            plan_id=before.plan_id or new.plan_id,
            revision=(revision.revision if revision else before.revision) or None,
            detail={k: v for k, v in detail.items() if v is not None},
        )
        try:
            saved = await self.store.save_transition(
                Transition(
                    state=state, expected_version=before.version, audit=audit, revision=revision
                )
            )
        except VersionConflict:
            if race_ref is not None:
                decision = await self.store.find_decision(race_ref.plan_id, race_ref.revision)
                if decision is not None:
                    raise _already(decision) from None
            raise
        self._deadlines_changed()
        return saved

    def _deadlines_changed(self) -> None:
        for callback in self._deadline_listeners:
            callback()

    async def _notify(self, change: PlanningChange) -> None:
        for notifier in self._notifiers:
            try:
                await notifier.planning_changed(change)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception(
                    "notifier %r failed on %s for %s", notifier, change.action, change.after.agent
                )


def _already(decision: AuditEntry) -> AlreadyDecided:
    by = decision.actor
    if by.startswith("user:") and "(" in by:
        by = by[by.index("(") + 1 : -1]
    words = {
        "approved": "approved",
        "changes-requested": "sent back for changes",
        "rejected": "rejected",
        "timed-out": "timed out",
        "cancelled": "cancelled",
    }
    action = words.get(decision.action, decision.action)
    if decision.action == "timed-out":
        by = ""
    return AlreadyDecided(action, by, decision.at, decision.revision or 0)
