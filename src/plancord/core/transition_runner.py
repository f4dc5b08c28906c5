"""The one commit path every change of plan mode takes: the new state, its audit entry and
any new revision saved in one transaction under the optimistic version check, then the
listeners told. A lost race on a decision becomes ``AlreadyDecided`` naming who won; a
failing listener is logged and never undoes what was committed."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping, Sequence
from datetime import timedelta
from typing import Any

from plancord.core.authority import PLAN_ACTS, AuditPlace, Subject, refusal_row
from plancord.core.errors import AlreadyDecided, VersionConflict
from plancord.core.planning import (
    Actor,
    AuditAction,
    AuditEntry,
    PlanEvent,
    PlanningState,
    PlanRef,
    PlanRevision,
)
from plancord.core.ports import (
    Clock,
    ExecutionStart,
    PlanningChange,
    PlanningListener,
    PlanStore,
    Transition,
)

log = logging.getLogger(__name__)


class TransitionRunner:
    """Saves transitions (state + audit + revision) and notifies, in that order."""

    def __init__(
        self, store: PlanStore, clock: Clock, listeners: Sequence[PlanningListener] = ()
    ) -> None:
        self._store = store
        self._clock = clock
        self._listeners: list[PlanningListener] = list(listeners)
        self._deadline_listeners: list[Callable[[], None]] = []

    def add_listener(self, listener: PlanningListener) -> None:
        self._listeners.append(listener)

    def on_deadlines_changed(self, callback: Callable[[], None]) -> None:
        """Called after any transition, so a scheduler can re-arm for the earliest deadline."""
        self._deadline_listeners.append(callback)

    def deadlines_changed(self) -> None:
        for callback in self._deadline_listeners:
            callback()

    async def commit(
        self,
        before: PlanningState,
        new: PlanningState,
        action: AuditAction,
        actor: Actor,
        detail: Mapping[str, Any],
        revision: PlanRevision | None = None,
        race_ref: PlanRef | None = None,
        review_hold: timedelta | None = None,
        start: ExecutionStart | None = None,
    ) -> PlanningState:
        """Save ``before`` → ``new`` with its audit entry; ``VersionConflict`` when another
        writer got there first (``AlreadyDecided`` instead when ``race_ref`` was decided).
        ``review_hold``: the submitted revision's review holds approval from this very
        transaction (``Transition.review_hold``); ``start``: the execution an approval
        started, recorded in it (``Transition.start``)."""
        now = self._clock.now()
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
            saved = await self._store.save_transition(
                Transition(
                    state=state,
                    expected_version=before.version,
                    audit=audit,
                    revision=revision,
                    review_hold=review_hold,
                    start=start,
                    before=before,
                    actor=actor,
                )
            )
        except VersionConflict:
            if race_ref is not None:
                decision = await self._store.find_decision(race_ref.plan_id, race_ref.revision)
                if decision is not None:
                    raise already_decided(decision) from None
            raise
        self.deadlines_changed()
        return saved

    async def notify(self, change: PlanningChange) -> None:
        for listener in self._listeners:
            try:
                await listener.planning_changed(change)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception(
                    "notifier %r failed on %s for %s", listener, change.action, change.after.agent
                )

    async def audit_refusal(
        self, ref: PlanRef, actor: Actor, event: PlanEvent, why: str | None
    ) -> None:
        """A refused decision changes nothing but is recorded: who tried what, and why not."""
        place = AuditPlace(ref.agent, ref.plan_id or None, ref.revision or None)
        await self._store.append_audit(
            refusal_row(
                Subject.PLAN,
                PLAN_ACTS[event],
                actor,
                place,
                self._clock.now(),
                why,
                {"event": event.value},
            )
        )

    async def revision_of(self, state: PlanningState) -> PlanRevision | None:
        """The revision ``state`` points at, or None before the first submission."""
        if state.plan_id is None or state.revision == 0:
            return None
        return await self._store.get_revision(state.plan_id, state.revision)


def already_decided(decision: AuditEntry) -> AlreadyDecided:
    """The error for deciding on a revision that ``decision`` already settled."""
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
