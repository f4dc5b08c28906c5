"""One answer to "may this actor do this to that", for every decision a person makes.

Why this exists: the question at the centre of plancord — may this member approve this
plan, merge this result, allow this call, continue into this step, answer this question —
must have one answer, whatever front end asks it and whatever the decision is about. Every
path (plan decisions, the completion card, permission requests, drift asks, checkpoints,
questions) names its ``Subject`` and the ``Act`` the member would take, and ``judge``
returns either a ``Decision`` (they may) or a ``Refusal`` (they may not: the rule that
refuses them and the sentence they read). The audit rows of both are built here too, in one
format, so the log reads the same for every subject.

The rules:

- a member acts only from the agent's home (``core.places``): its channel or a thread of it,
  in its own server, so the roles and the administrator flag a click carries are the agent's
  server's; a click anywhere else is refused (and audited) before any other rule, whatever
  the subject; an act with no place (the operator's shell) is not judged by place;
- a question is answered, a schedule made or changed, and the agent instructed, by anyone
  who may instruct it (``core.access``);
- everything else is the approver policy: the member who asked for the work, a configured
  approver role, a server administrator, or the operator; under the four-eyes rule
  (``plan_mode.approval: approver``) whoever asked may not take an approving act (approve,
  merge, allow, continue) on their own request, nor may whoever edited the plan directly
  approve it (an editor is an author); agents, the scheduler and policies never decide;
- when what the answer reads cannot be loaded (the store failed), only administrators
  may decide (fail closed).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any, Protocol

from plancord.core.access import describe_access, may_instruct
from plancord.core.agents import AgentRecord
from plancord.core.errors import AgentNotFound
from plancord.core.places import Home, Place
from plancord.core.planning import (
    Actor,
    ActorKind,
    AuditAction,
    AuditEntry,
    PlanEvent,
    PlanningState,
)
from plancord.core.settings import ApprovalPolicy, PlanModeSettings


class Subject(StrEnum):
    """What a decision is about."""

    PLAN = "plan"
    """A submitted plan revision (or, for cancel and complete, the plan in hand)."""
    RESULT = "result"
    """An execution's result on its completion card."""
    PERMISSION = "permission"
    """A call the permission profile says a human must allow."""
    DRIFT = "drift"
    """A change outside the approved plan, held while a human decides."""
    CHECKPOINT = "checkpoint"
    """A 🔴 step about to start."""
    QUESTION = "question"
    """``ask_user``: a question the agent put to the channel."""
    AGENT = "agent"
    """The agent itself: a message to it, ``/plan start``."""
    SCHEDULE = "schedule"
    """A schedule of the agent's plans (``core.schedules``): made or changed."""


class Act(StrEnum):
    """What the member would do to the subject."""

    APPROVE = "approve"
    EDIT = "edit"
    REJECT = "reject"
    CANCEL = "cancel"
    COMPLETE = "complete"
    MERGE = "merge"
    DISCARD = "discard"
    ROLL_BACK = "roll back"
    PUSH = "push"
    ALLOW = "allow"
    DENY = "deny"
    CONTINUE = "continue"
    STOP = "stop"
    ANSWER = "answer"
    INSTRUCT = "instruct"
    CREATE = "create"
    CHANGE = "change"


ACTS: Mapping[Subject, tuple[Act, ...]] = {
    Subject.PLAN: (Act.APPROVE, Act.EDIT, Act.REJECT, Act.CANCEL, Act.COMPLETE),
    Subject.RESULT: (Act.MERGE, Act.DISCARD, Act.ROLL_BACK, Act.PUSH),
    Subject.PERMISSION: (Act.ALLOW, Act.DENY),
    Subject.DRIFT: (Act.ALLOW, Act.DENY),
    Subject.CHECKPOINT: (Act.CONTINUE, Act.STOP),
    Subject.QUESTION: (Act.ANSWER,),
    Subject.AGENT: (Act.INSTRUCT,),
    Subject.SCHEDULE: (Act.CREATE, Act.CHANGE),
}
"""The acts each subject offers; ``judge`` refuses any other pair as a programming error."""

PLAN_ACTS: Mapping[PlanEvent, Act] = {
    PlanEvent.APPROVE: Act.APPROVE,
    PlanEvent.REQUEST_CHANGES: Act.EDIT,
    PlanEvent.REJECT: Act.REJECT,
    PlanEvent.CANCEL: Act.CANCEL,
    PlanEvent.COMPLETE: Act.COMPLETE,
    PlanEvent.REVISE: Act.EDIT,
}
"""The planning events a person decides, as the act the authority judges."""

