"""A decision on an execution's result as an intent: written before git runs, completed
after.

Why this exists: Merge, Discard, Roll back and Push change git and then the database, and a
crash (or a database that cannot be written) between the two would leave them disagreeing:
a member told "nothing was changed" while the base branch moved. The host therefore writes
what it is about to do first (``ResultIntent``), runs git, and completes the intent in the
same transaction as the record of the decision. An intent left open by a process that is
gone is finished or undone after a restart, deciding from what git shows. The open intent is
also the claim on the result: at most one is open per result, so of two approvals at once
one reaches git and the other is told who is deciding.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from plancord.core.errors import PlancordError
from plancord.core.results import ResultAction


class IntentState(StrEnum):
    OPEN = "open"
    """Written; git may be running, may have run, or its process died."""
    DONE = "done"
    """Git did it and the decision is recorded."""
    UNDONE = "undone"
    """Git did not do it (refused, or never reached); the result is as it was."""


class ResultIntent(BaseModel):
    """One decision on one version of a waiting result, as the host is about to carry it
    out. ``detail`` holds what git is to do, for the recovery to read back."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    plan_id: str
    agent: str
    version: int
    action: ResultAction
    actor: str
    """The audit label of who decided (``user:42(ana)``, ``operator``)."""
    actor_name: str
    detail: dict[str, Any] = Field(default_factory=dict)
    owner: str
    """The process carrying it out: ``host:pid:start``."""
    state: IntentState = IntentState.OPEN
    opened_at: datetime
    closed_at: datetime | None = None
    outcome: str | None = None

    def text(self, key: str) -> str:
        """A text value of ``detail`` ('' when absent)."""
        value = self.detail.get(key)
        return value if isinstance(value, str) else ""


def describe(intent: ResultIntent) -> str:
    """``ana's Merge`` — who decided what, for the channel."""
    return f"{intent.actor_name}'s {intent.action.label}"


class DecisionNotRecorded(PlancordError):
    """Git carried out the decision but its record could not be written: the message says
    what git did; the open intent is completed later (``recovery``)."""
