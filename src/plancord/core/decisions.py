"""Decisions on a submitted plan: approve (with several approvers when the settings ask for
them), request changes, reject; each bound to exactly one revision and the approver policy.

Before anything changes, a decision is checked here: that its reference names the revision
waiting for a decision (not an older one, not one already decided, not another tree) and
that the person deciding may. A refusal is audited and changes nothing."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from plancord.core.approval_votes import ApprovalVotes
from plancord.core.authority import PLAN_ACTS, Refusal, Subject, judge, standing_of
from plancord.core.errors import (
    ExecutionRefused,
    InvalidTransition,
    NotAuthorised,
    StalePlan,
    StaleTree,
)
from plancord.core.logs import log_plan_mode
from plancord.core.planning import (
    Actor,
    ActorKind,
    ApprovalMode,
    AuditAction,
    Phase,
    PlanEvent,
    PlanningState,
    PlanRef,
    PlanRevision,
    StepProgress,
    StepStatus,
    next_phase,
)
from plancord.core.ports import (
    Clock,
    ExecutionStart,
    ExecutionStarter,
    PlanningChange,
    PlanStore,
    SettingsProvider,
    WorkspaceProbe,
)
from plancord.core.review_gate import ReviewHeld, ReviewRecords, review_hold, settle_window
from plancord.core.settings import PlanModeSettings, ReviewSettings
from plancord.core.transition_runner import TransitionRunner, already_decided


class Decisions:
    """A human's (or a policy's) decision on one submitted revision."""

    def __init__(
        self,
        store: PlanStore,
        clock: Clock,
        settings: SettingsProvider,
        runner: TransitionRunner,
        votes: ApprovalVotes,
        probe: WorkspaceProbe | None = None,
        reviews: ReviewRecords | None = None,
        executions: ExecutionStarter | None = None,
    ) -> None:
        self._store = store
        self._executions = executions
        self._clock = clock
        self._settings = settings
        self._runner = runner
        self._votes = votes
        self._probe = probe
        self._reviews = reviews

    async def approve(
        self,
        ref: PlanRef,
        approver: Actor,
        mode: ApprovalMode = ApprovalMode.NORMAL,
        *,
        acknowledged_blockers: int | None = None,
    ) -> PlanningState:
        """Approve exactly ``ref``'s revision; stale, already decided or unauthorised refuse,
        and so does a plan its review holds back (``ReviewHeld``) unless the approver
        confirmed overriding exactly its ``acknowledged_blockers``."""
        state, revision, settings = await self._decidable(ref, approver, PlanEvent.APPROVE)
        if approver.kind is not ActorKind.OPERATOR:
            await self._check_tree(ref, revision, approver)
        await self._check_comments(ref, settings, approver)
        overridden = await self._check_review(
            ref, revision, settings, approver, acknowledged_blockers
        )
        await self._check_branch(ref, state, approver)
        if approver.kind is ActorKind.USER and settings.approvals > 1:
            votes = await self._votes.cast(ref, state, revision, approver, settings)
            if len(votes) < settings.approvals:
                return state
        return await self._execute(ref, state, revision, approver, mode, overridden)

    async def approve_by_policy(self, ref: PlanRef, policy: Actor) -> PlanningState:
        """Approve ``ref`` because a setting says nobody needs to (``require_approval``): no
        approver, tree, review or vote check, only whether the workspace can take a branch."""
        state, revision, _ = await self._waiting(ref, PlanEvent.APPROVE)
        await self._check_branch(ref, state, policy)
        return await self._execute(ref, state, revision, policy, ApprovalMode.NORMAL, 0)

    async def _execute(
        self,
        ref: PlanRef,
        state: PlanningState,
        revision: PlanRevision,
        approver: Actor,
        mode: ApprovalMode,
        overridden: int,
    ) -> PlanningState:
        """The approval itself: the plan executes (on a new branch, or the amended plan on
        the branch it has), audited with the review blockers ``overridden``."""
        now = self._clock.now()
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
        if overridden:
            detail["review_blockers_acknowledged"] = overridden
        if state.amends is not None:
            detail["amends"] = state.amends
        steps_count = len(revision.plan.steps)
        start = await self._start(ref, approver, steps_count) if state.amends is None else None
        try:
            after = await self._decided(
                AuditAction.APPROVED,
                ref,
                state,
                new,
                approver,
                revision,
                detail,
                mode=mode.value if mode is not ApprovalMode.NORMAL else None,
                start=start,
            )
        except Exception as exc:
            if self._executions is not None and start is not None:
                await self._executions.abandon(start, str(exc) or type(exc).__name__)
            raise
        finally:
            if self._executions is not None and start is not None:
                self._executions.finished(start)
        if self._executions is not None and state.amends is not None:
            await self._executions.amended(ref.agent, ref.plan_id, ref.revision, steps_count)
        return after

    async def _start(self, ref: PlanRef, approver: Actor, steps: int) -> ExecutionStart | None:
        """The approved revision's branch, started before the approval's transaction, which
        records it (``ExecutionStarter.start``). A start refused because the plan was
        decided meanwhile (another approval won) says who decided it; any other refusal
        (another approval under way, git) is audited."""
        if self._executions is None:
            return None
        try:
            return await self._executions.start(
                ref.agent, ref.plan_id, ref.revision, steps, approver
            )
        except ExecutionRefused as refused:
            await self._waiting(ref, PlanEvent.APPROVE)
            await self._runner.audit_refusal(ref, approver, PlanEvent.APPROVE, str(refused))
            raise

    async def _check_branch(self, ref: PlanRef, state: PlanningState, approver: Actor) -> None:
        """Refuse, at approval, a workspace that cannot take an execution branch (detached
        HEAD, bare, mid-rebase…): the approver is told why and nothing executes. An
        amendment goes on on the branch its execution already has."""
        if self._executions is None or state.amends is not None:
            return
        why = await self._executions.refusal(ref.agent)
        if why is None:
            return
        await self._runner.audit_refusal(ref, approver, PlanEvent.APPROVE, why)
        raise ExecutionRefused(
            f"Not approved: this workspace cannot run a plan on a branch of its own: {why}."
        )

    async def _steps_for(
        self, state: PlanningState, revision: PlanRevision
    ) -> tuple[StepProgress, ...]:
        """Progress for ``revision``'s steps: all pending, except that an amendment keeps the
        progress of every step it carries over word for word from the plan it amends."""
        fresh = [StepProgress() for _ in revision.plan.steps]
        if state.amends is None or state.plan_id is None:
            return tuple(fresh)
        amended = await self._store.get_revision(state.plan_id, state.amends)
        if amended is None:
            return tuple(fresh)
        kept = {
            step.description: progress
            for step, progress in zip(amended.plan.steps, state.steps, strict=False)
            if progress.status is not StepStatus.PENDING
        }
        return tuple(kept.get(step.description, StepProgress()) for step in revision.plan.steps)

    async def _check_comments(
        self, ref: PlanRef, settings: PlanModeSettings, approver: Actor
    ) -> None:
        """Under ``require_resolved_comments``, refuse (audited) while a comment is open."""
        if not settings.require_resolved_comments:
            return
        count = await self._store.open_comments(ref.plan_id)
        if count == 0:
            return
        why = f"{count} comment{'s' if count != 1 else ''} on the plan still open"
        await self._runner.audit_refusal(ref, approver, PlanEvent.APPROVE, why)
        raise InvalidTransition(
            "submitted",
            "approve",
            f"Not approved: {why} (plan_mode.require_resolved_comments). `/plan comments` "
            "lists them; their authors or an approver resolve them.",
        )

    async def _check_tree(self, ref: PlanRef, revision: PlanRevision, approver: Actor) -> None:
        """Refuse to execute a plan on a different tree from the one it was reviewed against:
        someone pushed, or another tool wrote, between submission and approval."""
        if self._probe is None or revision.tree is None:
            return
        now = await self._probe.tree(ref.agent)
        if now == revision.tree:
            return
        why = f"the workspace changed since v{ref.revision} was submitted"
        await self._runner.audit_refusal(ref, approver, PlanEvent.APPROVE, why)
        raise StaleTree(
            f"Not approved: {why} ({_short(revision.tree)} then, {_short(now)} now), so the plan "
            "was reviewed against another tree. Take a fresh look: Edit asks the agent to "
            "check the plan against the workspace as it is, and submit it again."
        )

    async def _check_review(
        self,
        ref: PlanRef,
        revision: PlanRevision,
        settings: PlanModeSettings,
        approver: Actor,
        acknowledged_blockers: int | None,
    ) -> int:
        """Refuse (audited) an approval the plan's review holds back; the number of blockers
        the approver confirmed overriding otherwise (0 when none were in the way)."""
        if self._reviews is None:
            return 0
        review = await self._reviews.settled_review(
            ref.plan_id,
            ref.revision,
            since=revision.submitted_at,
            now=self._clock.now(),
            window=settle_window(settings.review or ReviewSettings()),
        )
        running_holds = review is None and await self._reviews.holds_while_running(
            ref.plan_id, ref.revision
        )
        hold = review_hold(
            review,
            settings.review,
            acknowledged_blockers=acknowledged_blockers,
            held_while_running=running_holds,
        )
        blockers = review.blockers if review is not None and review.available else 0
        if hold is not None:
            await self._runner.audit_refusal(ref, approver, PlanEvent.APPROVE, hold.reason)
            raise ReviewHeld(hold, blockers)
        return blockers if acknowledged_blockers == blockers else 0

    async def approvals(self, ref: PlanRef) -> list[str]:
        """The names of the distinct people whose approval of ``ref``'s revision counts now
        (they may still approve), when it needs several approvals (``plan_mode.approvals``),
        in the order they approved."""
        settings = await self._settings.plan_mode_for(ref.agent)
        state, revision = await asyncio.gather(
            self._store.load_state(ref.agent), self._store.get_revision(ref.plan_id, ref.revision)
        )
        if revision is None:
            return []
        votes = await self._votes.counted(ref, state, revision, settings)
        return [vote.voter_name for vote in votes]

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
        now = self._clock.now()
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

    async def _decidable(
        self, ref: PlanRef, actor: Actor, event: PlanEvent
    ) -> tuple[PlanningState, PlanRevision, PlanModeSettings]:
        """Load and check that ``ref`` names the revision waiting for a decision, and that
        the authority lets ``actor`` decide it (a refusal is audited)."""
        state, revision, settings = await self._waiting(ref, event)
        editors = await self._editors(ref) if event is PlanEvent.APPROVE else frozenset()
        standing = await standing_of(self._store, actor, state, settings, editors=editors)
        verdict = judge(actor, Subject.PLAN, PLAN_ACTS[event], standing)
        if isinstance(verdict, Refusal):
            await self._runner.audit_refusal(ref, actor, event, verdict.rule)
            raise NotAuthorised(verdict.text)
        return state, revision, settings

    async def _editors(self, ref: PlanRef) -> frozenset[str]:
        """Who edited this plan directly, in any revision up to ``ref``'s: each is one of
        its authors (their text may live on in a later revision the agent wrote)."""
        revisions = await self._store.list_revisions(ref.plan_id)
        return frozenset(
            r.edited_by for r in revisions if r.revision <= ref.revision and r.edited_by
        )

    async def _waiting(
        self, ref: PlanRef, event: PlanEvent
    ) -> tuple[PlanningState, PlanRevision, PlanModeSettings]:
        """Load and check that ``ref`` names the revision waiting for a decision."""
        settings = await self._settings.plan_mode_for(ref.agent)
        # Two independent reads (a revision never changes once written), asked together.
        state, revision = await asyncio.gather(
            self._store.load_state(ref.agent), self._store.get_revision(ref.plan_id, ref.revision)
        )
        if revision is None or revision.agent != ref.agent:
            next_phase(state.phase, event)
            same_plan = state.plan_id == ref.plan_id
            raise StalePlan(ref.plan_id, ref.revision, state.revision if same_plan else None)
        if ref.sha256 is not None and ref.sha256 != revision.sha256:
            raise StalePlan(ref.plan_id, ref.revision, None)
        current = state.plan_id == ref.plan_id and state.revision == ref.revision
        if not current or state.phase is not Phase.SUBMITTED:
            decision = await self._store.find_decision(ref.plan_id, ref.revision)
            if state.plan_id == ref.plan_id and state.revision > ref.revision:
                raise StalePlan(ref.plan_id, ref.revision, state.revision)
            if decision is not None:
                raise already_decided(decision)
            if not current:
                raise StalePlan(ref.plan_id, ref.revision, None)
            next_phase(state.phase, event)
        if state.plan_sha != revision.sha256:
            raise StalePlan(ref.plan_id, ref.revision, None)
        return state, revision, settings

    async def _decided(
        self,
        action: AuditAction,
        ref: PlanRef,
        before: PlanningState,
        new: PlanningState,
        approver: Actor,
        revision: PlanRevision,
        detail: Mapping[str, Any],
        *,
        reason: str | None = None,
        start: ExecutionStart | None = None,
        **log_fields: object,
    ) -> PlanningState:
        """Commit a human's decision on ``ref`` (with the execution ``start`` it started),
        write its frozen log line, then notify."""
        after = await self._runner.commit(
            before, new, action, approver, detail, race_ref=ref, start=start
        )
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
        await self._runner.notify(PlanningChange(action, before, after, approver, revision, detail))
        return after


def _short(tree: str | None) -> str:
    return tree.split(" ", 1)[0] if tree else "unreadable"
