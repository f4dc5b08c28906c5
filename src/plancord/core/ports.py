"""The protocols the core needs from the outside: storage, clock, settings, notification.

Adapters implement them (``plancord.storage`` the store, the Discord edge and the runtime the
notifier); tests use real adapters where they can. Nothing here does I/O.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol

from plancord.core.planning import Actor, AuditEntry, PlanningState, PlanRevision
from plancord.core.settings import PlanModeSettings


@dataclass(frozen=True, slots=True)
class Transition:
    """Everything one transition writes, in one transaction, guarded by ``expected_version``."""

    state: PlanningState
    expected_version: int
    audit: AuditEntry
    revision: PlanRevision | None = None


@dataclass(frozen=True, slots=True)
class PlanningChange:
    """What happened, after it was committed; sent to every ``Notifier``."""

    action: str
    before: PlanningState
    after: PlanningState
    actor: Actor
    revision: PlanRevision | None = None
    detail: Mapping[str, Any] = field(default_factory=dict)


class PlanStore(Protocol):
    async def load_state(self, agent: str) -> PlanningState:
        """The agent's state; ``AgentNotFound`` when there is no such agent."""
        ...

    async def save_transition(self, transition: Transition) -> PlanningState:
        """Write state + audit (+ revision) atomically; ``VersionConflict`` if the version moved."""
        ...

    async def get_revision(self, plan_id: str, revision: int) -> PlanRevision | None: ...

    async def list_revisions(self, plan_id: str) -> Sequence[PlanRevision]: ...

    async def find_decision(self, plan_id: str, revision: int) -> AuditEntry | None:
        """The audit entry that ended this revision's wait (approved, rejected, timed out…)."""
        ...

    async def list_audit(self, agent: str, limit: int = 100) -> Sequence[AuditEntry]: ...

    async def due_states(self, now: datetime) -> Sequence[PlanningState]:
        """States with a deadline at or before ``now``."""
        ...

    async def next_deadline(self) -> datetime | None: ...

    async def extend_idle_deadline(self, agent: str, deadline: datetime) -> bool:
        """Move the gathering-idle deadline of a gathering agent; False when not gathering."""
        ...

    async def list_states(self) -> Sequence[PlanningState]: ...


class Clock(Protocol):
    def now(self) -> datetime:
        """Timezone-aware UTC now."""
        ...


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(UTC)


class SettingsProvider(Protocol):
    async def plan_mode_for(self, agent: str) -> PlanModeSettings: ...


class StaticSettings:
    """One ``PlanModeSettings`` for every agent."""

    def __init__(self, settings: PlanModeSettings | None = None) -> None:
        self.settings = settings or PlanModeSettings()

    async def plan_mode_for(self, agent: str) -> PlanModeSettings:
        return self.settings


class Notifier(Protocol):
    async def planning_changed(self, change: PlanningChange) -> None: ...
