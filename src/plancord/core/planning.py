"""Phases, the transition table, and the records a planning session is made of.

Transitions are data: ``TRANSITIONS`` maps ``(phase, event)`` to the next phase, and anything
not in it raises ``InvalidTransition`` with a message a user can read. The service
(``core.service``) is the only writer; this module decides nothing about storage or Discord.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from plancord.core.errors import InvalidTransition
from plancord.core.places import Place
from plancord.core.plan import Plan


class Phase(StrEnum):
    INACTIVE = "inactive"
    GATHERING = "gathering"
    SUBMITTED = "submitted"
    EXECUTING = "executing"

    @property
    def is_planning(self) -> bool:
        """Gathering or submitted: the read-only phases."""
        return self in (Phase.GATHERING, Phase.SUBMITTED)


class PlanEvent(StrEnum):
    ENTER = "enter"
    SUBMIT = "submit"
    APPROVE = "approve"
    REQUEST_CHANGES = "request_changes"
    REJECT = "reject"
    CANCEL = "cancel"
    TIMEOUT = "timeout"
    COMPLETE = "complete"
    AMEND = "amend"
    REVISE = "revise"
    """A new revision while one waits: a member's direct edit, or the agent's answer to one."""


TRANSITIONS: Mapping[tuple[Phase, PlanEvent], Phase] = {
    (Phase.INACTIVE, PlanEvent.ENTER): Phase.GATHERING,
    (Phase.GATHERING, PlanEvent.SUBMIT): Phase.SUBMITTED,
    (Phase.SUBMITTED, PlanEvent.APPROVE): Phase.EXECUTING,
    (Phase.SUBMITTED, PlanEvent.REQUEST_CHANGES): Phase.GATHERING,
    (Phase.SUBMITTED, PlanEvent.REJECT): Phase.INACTIVE,
    (Phase.GATHERING, PlanEvent.CANCEL): Phase.INACTIVE,
    (Phase.SUBMITTED, PlanEvent.CANCEL): Phase.INACTIVE,
    (Phase.GATHERING, PlanEvent.TIMEOUT): Phase.INACTIVE,
    (Phase.SUBMITTED, PlanEvent.TIMEOUT): Phase.INACTIVE,
    (Phase.EXECUTING, PlanEvent.COMPLETE): Phase.INACTIVE,
    (Phase.EXECUTING, PlanEvent.CANCEL): Phase.INACTIVE,
    (Phase.EXECUTING, PlanEvent.AMEND): Phase.SUBMITTED,
    (Phase.SUBMITTED, PlanEvent.REVISE): Phase.SUBMITTED,
}

_PHASE_SITUATION: Mapping[Phase, str] = {
    Phase.INACTIVE: "the agent is not in plan mode",
    Phase.GATHERING: "the agent is still exploring and has not submitted a plan yet",
    Phase.SUBMITTED: "a plan is already waiting for approval",
    Phase.EXECUTING: "an approved plan is being executed",
}

_EVENT_ACTION: Mapping[PlanEvent, str] = {
    PlanEvent.ENTER: "enter plan mode",
    PlanEvent.SUBMIT: "submit a plan",
    PlanEvent.APPROVE: "approve",
    PlanEvent.REQUEST_CHANGES: "request changes",
    PlanEvent.REJECT: "reject",
    PlanEvent.CANCEL: "cancel",
    PlanEvent.TIMEOUT: "time out",
    PlanEvent.COMPLETE: "complete the plan",
    PlanEvent.AMEND: "amend the plan",
    PlanEvent.REVISE: "edit the plan",
}


def next_phase(phase: Phase, event: PlanEvent) -> Phase:
    """The phase ``event`` leads to from ``phase``, or ``InvalidTransition``."""
    target = TRANSITIONS.get((phase, event))
    if target is None:
        situation = _PHASE_SITUATION[phase]
        if event is PlanEvent.CANCEL and phase is Phase.INACTIVE:
            situation = "there is nothing to cancel: " + situation
        raise InvalidTransition(
            phase.value, event.value, f"Cannot {_EVENT_ACTION[event]}: {situation}."
        )
    return target


class EntrySource(StrEnum):
    USER = "user"
    AGENT = "agent"
    DEFAULT = "default"
    OPERATOR = "operator"


class ApprovalMode(StrEnum):
    NORMAL = "normal"
    FRESH_CONTEXT = "fresh_context"
    CONFIRM_EACH_EDIT = "confirm_each_edit"


class StepStatus(StrEnum):
    PENDING = "pending"
    IN_PROGRESS = "in_progress"
    DONE = "done"
    SKIPPED = "skipped"


class RevisionAuthor(StrEnum):
    AGENT = "agent"
    HUMAN_EDIT = "human-edit"


class ActorKind(StrEnum):
    USER = "user"
    AGENT = "agent"
    OPERATOR = "operator"
    SCHEDULER = "scheduler"
    POLICY = "policy"


class Actor(BaseModel):
    """Who causes a change. For Discord users ``roles`` holds role ids and names as text."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: ActorKind
    id: str
    name: str
    roles: frozenset[str] = frozenset()
    is_admin: bool = False
    place: Place | None = None
    """Where a member acted (``core.places``): the authority judges it against the agent's
    home. None for an act with no place of its own (the operator's shell, a voter read
    again from the agent's own server, the core's own callers)."""

    @classmethod
    def user(
        cls,
        user_id: int | str,
        name: str,
        *,
        roles: frozenset[str] = frozenset(),
        is_admin: bool = False,
        place: Place | None = None,
    ) -> Actor:
        return cls(
            kind=ActorKind.USER,
            id=str(user_id),
            name=name,
            roles=roles,
            is_admin=is_admin,
            place=place,
        )

    @classmethod
    def agent(cls, name: str) -> Actor:
        return cls(kind=ActorKind.AGENT, id=name, name=name)

    @classmethod
    def operator(cls, name: str = "operator") -> Actor:
        return cls(kind=ActorKind.OPERATOR, id="operator", name=name)

    @classmethod
    def scheduler(cls) -> Actor:
        return cls(kind=ActorKind.SCHEDULER, id="scheduler", name="scheduler")

    @classmethod
    def policy(cls, name: str) -> Actor:
        return cls(kind=ActorKind.POLICY, id="policy", name=name)

    @property
    def label(self) -> str:
        """The audit log's ``actor`` column: ``user:123(ana)``, ``agent:x``, ``operator``."""
        if self.kind is ActorKind.USER:
            return f"user:{self.id}({self.name})"
        if self.kind is ActorKind.AGENT:
            return f"agent:{self.id}"
        if self.kind is ActorKind.POLICY:
            return f"policy:{self.name}"
        return self.kind.value

    @classmethod
    def from_label(cls, label: str) -> Actor | None:
        """The actor an audit row's ``actor`` column names: ``label`` read back (roles and
        the admin flag are not in it). None for a label plancord does not write."""
        kind, _, rest = label.partition(":")
        if kind == ActorKind.USER.value and rest.endswith(")") and "(" in rest:
            user_id, _, name = rest[:-1].partition("(")
            return cls.user(user_id, name)
        if kind == ActorKind.AGENT.value and rest:
            return cls.agent(rest)
        if kind == ActorKind.POLICY.value and rest:
            return cls.policy(rest)
        if label == ActorKind.OPERATOR.value:
            return cls.operator()
        if label == ActorKind.SCHEDULER.value:
            return cls.scheduler()
        return None


