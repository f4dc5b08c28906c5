"""What the planning service answers with: the outcome of asking to enter plan mode, and a
snapshot of an agent's planning status. Plain values, so every front end reads the same."""

from __future__ import annotations

from dataclasses import dataclass

from plancord.core.planning import PlanningState, PlanRevision
from plancord.core.settings import PlanModeSettings


@dataclass(frozen=True, slots=True)
class EnterOutcome:
    """The state after ``enter``; ``entered`` is False when the agent was already planning."""

    state: PlanningState
    entered: bool


@dataclass(frozen=True, slots=True)
class PlanningStatus:
    """An agent's planning state, the revision it points at (if any) and its settings."""

    state: PlanningState
    revision: PlanRevision | None
    settings: PlanModeSettings
