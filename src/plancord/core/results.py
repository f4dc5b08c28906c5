"""The result of an execution, as its completion card shows and decides it.

Why this exists: an approved plan runs on a branch of its own, and what it produced is a
change a human merges or discards. This module holds the domain side of that decision: what
the card shows (``ResultSummary``: per step its outcome, files with lines added and removed,
the commands run, the drift events and how each was decided), the actions a card offers
(``ResultAction``), and how the authority (``core.authority``) is asked about them
(``result_verdict``): the plan's own policy, with the four-eyes rule and ``approvals: N``
applying to Merge as they apply to approving a plan. Discard, Roll back and Push are
decisions like Edit or Reject: the requester, an approver or an administrator. The agent
never decides its own result.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Protocol, runtime_checkable

from plancord.core.authority import (
    ACTS,
    Act,
    AgentRecords,
    Answer,
    AuditPlace,
    Decision,
    Refusal,
    Subject,
    decision_row,
    judge,
    refusal_row,
    standing_of,
)
from plancord.core.errors import PlancordError
from plancord.core.execution import DriftDecision, ExecutionRecord, StepNumber, StepOutcome
from plancord.core.planning import Actor, AuditAction, AuditEntry, PlanningState
from plancord.core.review import PlanReview
from plancord.core.settings import PlanModeSettings

_OUTCOMES = {
    StepOutcome.DONE: "✅ done",
    StepOutcome.SKIPPED: "⏭️ skipped",
    StepOutcome.STOPPED: "⏹️ stopped",
    StepOutcome.CURRENT: "⏹️ stopped",
    StepOutcome.PENDING: "· not reached",
}
_DECISIONS = {
    DriftDecision.ALLOWED: "allowed by a human",
    DriftDecision.DENIED: "denied, restored",
    DriftDecision.TIMED_OUT: "nobody answered, restored",
    DriftDecision.REFUSED: "refused, restored",
    DriftDecision.LOGGED: "kept, flagged",
    DriftDecision.STOPPED: "execution stopped",
}
_CONNECTIONS = {
    DriftDecision.ALLOWED: "allowed for the plan by a human",
    DriftDecision.DENIED: "denied",
    DriftDecision.TIMED_OUT: "nobody answered, refused",
    DriftDecision.REFUSED: "refused",
    DriftDecision.LOGGED: "let through, flagged",
    DriftDecision.STOPPED: "refused",
}
_CHECKPOINTS = {
    Answer.ALLOWED: "Continue",
    Answer.DENIED: "Stop",
    Answer.TIMED_OUT: "nobody answered",
    Answer.NOT_SHOWN: "card not shown",
}


class ResultAction(StrEnum):
    """What a completion card can do; the value is also the audit row's action
    (``audit``). A Merge vote and a refused click are no actions of the card: their audit
    rows are ``AuditAction.RESULT_MERGE_VOTE`` and ``AuditAction.RESULT_REFUSED``."""

    MERGE = "result-merge"
    DISCARD = "result-discard"
    ROLL_BACK = "result-roll-back"
    PUSH = "result-push"

    @property
    def verb(self) -> str:
        """The action as a sentence names it (``roll back``)."""
        return self.act.value

    @property
    def label(self) -> str:
        """The action as its button names it (``Roll back``)."""
        return self.verb.capitalize()

    @property
    def audit(self) -> AuditAction:
        """The audit action rows of this action are written under (the same text)."""
        return AuditAction(self.value)

    @property
    def act(self) -> Act:
        """The act the authority judges."""
        return _ACTS[self]


_ACTS = {
    ResultAction.MERGE: Act.MERGE,
    ResultAction.DISCARD: Act.DISCARD,
    ResultAction.ROLL_BACK: Act.ROLL_BACK,
    ResultAction.PUSH: Act.PUSH,
}


class StaleResult(PlancordError):
    """The click names a result that no longer waits, or an older card of it."""


class ResultFailed(PlancordError):
    """The action was allowed but could not be done (git refused); nothing was changed."""


@dataclass(frozen=True, slots=True)
class FileLines:
    """A changed file of a step: lines added and removed (None for a binary file)."""

    path: str
    added: int | None
    removed: int | None


@dataclass(frozen=True, slots=True)
class DriftLine:
    """A drift event and how it was decided, or a 🔴 step's checkpoint and its answer."""

    what: str
    decision: DriftDecision | Answer | None
    """How the drift was decided; for a checkpoint, the human's answer."""
    connection: bool = False
    """A connection to a host the step does not name (nothing to restore)."""

    @property
    def checkpoint(self) -> bool:
        """A 🔴 step's checkpoint answer rather than a drift event."""
        return isinstance(self.decision, Answer)


