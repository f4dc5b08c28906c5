"""The change feed's record: one decision some process made, as every other process hears it.

Why this exists: several processes (bot processes on their shares of the shards, the
operator's shell) decide on one store, and each shows cards and runs turns of its own. A
decision's transaction appends one ``Change`` (``storage.changes``); every other process
follows the feed and acts on what it did not decide itself: the process that shows a card
redraws it, the process running a turn stops it when its plan ended elsewhere, and the
deadline scheduler looks again at the next deadline.

A planning change carries the state before and after, the actor and the audit detail, so a
process that hears it gives its listeners the very ``PlanningChange`` the deciding process
gave its own; the revision (immutable) is read from the store by its number.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Protocol

from plancord.core.planning import Actor, AuditAction, PlanningState, PlanRevision
from plancord.core.ports import PlanningChange


class ChangeKind(StrEnum):
    PLAN = "plan"
    """A planning transition (``subject``: the plan id)."""
    RESULT = "result"
    """A result opened, decided or moved (``subject``: the plan id; ``payload['what']``)."""
    EXECUTION = "execution"
    """An execution ended (``subject``: the plan id)."""
    ASK = "ask"
    """A question or permission ask settled (``subject``: the ask id)."""


@dataclass(frozen=True, slots=True)
class Change:
    """One row of the feed. ``id`` increases in commit order on both engines; ``origin``
    names the process (its open database) that made it."""

    id: int
    origin: str
    kind: ChangeKind
    agent: str
    subject: str
    payload: Mapping[str, Any]


class ChangeListener(Protocol):
    """A process's part that acts on a change another process made."""

    async def changed(self, change: Change) -> None: ...


def planning_payload(
    action: AuditAction,
    before: PlanningState,
    after: PlanningState,
    actor: Actor,
    detail: Mapping[str, Any],
) -> dict[str, Any]:
    """What a planning transition appends to the feed (``planning_change`` reads it)."""
    return {
        "action": action.value,
        "before": before.model_dump(mode="json"),
        "after": after.model_dump(mode="json"),
        "actor": actor.model_dump(mode="json"),
        "detail": dict(detail),
    }


def planning_change(payload: Mapping[str, Any], revision: PlanRevision | None) -> PlanningChange:
    """The ``PlanningChange`` the deciding process told its listeners, from its payload."""
    return PlanningChange(
        AuditAction(payload["action"]),
        PlanningState.model_validate(payload["before"]),
        PlanningState.model_validate(payload["after"]),
        Actor.model_validate(payload["actor"]),
        revision,
        dict(payload.get("detail") or {}),
    )
