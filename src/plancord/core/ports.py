"""The protocols the core needs from the outside: storage, clock, settings, notification.

Adapters implement them (``plancord.storage`` the store, the Discord edge and the runtime the
notifier); tests use real adapters where they can. Nothing here does I/O.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

from plancord.core.agents import AgentRecord
from plancord.core.authority import Answer, Subject
from plancord.core.ballot import ApprovalVote, VoteWrite
from plancord.core.call_rules import RuleScope
from plancord.core.execution import ExecutionRecord
from plancord.core.network import NetworkBound
from plancord.core.planning import Actor, AuditAction, AuditEntry, PlanningState, PlanRevision
from plancord.core.settings import PlanModeSettings


@dataclass(frozen=True, slots=True)
class ExecutionStart:
    """A branch git made for an approval, not yet recorded: the approval's transaction
    writes ``record`` and completes the start intent ``intent`` (its id) with it
    (``Transition.start``); when the approval does not commit, the branch is undone and the
    intent with it (``core.intents.StartIntent``)."""

    intent: str
    record: ExecutionRecord
    owner: str
    """The lease the start intent is open under: a start another process took over (this
    one lost its lease meanwhile) is not recorded."""


@dataclass(frozen=True, slots=True)
class Transition:
    """Everything one transition writes, in one transaction, guarded by ``expected_version``."""

    state: PlanningState
    expected_version: int
    audit: AuditEntry
    revision: PlanRevision | None = None
    review_hold: timedelta | None = None
    """With a submitted ``revision``: its plan review starts with the submission and holds
    approval for at most this long while it runs (``core.review_gate.running_hold``), so
    no approval can land between the submission and the review's start."""
    start: ExecutionStart | None = None
    """With an approval: the execution git started for it, recorded in this transaction,
    which also completes its start intent (the approval and the branch agree)."""
    before: PlanningState | None = None
    actor: Actor | None = None
    """With ``before``: the change appended to the feed in this transaction
    (``core.changes``), so every other process hears it; tests that save a state alone
    leave both out."""


@dataclass(frozen=True, slots=True)
class PlanningChange:
    """What happened, after it was committed; sent to every ``Notifier``."""

    action: AuditAction
    before: PlanningState
    after: PlanningState
    actor: Actor
    revision: PlanRevision | None = None
    detail: Mapping[str, Any] = field(default_factory=dict)


class ExecutionStarter(Protocol):
    """Puts an approved revision on a branch of its own (``plancord.agent.execution``)."""

    async def refusal(self, agent: str) -> str | None:
        """Why the agent's workspace cannot take an execution branch, or None."""
        ...

    async def start(
        self, agent: str, plan_id: str, revision: int, steps: int, approver: Actor
    ) -> ExecutionStart:
        """Open the start's intent (the claim on the workspace), then start the branch from
        the reviewed tree; the approval's transaction records it (``Transition.start``).
        Raises ``ExecutionRefused`` (nothing changed) when it cannot, or when another
        approval of the agent is under way."""
        ...

    async def amended(self, agent: str, plan_id: str, revision: int, steps: int) -> None:
        """An amendment was approved: the running execution goes on with its steps."""
        ...

    async def abandon(self, start: ExecutionStart, why: str) -> None:
        """The approval that ``start`` was for did not commit: its branch undone, its intent
        closed as undone (left open for the recovery when that cannot be done now)."""
        ...

    def finished(self, start: ExecutionStart) -> None:
        """This process no longer carries ``start`` out (recorded, undone, or left open)."""
        ...


class WorkspaceProbe(Protocol):
    """What the workspace looks like now, so an approval binds to the tree that was reviewed."""

    async def tree(self, agent: str) -> str | None:
        """A short fingerprint of the agent's workspace (its commit and uncommitted changes),
        or None when it cannot be read."""
        ...