APPROVING = frozenset({Act.APPROVE, Act.MERGE, Act.ALLOW, Act.CONTINUE})
"""Acts that let the requested work go ahead: under the four-eyes rule not the requester's."""


class Answer(StrEnum):
    """How a permission request, a drift ask or a checkpoint ended. The values are the
    audit actions' suffixes (``permission-allowed``…), kept as they are stored."""

    ALLOWED = "allowed"
    """A member the policy accepts allowed it (Allow, Continue)."""
    DENIED = "denied"
    """A member the policy accepts denied it (Deny, Stop)."""
    TIMED_OUT = "timed-out"
    """Nobody decided in time: nothing runs."""
    NOT_SHOWN = "not-shown"
    """The card never reached anyone: nothing runs."""

    @property
    def audit_action(self) -> AuditAction:
        return AuditAction(f"permission-{self.value}")


@dataclass(frozen=True, slots=True)
class Decision:
    """``actor`` may take ``act`` on the subject."""

    subject: Subject
    act: Act
    actor: Actor

    @property
    def answer(self) -> Answer:
        """For an ask: what the act answers (Allow and Continue allow; the rest deny)."""
        return Answer.ALLOWED if self.act in APPROVING else Answer.DENIED


@dataclass(frozen=True, slots=True)
class Refusal:
    """``actor`` may not take ``act`` on the subject: ``rule`` says why (for the audit
    log), ``text`` is what the member reads."""

    subject: Subject
    act: Act
    actor: Actor
    rule: str
    text: str


@dataclass(frozen=True, slots=True)
class Standing:
    """What the answer reads: who asked for the work (``requester``: its ``requested_by``
    and name), the agent's plan-mode settings and the agent itself (its home, where a
    member may act on it; for a question and an instruction its creator too). An agent
    not given (None) has no home: a member's act with a place is refused."""

    requester: PlanningState
    settings: PlanModeSettings
    agent: AgentRecord | None = None
    editors: frozenset[str] = frozenset()
    """The ids of the members who edited the plan directly: its authors too."""


class AgentRecords(Protocol):
    """Where the agent a decision is about is read from."""

    async def get_agent(self, name: str) -> AgentRecord: ...


async def standing_of(
    agents: AgentRecords,
    actor: Actor,
    requester: PlanningState,
    settings: PlanModeSettings,
    *,
    editors: frozenset[str] = frozenset(),
) -> Standing:
    """The standing ``judge`` reads for ``actor`` on ``requester.agent``'s work: with the
    agent's record when the act has a place to judge (an agent gone has no home, so such an
    act is refused)."""
    agent = None
    if actor.place is not None:
        try:
            agent = await agents.get_agent(requester.agent)
        except AgentNotFound:
            agent = None
    return Standing(requester, settings, agent, editors)


def judge(
    actor: Actor, subject: Subject, act: Act, standing: Standing | None
) -> Decision | Refusal:
    """May ``actor`` take ``act`` on ``subject``? An act with a place is judged by it first
    (``core.places``). ``standing`` None: what the answer reads could not be loaded, and
    only administrators may decide, from no place (the operator's shell)."""
    if act not in ACTS[subject]:
        raise ValueError(f"a {subject.value} offers no {act.value!r}")
    if standing is None:
        if actor.kind is ActorKind.USER and actor.place is not None:
            # Where the agent lives could not be read either: no place can be its home.
            return _misplaced(subject, act, actor, None)
        if actor.is_admin or actor.kind is ActorKind.OPERATOR:
            return Decision(subject, act, actor)
        unread = "what decides who may could not be read, so only administrators may now"
        return Refusal(subject, act, actor, unread, _unreadable_text(subject))
    if actor.kind is ActorKind.USER and actor.place is not None:
        home = Home.of(standing.agent)
        if home is None or not home.holds(actor.place):
            return _misplaced(subject, act, actor, home)
    if subject in _INSTRUCTING_TEXT:
        return _instructing(actor, subject, act, standing)
    rule = approver_rule(actor, standing.requester, standing.settings, approving=act in APPROVING)
    if rule is None and act in APPROVING and _edited_it(actor, standing):
        rule = (
            "the four-eyes rule (plan_mode.approval: approver) means whoever edited this plan "
            "cannot approve it; another approver must"
        )
    if rule is None:
        return Decision(subject, act, actor)
    return Refusal(subject, act, actor, rule, _refusal_text(actor, subject, act, rule, standing))


def _edited_it(actor: Actor, standing: Standing) -> bool:
    """Under the four-eyes rule, whether ``actor`` is one of the plan's direct editors."""
    return (
        standing.settings.approval is ApprovalPolicy.APPROVER
        and actor.kind is ActorKind.USER
        and actor.id in standing.editors
    )