class StepProgress(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    status: StepStatus = StepStatus.PENDING
    note: str = ""


class PlanningState(BaseModel):
    """One agent's planning state: exactly one row per agent."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    agent: str
    phase: Phase = Phase.INACTIVE
    task: str | None = None
    requested_by: str | None = None
    requested_by_name: str | None = None
    entered_at: datetime | None = None
    entry_source: EntrySource | None = None
    entry_reason: str | None = None
    plan_id: str | None = None
    revision: int = 0
    plan_sha: str | None = None
    approval_deadline: datetime | None = None
    idle_deadline: datetime | None = None
    approved_by: str | None = None
    approved_by_name: str | None = None
    approved_at: datetime | None = None
    approval_mode: ApprovalMode | None = None
    steps: tuple[StepProgress, ...] = ()
    amends: int | None = None
    """While an amendment waits: the approved revision it amends (execution is paused)."""
    version: int = 0
    updated_at: datetime | None = None

    @property
    def next_deadline(self) -> datetime | None:
        pending = [d for d in (self.approval_deadline, self.idle_deadline) if d is not None]
        return min(pending) if pending else None

    def cleared(self, **changes: Any) -> PlanningState:
        """Back to inactive: every planning field reset, identity and version kept."""
        base = PlanningState(agent=self.agent, version=self.version)
        return base.model_copy(update=changes)


class PlanRevision(BaseModel):
    """One submitted revision of a plan; immutable."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    agent: str
    plan_id: str
    revision: int = Field(ge=1)
    plan: Plan
    markdown: str
    sha256: str
    submitted_at: datetime
    author: RevisionAuthor = RevisionAuthor.AGENT
    tree: str | None = None
    """The workspace as it was when this revision was submitted (``WorkspaceProbe.tree``)."""
    edited_by: str | None = None
    """A direct edit (``author`` human-edit): the member's id (``Actor.id``), its author."""
    edited_by_name: str | None = None

    @property
    def exact_ref(self) -> PlanRef:
        """This revision with its sha: what a decision or an edit of exactly it names."""
        return PlanRef(
            agent=self.agent, plan_id=self.plan_id, revision=self.revision, sha256=self.sha256
        )

    @property
    def author_name(self) -> str:
        """Who wrote this revision, as the card and the diff name them."""
        if self.author is RevisionAuthor.HUMAN_EDIT:
            return f"{self.edited_by_name or 'a member'} (direct edit)"
        return self.agent

    @property
    def sha8(self) -> str:
        return self.sha256[:8]


class AuditAction(StrEnum):
    """Every action the audit log records, and every change a ``PlanningChange`` announces."""

    AGENT_CREATED = "agent-created"
    AGENT_REMOVED = "agent-removed"
    ENTERED = "entered"
    SUBMITTED = "submitted"
    APPROVAL_VOTE = "approval-vote"
    APPROVED = "approved"
    CHANGES_REQUESTED = "changes-requested"
    REJECTED = "rejected"
    CANCELLED = "cancelled"
    TIMED_OUT = "timed-out"
    COMPLETED = "completed"
    STEP_UPDATED = "step-updated"
    DRIFT = "drift"
    DECISION_REFUSED = "decision-refused"
    INSTRUCT_REFUSED = "instruct-refused"
    PERMISSION_ALLOWED = "permission-allowed"
    PERMISSION_DENIED = "permission-denied"
    PERMISSION_TIMED_OUT = "permission-timed-out"
    PERMISSION_NOT_SHOWN = "permission-not-shown"
    PERMISSION_EXPIRED = "permission-expired"
    ASK_REFUSED = "ask-refused"
    """A click on an ask (permission, drift, checkpoint, question) the policy refused."""
    QUESTION_ANSWERED = "question-answered"
    """A pick in a plan question's menu."""
    CARD_REPOSTED = "card-reposted"
    RESULT_MERGE = "result-merge"
    RESULT_MERGE_VOTE = "result-merge-vote"
    RESULT_DISCARD = "result-discard"
    RESULT_ROLL_BACK = "result-roll-back"
    RESULT_PUSH = "result-push"
    RESULT_REFUSED = "result-refused"
    """A click on a completion card the policy or the result's state refused."""
    COMMENTED = "commented"
    """A member's comment on a plan revision or one of its steps."""
    COMMENT_RESOLVED = "comment-resolved"
    SCHEDULE_CREATED = "schedule-created"
    SCHEDULE_PAUSED = "schedule-paused"
    SCHEDULE_RESUMED = "schedule-resumed"
    SCHEDULE_DELETED = "schedule-deleted"
    SCHEDULE_RUN = "schedule-run"
    """A scheduled run fired: its outcome (started, queued, skipped and why)."""


DECISION_ACTIONS: tuple[AuditAction, ...] = (
    AuditAction.APPROVED,
    AuditAction.CHANGES_REQUESTED,
    AuditAction.REJECTED,
    AuditAction.TIMED_OUT,
    AuditAction.CANCELLED,
)
"""Audit actions that end a submitted revision's wait; used to tell a race's loser who won."""


class AuditEntry(BaseModel):
    """An append-only record of a decision or transition."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: int | None = None
    at: datetime
    agent: str
    actor: str
    action: AuditAction | str = Field(union_mode="left_to_right")
    """An ``AuditAction``; text only for an action this version does not know (a row
    another version wrote), kept as it was read."""
    plan_id: str | None = None
    revision: int | None = None
    detail: dict[str, Any] = Field(default_factory=dict)


class PlanRef(BaseModel):
    """What a button, modal or command names: a plan revision, optionally with its sha."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    agent: str
    plan_id: str
    revision: int
    sha256: str | None = None


def new_plan_id() -> str:
    """A short random id, small enough for Discord's 100-character custom_id."""
    return secrets.token_hex(8)
