"""PlanningService: load → transition → save (state + audit + revision, one transaction) → notify.

Every path that changes plan mode (slash commands, buttons, modals, tool calls, the operator
CLI, the deadline scheduler) goes through here, so the approver policy, the revision binding
and the optimistic version check are decided in one place. Notification happens only after
the transaction committed; a failing notifier is logged and never undoes a decision.

The service itself enters plan mode, records step progress, completes and cancels; it hands
the rest to the collaborators it builds, each given only what it uses: a
``TransitionRunner`` that commits and notifies, ``Submissions`` of new revisions,
``Decisions`` on a submitted revision (with ``ApprovalVotes`` when several people must
approve, which reads voters again through the ``MemberDirectory`` it is given) and
``Deadlines`` for timeouts. ``EnterOutcome`` and ``PlanningStatus`` live in
``plancord.core.planning_results`` and are re-exported here for the callers that import them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

from plancord.core.approval_votes import ApprovalVotes
from plancord.core.authority import Act, Refusal, Subject, judge, standing_of
from plancord.core.deadlines import Deadlines
from plancord.core.decisions import Decisions
from plancord.core.errors import (
    EntryRefused,
    InvalidTransition,
    NotAuthorised,
    PlanModeDisabled,
)
from plancord.core.logs import log_plan_mode
from plancord.core.plan import Plan
from plancord.core.planning import (
    Actor,
    ActorKind,
    ApprovalMode,
    AuditAction,
    EntrySource,
    Phase,
    PlanEvent,
    PlanningState,
    PlanRef,
    PlanRevision,
    RevisionAuthor,
    StepProgress,
    StepStatus,
    new_plan_id,
    next_phase,
)
from plancord.core.planning_results import EnterOutcome, PlanningStatus
from plancord.core.ports import (
    Clock,
    ExecutionStarter,
    MemberDirectory,
    PlanningChange,
    PlanningListener,
    PlanStore,
    SettingsProvider,
    WorkspaceProbe,
)
from plancord.core.review_gate import ReviewRecords
from plancord.core.settings import DefaultPhase
from plancord.core.submissions import Submissions
from plancord.core.transition_runner import TransitionRunner

__all__ = ["EnterOutcome", "PlanningService", "PlanningStatus"]


class PlanningService:
    """The one way plan mode changes; see the module docstring."""

    def __init__(
        self,
        store: PlanStore,
        clock: Clock,
        settings: SettingsProvider,
        notifiers: Sequence[PlanningListener] = (),
        probe: WorkspaceProbe | None = None,
        members: MemberDirectory | None = None,
        reviews: ReviewRecords | None = None,
        executions: ExecutionStarter | None = None,
    ) -> None:
        """``executions`` puts each approved revision on a branch of its own (none: the
        plan executes where the workspace stands, as in tests of the planning alone)."""
        self.store = store
        self.clock = clock
        self.settings = settings
        self.probe = probe
        self.members = members
        self._runner = TransitionRunner(store, clock, notifiers)
        votes = ApprovalVotes(store, clock, self._runner, members)
        self._decisions = Decisions(
            store, clock, settings, self._runner, votes, probe, reviews, executions
        )
        self._deadlines = Deadlines(store, clock, settings, self._runner)
        self._submissions = Submissions(
            store, clock, settings, self._runner, self._decisions, probe
        )

    def listen(self, listeners: Sequence[PlanningListener]) -> None:
        """Tell ``listeners``, one after another in this order, of every committed change
        (after those given to the constructor). The app registers its whole ordered list
        in one call (``plancord.app.PlanLifecycle``)."""
        for listener in listeners:
            self._runner.add_listener(listener)

    def on_deadlines_changed(self, callback: Callable[[], None]) -> None:
        """Called after any transition, so a scheduler can re-arm for the earliest deadline."""
        self._runner.on_deadlines_changed(callback)

    def changed_elsewhere(self) -> None:
        """Another process committed a transition (``core.changes``): the scheduler re-arms
        as after one of this process's own."""
        self._runner.deadlines_changed()

    async def status(self, agent: str) -> PlanningStatus:
        state = await self.store.load_state(agent)
        revision = None
        if state.plan_id is not None and state.revision > 0:
            revision = await self.store.get_revision(state.plan_id, state.revision)
        return PlanningStatus(state, revision, await self.settings.plan_mode_for(agent))

    async def current_revision(self, agent: str) -> PlanRevision | None:
        return (await self.status(agent)).revision

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
        after = await self._runner.commit(state, new, AuditAction.ENTERED, actor, detail)
        log_plan_mode("entered", agent, source=source.value, reason=reason or task or "-")
        await self._runner.notify(
            PlanningChange(AuditAction.ENTERED, state, after, actor, None, detail)
        )
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
        return await self._submissions.submit(agent, plan, actor=actor, author=author)

    async def amend(self, agent: str, plan: Plan | Mapping[str, Any] | str) -> PlanRevision:
        """While executing, submit an amended plan: a new revision, diffed against the
        approved one, with execution paused until a human approves it (Reject stops it)."""
        return await self._submissions.amend(agent, plan)

    async def edit(
        self, ref: PlanRef, plan: Plan | Mapping[str, Any] | str, actor: Actor
    ) -> PlanRevision:
        """A member's direct edit of exactly ``ref`` (with its sha): revision n+1, authored
        by ``actor``, waiting for a decision like any other (``Submissions.edit``)."""
        return await self._submissions.edit(ref, plan, actor)

    async def cancel(self, agent: str, actor: Actor, reason: str | None = None) -> PlanningState:
        """Leave plan mode from any planning phase; requester, approvers and the operator only."""
        settings = await self.settings.plan_mode_for(agent)
        state = await self.store.load_state(agent)
        next_phase(state.phase, PlanEvent.CANCEL)
        standing = await standing_of(self.store, actor, state, settings)
        verdict = judge(actor, Subject.PLAN, Act.CANCEL, standing)
        if isinstance(verdict, Refusal):
            ref = PlanRef(agent=agent, plan_id=state.plan_id or "", revision=state.revision)
            await self._runner.audit_refusal(ref, actor, PlanEvent.CANCEL, verdict.rule)
            raise NotAuthorised(verdict.text)
        revision = await self._runner.revision_of(state)
        new = state.cleared()
        detail = {"reason": reason, "from": state.phase.value}
        after = await self._runner.commit(state, new, AuditAction.CANCELLED, actor, detail)
        log_plan_mode(
            "cancelled",
            agent,
            plan_id=state.plan_id,
            rev=state.revision,
            by=actor.name,
            reason=reason,
        )
        await self._runner.notify(
            PlanningChange(AuditAction.CANCELLED, state, after, actor, revision, detail)
        )
        return after

    async def complete(self, agent: str, actor: Actor, summary: str | None = None) -> PlanningState:
        """The executed plan is done: by the agent itself, or by someone who may decide."""
        settings = await self.settings.plan_mode_for(agent)
        state = await self.store.load_state(agent)
        next_phase(state.phase, PlanEvent.COMPLETE)
        is_own_agent = actor.kind is ActorKind.AGENT and actor.id == agent
        by_policy = actor.kind is ActorKind.POLICY  # only plancord's own code makes these
        if not (is_own_agent or by_policy):
            standing = await standing_of(self.store, actor, state, settings)
            verdict = judge(actor, Subject.PLAN, Act.COMPLETE, standing)
            if isinstance(verdict, Refusal):
                raise NotAuthorised(verdict.text)
        revision = await self._runner.revision_of(state)
        new = state.cleared()
        detail = {
            "summary": summary,
            "steps": [s.status.value for s in state.steps],
        }
        after = await self._runner.commit(state, new, AuditAction.COMPLETED, actor, detail)
        log_plan_mode("completed", agent, plan_id=state.plan_id, rev=state.revision, by=actor.name)
        await self._runner.notify(
            PlanningChange(AuditAction.COMPLETED, state, after, actor, revision, detail)
        )
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
        after = await self._runner.commit(state, new, AuditAction.STEP_UPDATED, actor, detail)
        revision = await self._runner.revision_of(state)
        await self._runner.notify(
            PlanningChange(AuditAction.STEP_UPDATED, state, after, actor, revision, detail)
        )
        return after

    async def approve(
        self,
        ref: PlanRef,
        approver: Actor,
        mode: ApprovalMode = ApprovalMode.NORMAL,
        *,
        acknowledged_blockers: int | None = None,
    ) -> PlanningState:
        """Approve exactly ``ref``'s revision; stale, already decided or unauthorised refuse,
        and so does a plan its review holds back (``Decisions.approve``)."""
        return await self._decisions.approve(
            ref, approver, mode, acknowledged_blockers=acknowledged_blockers
        )

    async def approvals(self, ref: PlanRef) -> list[str]:
        """The names of the distinct people who approved ``ref``'s revision so far, when it
        needs several approvals (``plan_mode.approvals``), in the order they approved."""
        return await self._decisions.approvals(ref)

    async def check_decision(self, ref: PlanRef, actor: Actor, event: PlanEvent) -> None:
        """Raise exactly what deciding ``event`` on ``ref`` as ``actor`` would raise now, and
        change nothing: lets a front end refuse before asking someone to fill in a form."""
        await self._decisions.check_decision(ref, actor, event)

    async def request_changes(
        self, ref: PlanRef, approver: Actor, feedback: str, step: int | None = None
    ) -> PlanningState:
        """Send the plan back to the agent with feedback; it will submit revision n+1."""
        return await self._decisions.request_changes(ref, approver, feedback, step)

    async def reject(
        self, ref: PlanRef, approver: Actor, reason: str | None = None
    ) -> PlanningState:
        """Reject the plan; planning ends and nothing is executed."""
        return await self._decisions.reject(ref, approver, reason)

    async def touch(self, agent: str) -> None:
        """Agent activity while gathering pushes the inactivity deadline back."""
        await self._deadlines.touch(agent)

    async def fire_due(self) -> list[PlanningChange]:
        """Time out every overdue planning session, once each; nothing executes on timeout."""
        return await self._deadlines.fire_due()

    async def next_deadline(self) -> datetime | None:
        return await self._deadlines.next_deadline()