_INSTRUCTING_TEXT: Mapping[Subject, tuple[str, str]] = {
    Subject.QUESTION: (
        "only members who may instruct the agent answer its questions",
        "Only members who may instruct **{name}** can answer its questions.",
    ),
    Subject.SCHEDULE: (
        "only members who may instruct the agent make or change its schedules",
        "Only members who may instruct **{name}** can {act} its schedules.",
    ),
    Subject.AGENT: (
        "only members who may instruct the agent answer its questions",
        "Only members who may instruct **{name}** can answer its questions.",
    ),
}
"""The subjects whose acts are for whoever may instruct the agent: the rule and the text."""


def _instructing(
    actor: Actor, subject: Subject, act: Act, standing: Standing
) -> Decision | Refusal:
    agent = standing.agent
    if agent is not None and may_instruct(actor, agent, standing.settings.access):
        return Decision(subject, act, actor)
    name = agent.name if agent is not None else "this agent"
    if subject is Subject.AGENT and agent is not None:
        who = describe_access(agent, standing.settings.access)
        text = f"**{name}** takes instructions only from {who}"
        return Refusal(subject, act, actor, "not in the access list", text)
    rule, text = _INSTRUCTING_TEXT[subject]
    return Refusal(subject, act, actor, rule, text.format(name=name, act=act.value))


_ELSEWHERE = {
    Subject.PLAN: "This plan belongs to another channel; decide on it there.",
    Subject.RESULT: "This completion card belongs to another channel.",
    Subject.QUESTION: "This question belongs to another channel; answer it there.",
    Subject.AGENT: "This agent takes instructions only in its own channel.",
    Subject.SCHEDULE: "This agent's schedules are made and changed only in its own channel.",
}
_OUTSIDE_A_SERVER = {
    Subject.PLAN: "Plan buttons work only in the agent's channel.",
}
MISPLACED = (
    "a member acts on an agent only in its own channel (or a thread of it), in its own server"
)
"""The rule a click from anywhere but the agent's home is refused by (its audit row's why)."""


def _misplaced(subject: Subject, act: Act, actor: Actor, home: Home | None) -> Refusal:
    """The refusal of an act made outside the agent's home (``home`` None: it has none)."""
    if home is None:
        rule = "the agent is bound to no channel, so no member may act on it from one"
        return Refusal(subject, act, actor, rule, "This agent has no channel to decide in.")
    place = actor.place
    if place is not None and place.guild is None and subject in _OUTSIDE_A_SERVER:
        return Refusal(subject, act, actor, MISPLACED, _OUTSIDE_A_SERVER[subject])
    text = _ELSEWHERE.get(subject, "This request belongs to another channel; decide on it there.")
    return Refusal(subject, act, actor, MISPLACED, text)


def approver_rule(
    actor: Actor, requester: PlanningState, settings: PlanModeSettings, *, approving: bool = False
) -> str | None:
    """The approver policy: why ``actor`` may not decide on work ``requester`` asked for
    (``approving``: take an act that lets it go ahead), naming the rule; None when they
    may. Approval votes are counted by it too, each voter read again."""
    if actor.kind is ActorKind.OPERATOR:
        return None
    if actor.kind is not ActorKind.USER:
        return "only people decide"
    is_requester = requester.requested_by is not None and actor.id == requester.requested_by
    if approving and is_requester and settings.approval is ApprovalPolicy.APPROVER:
        return (
            "the four-eyes rule (plan_mode.approval: approver) means the person who asked "
            "for this work cannot approve it; another approver must"
        )
    if actor.is_admin or is_requester:
        return None
    if actor.roles & set(settings.approver_roles):
        return None
    return f"only {describe_approvers(requester, settings)} can decide this"


def describe_approvers(requester: PlanningState, settings: PlanModeSettings) -> str:
    """Who the approver policy lets decide, in words."""
    who = []
    if requester.requested_by_name:
        who.append(f"the requester ({requester.requested_by_name})")
    return _one_of(who, settings)


def describe_ask_deciders(settings: PlanModeSettings | None) -> str:
    """Who the approver policy lets decide an ask (a permission request, a drift ask, a
    checkpoint) under ``settings``, in words (None: the settings could not be read, so only
    administrators, as ``judge`` then rules). An ask names its requester by id only, and its
    card is read by the whole channel, so the rule is said rather than the names: the card
    says it, and so does the refusal of anyone outside it."""
    if settings is None:
        return "server administrators"
    return _one_of(["the member who gave the agent this task"], settings)