@dataclass(frozen=True, slots=True)
class StepResult:
    number: StepNumber
    title: str
    outcome: StepOutcome
    files: tuple[FileLines, ...] = ()
    commands: tuple[str, ...] = ()
    drift: tuple[DriftLine, ...] = ()
    committed: bool = False
    """The step has a commit on the branch, so the card can roll back to before it."""
    rolled_back: bool = False
    """The step was done, and its commit was rolled back from the card since."""
    ignored: tuple[str, ...] = ()
    """Files the step wrote that git ignores: in no commit, so listed apart."""
    hosts: tuple[HostReached, ...] = ()
    """The hosts the step reached through the plan's proxy, with their request counts."""


@dataclass(frozen=True, slots=True)
class HostReached:
    """A host a step reached through the proxy, and how many connections it made (``capped``:
    at least that many; past the recorded bound they are not counted)."""

    host: str
    requests: int
    capped: bool = False

    def text(self) -> str:
        return f"{self.host} ×{self.requests}{'+' if self.capped else ''}"


def step_label(step: StepResult) -> str:
    """How a step ended, as a card (or the operator's text) names it."""
    if step.rolled_back:
        return "↩️ rolled back"
    return _OUTCOMES[step.outcome]


def drift_decided(line: DriftLine) -> str:
    """How a drift event or a checkpoint was decided, for people."""
    if line.decision is None:
        return "undecided"
    if isinstance(line.decision, Answer):
        return _CHECKPOINTS[line.decision]
    if line.connection:
        return _CONNECTIONS[line.decision]
    return _DECISIONS[line.decision]


def lines_changed(added: int | None, removed: int | None) -> str:
    """``+3 −1``, or ``(binary)`` when git counts no lines."""
    if added is None or removed is None:
        return "(binary)"
    return f"+{added} −{removed}"


@dataclass(frozen=True, slots=True)
class ResultSummary:
    """Everything a completion card shows of one execution's result."""

    record: ExecutionRecord
    summary: str
    steps: tuple[StepResult, ...]
    votes: tuple[str, ...] = ()
    needed: int = 1
    review: PlanReview | None = None
    """The result review, when the agent's settings ask for one and it is kept."""
    push_remote: str | None = None
    """The remote Push sends the branch to; None when the agent has no way to push."""
    branch_moved_to: str | None = None
    """The commit the branch points at when it moved past the pinned result since the card
    opened (that later work is not part of the result); None when it did not."""
    head: str | None = None
    """The commit the result is pinned to (before it is pinned, the branch's newest step
    commit); None when there is none."""
    before_plan: tuple[FileLines, ...] = ()
    """The work already in the workspace before the plan (the reviewed state's uncommitted
    and untracked changes): on the branch from its first commit, so Merge brings it with
    the steps' work, and the card shows it apart."""
    unlisted: tuple[FileLines, ...] = ()
    """Files Merge would bring (from the base at approval to the pinned commit) that neither
    a kept step nor the work before the plan lists: the card shows them too, so nothing
    reaches the base unseen."""


@runtime_checkable
class ResultListener(Protocol):
    """A front end showing completion cards (the Discord edge)."""

    async def result_ready(self, agent: str, plan_id: str) -> None:
        """An execution ended and its result waits: post its completion card."""
        ...

    async def result_changed(self, agent: str, plan_id: str) -> None:
        """The result changed (rolled back, voted on, merged, discarded): redraw its card."""
        ...

    async def result_recovered(self, agent: str, plan_id: str, text: str) -> None:
        """A decision interrupted by a crash was finished or undone (``text`` says which,
        and what git shows now): tell the agent's channel."""
        ...


def requester_state(record: ExecutionRecord) -> PlanningState:
    """The planning state the approver policy reads, as it stood for this execution."""
    return PlanningState(
        agent=record.agent,
        requested_by=record.requested_by,
        requested_by_name=record.requested_by_name,
    )


async def result_verdict(
    agents: AgentRecords,
    actor: Actor,
    record: ExecutionRecord,
    settings: PlanModeSettings,
    action: ResultAction,
) -> Decision | Refusal:
    """May ``actor`` take ``action`` on ``record``'s result (``core.authority``)."""
    standing = await standing_of(agents, actor, requester_state(record), settings)
    return judge(actor, Subject.RESULT, action.act, standing)


def result_row(
    record: ExecutionRecord,
    actor: Actor,
    action: AuditAction,
    at: datetime,
    what: str,
    why: str = "",
) -> AuditEntry:
    """The audit row of a decision on ``record``'s result, or of a refused click on it
    (``what`` it was or tried, ``why`` it was refused), at the result's version."""
    place = AuditPlace(record.agent, record.plan_id, record.revision)
    detail = {"what": what, "version": record.result_version}
    if action is AuditAction.RESULT_REFUSED and what in _BY_VERB:
        # A refusal, in the format of every refusal (the act, and where it was tried).
        return refusal_row(Subject.RESULT, _BY_VERB[what], actor, place, at, why or None, detail)
    return decision_row(action, actor, place, at, detail, subject=Subject.RESULT, why=why or None)


_BY_VERB = {act.value: act for act in ACTS[Subject.RESULT]}
"""The acts on a result, by the verb its audit rows name them with."""
