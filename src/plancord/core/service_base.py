"""What every part of ``PlanningService`` shares: the store, clock, settings and listeners;
the one commit path (state, audit and revision in one transaction, then notify); and the
checks a decision passes (the revision waiting, who may decide)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from plancord.core.errors import (
    AlreadyDecided,
    NotAuthorised,
    StalePlan,
    VersionConflict,
)
from plancord.core.logs import log_plan_mode
from plancord.core.planning import (
    Actor,
    AuditAction,
    AuditEntry,
    Phase,
    PlanEvent,
    PlanningState,
    PlanRef,
    PlanRevision,
    decision_refusal,
    describe_approvers,
    may_decide,
    next_phase,
)
from plancord.core.ports import (
    Clock,
    PlanningChange,
    PlanningListener,
    PlanStore,
    SettingsProvider,
    Transition,
    WorkspaceProbe,
)
from plancord.core.settings import PlanModeSettings

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


class ServiceBase:
    def __init__(
        self,
        store: PlanStore,
        clock: Clock,
        settings: SettingsProvider,
        notifiers: Sequence[PlanningListener] = (),
        probe: WorkspaceProbe | None = None,
    ) -> None:
        self.store = store
        self.clock = clock
        self.settings = settings
        self.probe = probe
        self._notifiers: list[PlanningListener] = list(notifiers)
        self._deadline_listeners: list[Callable[[], None]] = []

    def add_notifier(self, notifier: PlanningListener) -> None:
        self._notifiers.append(notifier)

    def on_deadlines_changed(self, callback: Callable[[], None]) -> None:
        """Called after any transition, so a scheduler can re-arm for the earliest deadline."""
        self._deadline_listeners.append(callback)

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
                action=AuditAction.DECISION_REFUSED,
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
    if decision.action == AuditAction.TIMED_OUT:
        by = ""
    return AlreadyDecided(action, by, decision.at, decision.revision or 0)
