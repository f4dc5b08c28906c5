"""What the host records of an approved plan's execution: its branch, the step the host
keeps as current, each step's outcome, the commands run and the drift events with how each
was decided.

Why this exists: execution is held by what it does, not by what the agent reports. The host
(``plancord.agent.execution``) keeps these records as it observes each call; the completion
card and ``/plan status`` read them back. ``update_plan_step`` progress (in
``PlanningState.steps``) is the agent's own text and nothing here depends on it.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import NewType

from pydantic import BaseModel, ConfigDict, model_validator

from plancord.core.authority import Answer

StepIndex = NewType("StepIndex", int)
"""A step's place in the plan's list, from 0: what the host's records keep
(``ExecutionRecord.current_step``) and what indexes ``Plan.steps``."""

StepNumber = NewType("StepNumber", int)
"""A step as people count it, from 1: what cards, messages, events and step commits show.
The two are distinct types so that mypy refuses one where the other is meant; the only ways
between them are ``step_number`` and ``step_index``."""


def step_number(index: StepIndex) -> StepNumber:
    """The number people see for the step at ``index``."""
    return StepNumber(index + 1)


def step_index(number: StepNumber) -> StepIndex:
    """The list index of the step people call ``number``."""
    return StepIndex(number - 1)


class StepOutcome(StrEnum):
    """A step as the host saw it: not reached yet, the current one, or how it ended."""

    PENDING = "pending"
    CURRENT = "current"
    DONE = "done"
    SKIPPED = "skipped"
    STOPPED = "stopped"


class ResultState(StrEnum):
    """The result of an ended execution, as its completion card decides it."""

    WAITING = "waiting"
    """Merge or Discard has not been chosen yet."""
    MERGED = "merged"
    DISCARDED = "discarded"


class ExecutionEventKind(StrEnum):
    COMMAND = "command"
    DRIFT = "drift"
    CHECKPOINT = "checkpoint"
    """A 🔴 step's checkpoint answered (``ExecutionEvent.answer``): Continue, Stop, nobody
    in time, or the card never shown."""


class DriftDecision(StrEnum):
    """How a drift event was decided."""

    ALLOWED = "allowed"
    """A human allowed the change; it was kept."""
    DENIED = "denied"
    """A human denied it; the changed paths were restored."""
    TIMED_OUT = "timed-out"
    """Nobody answered the card in time (treated as denied): restored."""
    REFUSED = "refused"
    """Refused by policy (``drift: refuse``): restored, and the model told."""
    LOGGED = "logged"
    """Kept and flagged (``drift: log``)."""
    STOPPED = "stopped"
    """The change could not be restored (or not observed): execution ended."""


class ExecutionRecord(BaseModel):
    """One approved plan's execution on its own branch. ``current_step`` is an index
    (``StepIndex``, from 0); ``steps`` has one outcome per step of ``revision``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    agent: str
    plan_id: str
    revision: int
    branch: str
    base: str
    """The base branch's name: the branch the workspace was on when the plan was approved."""
    base_commit: str
    reviewed_commit: str
    """The branch's first commit: the tree that was reviewed."""
    reviewed_index: str
    current_step: StepIndex = StepIndex(0)
    steps: tuple[StepOutcome, ...] = ()
    waiting_checkpoint: StepIndex | None = None
    """The step whose 🔴 checkpoint card is waiting for an answer, if any."""
    started_at: datetime
    ended_at: datetime | None = None
    end_reason: str | None = None
    result: ResultState | None = None
    """None while the plan runs (or for an execution from before results were kept)."""
    result_version: int = 0
    """Moves whenever the result changes, so a click on an older card is refused."""
    requested_by: str | None = None
    """Who asked for the work (the four-eyes rule holds after plan mode has ended)."""
    requested_by_name: str | None = None
    decided_by_name: str | None = None
    decided_at: datetime | None = None
    outcome: str | None = None
    """What the decision did, for people (``merged as a fast-forward to 1a2b3c4d``)."""
    card_channel: int | None = None
    card_message: int | None = None
    result_commit: str | None = None
    """The commit the completion card shows, pinned when the result opened (or rolled
    back): Merge and Push take exactly it; a later commit on the branch is not part of it."""
    step_message: str | None = None
    """The agent's own commit message for the current step (``git_commit``), if it gave one."""

    @property
    def running(self) -> bool:
        return self.ended_at is None

    @property
    def waiting(self) -> bool:
        """The result waits for Merge or Discard."""
        return self.result is ResultState.WAITING


class ExecutionEvent(BaseModel):
    """A command run (a mutating call), a drift event or a checkpoint's answer, in the step
    it happened in (``step`` as people count it)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    plan_id: str
    seq: int = 0
    """Order within the plan's execution; the store assigns it."""
    at: datetime
    step: StepNumber
    kind: ExecutionEventKind
    tool: str
    action: str
    """What ran, as the permission card shows it (``bash_execute: make test``)."""
    paths: tuple[str, ...] = ()
    """For drift: the changed paths outside the step; for a command: the paths it changed."""
    reason: str | None = None
    decision: DriftDecision | None = None
    """For drift: how it was decided."""
    answer: Answer | None = None
    """For a checkpoint: the human's answer (``allowed`` is Continue, ``denied`` Stop), or
    that nobody answered in time or the card never reached anyone."""

    @model_validator(mode="after")
    def _decided_as_its_kind(self) -> ExecutionEvent:
        if self.answer is not None and self.kind is not ExecutionEventKind.CHECKPOINT:
            raise ValueError(f"a {self.kind.value} event has no checkpoint answer")
        if self.decision is not None and self.kind is ExecutionEventKind.CHECKPOINT:
            raise ValueError("a checkpoint is answered, not decided as drift")
        return self