class PlanStore(Protocol):
    async def load_state(self, agent: str) -> PlanningState:
        """The agent's state; ``AgentNotFound`` when there is no such agent."""
        ...

    async def save_transition(self, transition: Transition) -> PlanningState:
        """Write state + audit (+ revision) atomically; ``VersionConflict`` if the version moved."""
        ...

    async def get_revision(self, plan_id: str, revision: int) -> PlanRevision | None: ...

    async def get_agent(self, name: str) -> AgentRecord:
        """The agent's record (``AgentNotFound`` when there is none)."""
        ...

    async def list_revisions(self, plan_id: str) -> Sequence[PlanRevision]: ...

    async def open_comments(self, plan_id: str) -> int:
        """How many comments on the plan are not resolved yet (``core.plan_comments``)."""
        ...

    async def find_decision(self, plan_id: str, revision: int) -> AuditEntry | None:
        """The audit entry that ended this revision's wait (approved, rejected, timed out…)."""
        ...

    async def list_audit(self, agent: str, limit: int = 100) -> Sequence[AuditEntry]: ...

    async def append_audit(self, entry: AuditEntry) -> None:
        """Record a decision that changes no state (an approval vote, a refusal)."""
        ...

    async def due_states(self, now: datetime) -> Sequence[PlanningState]:
        """States with a deadline at or before ``now``."""
        ...

    async def next_deadline(self) -> datetime | None: ...

    async def extend_idle_deadline(self, agent: str, deadline: datetime) -> bool:
        """Move the gathering-idle deadline of a gathering agent; False when not gathering."""
        ...

    async def list_states(self) -> Sequence[PlanningState]: ...

    async def record_vote(self, vote: ApprovalVote, agent: str, audit: AuditEntry) -> VoteWrite:
        """Keep ``vote`` with its audit row in one transaction, only while its revision is
        the one ``agent`` waits on; a person's second vote on a revision writes nothing."""
        ...

    async def list_votes(self, plan_id: str, revision: int, sha256: str) -> Sequence[ApprovalVote]:
        """Every vote on that exact revision, in the order they were cast."""
        ...


class MemberDirectory(Protocol):
    """Who a person is *now* in an agent's server, so that a vote cast earlier is held to
    the approval policy as it stands when the quorum would be reached."""

    async def member(self, agent: str, user_id: str) -> Actor | None:
        """The person ``user_id`` as the approver policy sees them now (current role ids,
        the admin flag), or None when that cannot be known: they left the server, or the
        server cannot be read. None makes their vote not count (fail closed)."""
        ...


class Clock(Protocol):
    def now(self) -> datetime:
        """Timezone-aware UTC now."""
        ...


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(UTC)


class AuditLog(Protocol):
    """Where audit rows are appended."""

    async def append_audit(self, entry: AuditEntry) -> None: ...


class SettingsProvider(Protocol):
    async def plan_mode_for(self, agent: str) -> PlanModeSettings: ...

    def network_bound_for(self, agent: str) -> NetworkBound:
        """What ``agent``'s plans may ask of the network (the operator's bound)."""
        ...


class StaticSettings:
    """One ``PlanModeSettings`` (and one network bound) for every agent."""

    def __init__(
        self, settings: PlanModeSettings | None = None, network: NetworkBound | None = None
    ) -> None:
        self.settings = settings or PlanModeSettings()
        self.network = network or NetworkBound()

    async def plan_mode_for(self, agent: str) -> PlanModeSettings:
        return self.settings

    def network_bound_for(self, agent: str) -> NetworkBound:
        return self.network


@dataclass(frozen=True, slots=True)
class ModelUsage:
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0

    def billed_input(self) -> float:
        """Input tokens as Anthropic bills them: cache writes at 1.25, cache reads at 0.1."""
        return (
            self.input_tokens
            + 1.25 * self.cache_creation_input_tokens
            + 0.1 * self.cache_read_input_tokens
        )


