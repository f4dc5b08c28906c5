"""Submitting a plan: validate it, store it as the next revision bound to its hash (and to
the workspace tree it was written against), and wait for a decision. While executing, an
amended plan is submitted the same way and pauses execution until it is decided. When the
settings ask for no approval, the policy approves at once through ``Decisions``.

A member may also edit the waiting revision directly (``edit``): the result is the next
revision, authored by them, bound to its own sha and reviewed again like any other; the
agent may answer that edit with a revision of its own while it waits."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from plancord.core.authority import Act, Refusal, Subject, judge, standing_of
from plancord.core.decisions import Decisions
from plancord.core.errors import NotAuthorised, PlanValidationError, StalePlan
from plancord.core.logs import log_plan_mode
from plancord.core.plan import Plan, validate_plan
from plancord.core.planning import (
    Actor,
    AuditAction,
    Phase,
    PlanEvent,
    PlanningState,
    PlanRef,
    PlanRevision,
    RevisionAuthor,
    new_plan_id,
    next_phase,
)
from plancord.core.ports import (
    Clock,
    PlanningChange,
    PlanStore,
    SettingsProvider,
    WorkspaceProbe,
)
from plancord.core.review_gate import running_hold
from plancord.core.transition_runner import TransitionRunner, already_decided


class Submissions:
    """Turns a submitted plan into a stored revision waiting for a decision."""

    def __init__(
        self,
        store: PlanStore,
        clock: Clock,
        settings: SettingsProvider,
        runner: TransitionRunner,
        decisions: Decisions,
        probe: WorkspaceProbe | None = None,
    ) -> None:
        self._store = store
        self._clock = clock
        self._settings = settings
        self._runner = runner
        self._decisions = decisions
        self._probe = probe

    async def submit(
        self,
        agent: str,
        plan: Plan | Mapping[str, Any] | str,
        *,
        actor: Actor | None = None,
        author: RevisionAuthor = RevisionAuthor.AGENT,
    ) -> PlanRevision:
        """Validate and store a new revision; the agent then waits for a human decision."""
        return await self._submit(agent, plan, actor=actor, author=author, amending=False)

    async def amend(self, agent: str, plan: Plan | Mapping[str, Any] | str) -> PlanRevision:
        """While executing, submit an amended plan: a new revision, diffed against the
        approved one, with execution paused until a human approves it (Reject stops it)."""
        return await self._submit(agent, plan, amending=True)

    async def edit(
        self, ref: PlanRef, plan: Plan | Mapping[str, Any] | str, actor: Actor
    ) -> PlanRevision:
        """A member's direct edit of the revision waiting for a decision: ``ref`` must name
        it with its sha (an edit of text that changed meanwhile is refused), and ``actor``
        may edit what they may send back for changes. The edit is revision n+1, authored by
        ``actor``; it waits for a decision as any revision does."""
        return await self._submit(
            ref.agent, plan, actor=actor, author=RevisionAuthor.HUMAN_EDIT, amending=False, base=ref
        )

    async def _submit(
        self,
        agent: str,
        plan: Plan | Mapping[str, Any] | str,
        *,
        actor: Actor | None = None,
        author: RevisionAuthor = RevisionAuthor.AGENT,
        amending: bool,
        base: PlanRef | None = None,
    ) -> PlanRevision:
        actor = actor or Actor.agent(agent)
        settings = await self._settings.plan_mode_for(agent)
        state = await self._store.load_state(agent)
        event = await self._event(state, amending, base)
        target = next_phase(state.phase, event)
        if author is RevisionAuthor.HUMAN_EDIT:
            standing = await standing_of(self._store, actor, state, settings)
            verdict = judge(actor, Subject.PLAN, Act.EDIT, standing)
            if isinstance(verdict, Refusal):
                if base is not None:
                    await self._runner.audit_refusal(base, actor, event, verdict.rule)
                raise NotAuthorised(verdict.text)
        valid = validate_plan(plan, max_plan_bytes=settings.max_plan_bytes)
        bound = self._settings.network_bound_for(agent)
        outside = bound.problems([step.network for step in valid.steps])
        if outside:
            raise PlanValidationError(outside)
        plan_id = state.plan_id or new_plan_id()
        now = self._clock.now()
        revision = PlanRevision(
            agent=agent,
            plan_id=plan_id,
            revision=state.revision + 1,
            plan=valid,
            markdown=valid.to_markdown(),
            sha256=valid.sha256(),
            submitted_at=now,
            author=author,
            tree=await self._probe.tree(agent) if self._probe is not None else None,
            edited_by=actor.id if author is RevisionAuthor.HUMAN_EDIT else None,
            edited_by_name=actor.name if author is RevisionAuthor.HUMAN_EDIT else None,
        )
        new = state.model_copy(
            update={
                "phase": target,
                "plan_id": plan_id,
                "revision": revision.revision,
                "plan_sha": revision.sha256,
                "idle_deadline": None,
                "approval_deadline": now + settings.approval_timeout,
                "amends": state.revision if amending else state.amends,
            }
        )
        detail: dict[str, Any] = {
            "sha256": revision.sha256,
            "author": author.value,
            "bytes": valid.size_bytes(),
        }
        if new.amends is not None:
            detail["amends"] = new.amends  # execution is paused until this is decided
        if event is PlanEvent.REVISE:
            detail["revises"] = state.revision  # the waiting revision this one replaces
        if not settings.require_approval:
            detail["auto_approved"] = True  # nobody is asked to review it
        review = settings.review if settings.require_approval else None
        after = await self._runner.commit(
            state,
            new,
            AuditAction.SUBMITTED,
            actor,
            detail,
            revision,
            race_ref=base,
            review_hold=running_hold(review) if review is not None else None,
        )
        log_plan_mode(
            "submitted", agent, plan_id=revision.plan_id, rev=revision.revision, sha=revision.sha8
        )
        await self._runner.notify(
            PlanningChange(AuditAction.SUBMITTED, state, after, actor, revision, detail)
        )
        if not settings.require_approval:
            await self._decisions.approve_by_policy(
                PlanRef(agent=agent, plan_id=revision.plan_id, revision=revision.revision),
                Actor.policy("require_approval=false"),
            )
        return revision

    async def _event(self, state: PlanningState, amending: bool, base: PlanRef | None) -> PlanEvent:
        """What this submission is: an amendment, a first submission, or a revision of the
        one waiting (a member's edit of exactly ``base``, or the agent's answer to a member's
        edit); a stale ``base`` is refused before anything else is read."""
        if amending:
            return PlanEvent.AMEND
        if base is not None:
            fresh = (
                state.plan_id == base.plan_id
                and state.revision == base.revision
                and (base.sha256 is None or state.plan_sha == base.sha256)
            )
            if state.phase is not Phase.SUBMITTED or not fresh:
                decision = await self._store.find_decision(base.plan_id, base.revision)
                if decision is not None:
                    raise already_decided(decision)
            if state.phase is Phase.SUBMITTED and not fresh:
                same = state.plan_id == base.plan_id
                raise StalePlan(base.plan_id, base.revision, state.revision if same else None)
            return PlanEvent.REVISE
        if state.phase is Phase.SUBMITTED and state.amends is None:
            waiting = await self._runner.revision_of(state)
            if waiting is not None and waiting.author is RevisionAuthor.HUMAN_EDIT:
                return PlanEvent.REVISE
        return PlanEvent.SUBMIT