def _one_of(who: list[str], settings: PlanModeSettings) -> str:
    """``who``, then the approver roles (when ``settings`` names any) and administrators,
    as one phrase joined by "or"."""
    if settings.approver_roles:
        who = [*who, "members with an approver role"]
    who = [*who, "server administrators"]
    if len(who) == 1:
        return who[0]
    return ", ".join(who[:-1]) + " or " + who[-1]


_THING = {
    Subject.PLAN: "this plan",
    Subject.RESULT: "this result",
}


def _refusal_text(actor: Actor, subject: Subject, act: Act, rule: str, standing: Standing) -> str:
    """What a refused member reads: the rule, when they could take the subject's other
    acts (the four-eyes rule); who may instead, when they may take none."""
    requester, settings = standing.requester, standing.settings
    in_the_list = approver_rule(actor, requester, settings) is None
    if subject in _THING:
        thing = _THING[subject]
        if in_the_list:
            return f"You cannot {act.value} {thing}: {rule}."
        return f"Only {describe_approvers(requester, settings)} can {act.value} {thing}."
    other = "Stop" if subject is Subject.CHECKPOINT else "Deny"
    if in_the_list:
        return f"You cannot {act.value} this: {rule}. {other} stays open to you."
    return f"Only {describe_ask_deciders(settings)} can decide this request."


def _unreadable_text(subject: Subject) -> str:
    if subject is Subject.QUESTION:
        return "Only server administrators can answer this question now."
    return "Only server administrators can decide this now."


# -- the audit rows -------------------------------------------------------------------------

_REFUSED = {
    Subject.PLAN: AuditAction.DECISION_REFUSED,
    Subject.RESULT: AuditAction.RESULT_REFUSED,
    Subject.PERMISSION: AuditAction.ASK_REFUSED,
    Subject.DRIFT: AuditAction.ASK_REFUSED,
    Subject.CHECKPOINT: AuditAction.ASK_REFUSED,
    Subject.QUESTION: AuditAction.ASK_REFUSED,
    Subject.AGENT: AuditAction.INSTRUCT_REFUSED,
    Subject.SCHEDULE: AuditAction.INSTRUCT_REFUSED,
}


@dataclass(frozen=True, slots=True)
class AuditPlace:
    """Where a decision's audit row belongs: the agent and, when there is one, the plan
    revision."""

    agent: str
    plan_id: str | None = None
    revision: int | None = None


def refusal_row(
    subject: Subject,
    act: Act,
    actor: Actor,
    place: AuditPlace,
    at: datetime,
    why: str | None,
    detail: Mapping[str, Any] | None = None,
) -> AuditEntry:
    """The audit row of a refused act: who tried which act on what, where (when the act
    had a place), and why not (the policy's rule from a ``Refusal``, or what the subject's
    own state refused)."""
    head: dict[str, Any] = {"subject": subject.value, "act": act.value}
    if actor.place is not None:
        head["place"] = _place_detail(actor.place)
    return _row(_REFUSED[subject], actor, place, at, head, detail, why=why)


def refused_row(
    refusal: Refusal, place: AuditPlace, at: datetime, detail: Mapping[str, Any] | None = None
) -> AuditEntry:
    """The audit row of a ``Refusal`` ``judge`` returned."""
    return refusal_row(refusal.subject, refusal.act, refusal.actor, place, at, refusal.rule, detail)


def decision_row(
    action: AuditAction,
    actor: Actor,
    place: AuditPlace,
    at: datetime,
    detail: Mapping[str, Any] | None = None,
    *,
    subject: Subject,
    act: Act | None = None,
    why: str | None = None,
) -> AuditEntry:
    """The audit row of a decision taken (``action``), in the refusals' format."""
    head: dict[str, Any] = {"subject": subject.value}
    if act is not None:
        head["act"] = act.value
    return _row(action, actor, place, at, head, detail, why=why)


def _row(
    action: AuditAction,
    actor: Actor,
    place: AuditPlace,
    at: datetime,
    head: dict[str, Any],
    detail: Mapping[str, Any] | None,
    *,
    why: str | None,
) -> AuditEntry:
    body = {**head, **(detail or {})}
    if why is not None:
        body["why"] = why
    return AuditEntry(
        at=at,
        agent=place.agent,
        actor=actor.label,
        action=action,
        plan_id=place.plan_id,
        revision=place.revision,
        detail=body,
    )


def _place_detail(place: Place) -> dict[str, str]:
    """Where an act was made, as its audit row says it."""
    shown = {"channel": place.channel}
    if place.guild is not None:
        shown["guild"] = place.guild
    if place.parent is not None:
        shown["parent"] = place.parent
    return shown