@dataclass(frozen=True, slots=True)
class ModelRequest:
    """One Messages API call, in the API's own JSON shapes."""

    model: str
    max_tokens: int
    system: list[dict[str, Any]]
    tools: list[dict[str, Any]]
    messages: list[dict[str, Any]]
    thinking: dict[str, Any] | None = None
    tool_choice: dict[str, Any] | None = None
    """None leaves the choice to the model (``auto``). Forcing a tool (``any``/``tool``) is
    refused by models that think by default: never send it to those."""
    output_config: dict[str, Any] | None = None
    """``effort`` and ``format`` (structured outputs), as the API spells them."""
    cache_control: dict[str, Any] | None = None
    """The top-level (automatic) cache breakpoint, which the API places on the last
    cacheable block, so no block of an earlier turn is edited to move a breakpoint."""
    betas: tuple[str, ...] = ()
    """``anthropic-beta`` values this request needs (e.g. the thinking-binding controls)."""


@dataclass(frozen=True, slots=True)
class ModelReply:
    content: list[dict[str, Any]]
    stop_reason: str | None
    usage: ModelUsage
    model: str
    stop_details: dict[str, Any] | None = None
    """What the API says of the stop (a ``refusal``'s category and explanation)."""
    input_transformations: tuple[dict[str, Any], ...] = ()
    """What the API changed in the request before reading it (thinking blocks it dropped)."""


class ModelClient(Protocol):
    async def create(self, request: ModelRequest) -> ModelReply:
        """Call the model; ``ModelCallFailed`` when the API fails after its retries."""
        ...


class PlanningListener(Protocol):
    async def planning_changed(self, change: PlanningChange) -> None: ...


@dataclass(frozen=True, slots=True)
class PermissionRequest:
    """A mutating call the permission profile says a human must allow first."""

    agent: str
    action: str
    tool_name: str
    summary: str
    requested_by: str | None
    timeout_seconds: float
    outside_plan: str | None = None
    """Set when the call is outside the approved plan: why (``core.drift``)."""
    labels: tuple[str, str] = ("Allow", "Deny")
    """The two buttons' words: ``("Continue", "Stop")`` for a high-risk step's checkpoint."""
    subject: Subject = Subject.PERMISSION
    """What is asked: a call the profile holds, a drift, or a 🔴 step's checkpoint."""
    remember: RuleScope | None = None
    """What "Allow always" / "Deny always" on the card would remember (None: the card
    offers neither: a drift, a checkpoint, a call no rule can name)."""
    applies: str | None = None
    """Which rule applies to the call now, in words, so the card says it before a click."""


@dataclass(frozen=True, slots=True)
class Question:
    """``ask_user``: a question for the human the agent is working for."""

    agent: str
    text: str
    requested_by: str | None
    timeout_seconds: float
    choices: tuple[str, ...] = ()
    """Answers the agent offers (2 to 25); the human may still answer in their own words."""


class FrontEnd(PlanningListener, Protocol):
    """What a front end (Discord, a console, a test) shows for the runtime: the agent's
    text, its activity and its progress lines. Its asks are the core's
    (``core.asks``): the front end only renders them (``core.asks.records.AskCards``)."""

    async def say(self, agent: str, text: str) -> None:
        """Show agent or host text to the agent's channel."""
        ...

    async def activity(self, agent: str, line: str) -> None:
        """A compact line of tool activity (the front end may coalesce them)."""
        ...

    async def progress_line(self, agent: str, key: str, line: str, *, final: bool = False) -> None:
        """A line of its own that changes as work goes on (a sub-agent's progress): shown the
        first time ``key`` is seen, then replaced by each newer ``line``; ``final`` marks the
        last. The front end limits how often it redraws (the latest line wins) and never
        makes the caller wait on its transport."""
        ...


class Notifier(FrontEnd, Protocol):
    """Everything the runtime needs: a front end's lines, and the asks it waits on (in a
    running plancord ``core.asks.agent_side.AskingNotifier``, the asks answered by the
    core's ``AskService``)."""

    async def ask_user(self, question: Question) -> str | None:
        """The human's answer, or None when nobody answered in time."""
        ...

    async def ask_permission(self, request: PermissionRequest) -> Answer:
        """Allowed, denied, or timed out (which the runtime treats as denied). Raises
        ``CardNotShown`` when the request could not be shown to anyone: nothing runs, and
        the reason is the exception's text."""
        ...
