"""A decision that changes git and the database as an intent: written before git runs,
completed after. A decision on an execution's result (``ResultIntent``) and the start of an
approved plan's execution (``StartIntent``) are both kept this way.

Why this exists: Merge, Discard, Roll back and Push change git and then the database, and a
crash (or a database that cannot be written) between the two would leave them disagreeing:
a member told "nothing was changed" while the base branch moved. The host therefore writes
what it is about to do first (``ResultIntent``), runs git, and completes the intent in the
same transaction as the record of the decision. An intent left open by a process that is
gone is finished or undone after a restart, deciding from what git shows. The open intent is
also the claim on the result: at most one is open per result, so of two approvals at once
one reaches git and the other is told who is deciding.

Approving a plan starts its execution on a branch of its own: the host opens a
``StartIntent`` (the claim on the agent's workspace), git makes the branch, and the approval's
own transaction records the execution and completes the intent (``ports.ExecutionStart``). An
open start intent therefore always means an approval that did not commit: after a crash it
is undone from what git shows, and the plan waits for a decision as before.
"""

from __future__ import annotations

from dataclasses import dataclass
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
    """The lease of the process carrying it out (``agent.execution.lease``)."""
    state: IntentState = IntentState.OPEN
    opened_at: datetime
    closed_at: datetime | None = None
    outcome: str | None = None

    def text(self, key: str) -> str:
        """A text value of ``detail`` ('' when absent)."""
        return detail_text(self.detail, key)


def detail_text(detail: dict[str, Any], key: str) -> str:
    """A text value of an intent's ``detail`` ('' when absent)."""
    value = detail.get(key)
    return value if isinstance(value, str) else ""


class StartIntent(BaseModel):
    """The start of one approved revision's execution, as the host is about to carry it
    out: the claim on the agent's workspace while git makes the branch. ``detail`` holds
    what git is to do, noted once git has read the workspace and before it changes a ref
    (``base``, ``base_commit``, ``reviewed_commit``, ``reviewed_index``), for the recovery
    to read back; an intent without them never got that far."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    agent: str
    plan_id: str
    revision: int
    actor: str
    """The audit label of who approved (``user:42(ana)``, ``operator``, a policy)."""
    actor_name: str
    detail: dict[str, Any] = Field(default_factory=dict)
    owner: str
    """The lease of the process carrying it out (``agent.execution.lease``)."""
    state: IntentState = IntentState.OPEN
    opened_at: datetime
    closed_at: datetime | None = None
    outcome: str | None = None

    def text(self, key: str) -> str:
        """A text value of ``detail`` ('' when absent)."""
        return detail_text(self.detail, key)


@dataclass(frozen=True, slots=True)
class Recovered:
    """An open intent a gone process left, finished or undone, and what the agent's channel
    is told."""

    agent: str
    plan_id: str
    text: str


def describe(intent: ResultIntent) -> str:
    """``ana's Merge`` — who decided what, for the channel."""
    return f"{intent.actor_name}'s {intent.action.label}"


class DecisionNotRecorded(PlancordError):
    """Git carried out the decision but its record could not be written: the message says
    what git did; the open intent is completed later (``recovery``)."""


class LeaseLost(PlancordError):
    """This process's lease lapsed (it was stopped or cut off past it): a decision it was
    carrying out may be another's now, so it runs no more git; the intent stays open for
    whoever takes it over."""
