"""Drift decided once: what is done with a call outside the approved plan, and its audit row.

Why this exists: the host finds drift at three moments — before a call, from the tool and
the writes it is known to make; after it, from the paths it was observed to change (or from
finding that it could not observe them); and at a connection the sandbox's proxy holds, from
the host it names. Whatever the moment or the kind of finding, the
plan-mode knob ``drift`` is applied by one function (``drift_action``) and the outcome is
audited by one builder (``drift_row``), so the log reads the same for every drift and a new
kind of finding joins with one member of ``FindingKind`` (and one line saying whether the
host can still keep it from happening).

The row: ``AuditAction.DRIFT`` with ``detail`` ``{"finding", "call", "why", "outcome",
"decision", "step"}`` (``docs/plan-mode.md``, "The audit log").
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from plancord.core.authority import Answer
from plancord.core.drift import DriftPolicy
from plancord.core.execution import DriftDecision, StepNumber
from plancord.core.planning import Actor, AuditAction, AuditEntry


class FindingKind(StrEnum):
    """How the host found that a call is outside the plan."""

    TOOL = "tool"
    """Before the call: its tool, or the writes it is known to make, no step from the
    current one on covers (or it would move ``HEAD`` off the execution branch)."""
    OBSERVED = "observed"
    """After the call: paths it was observed to change that the current step does not
    cover (or ``HEAD`` it moved off the branch)."""
    UNOBSERVED = "unobserved"
    """After the call: the host could not observe what it changed, so it cannot be held
    to the plan or undone."""
    GIT_DIRECTORY = "git-directory"
    """After the call: it wrote a ``.git`` (a file, a link or a directory, or inside one)
    below the workspace's top. A git directory is the host's: such a ``.git`` would send
    every later git run elsewhere (``gitdir:``, a link, a ``commondir``), wedging the
    host's own, or hide what it holds from the result (git records a nested repository as
    one commit id). It is undone whatever the policy, and no human can allow it."""
    HOST = "host"
    """Before a connection: a host the current step does not name (and no human allowed
    for the plan). The proxy holds the connection, so it can still be refused."""
    BOUND = "bound"
    """Before a connection: a host outside the operator's bound for the agent. The bound is
    the operator's: it is refused whatever the policy, and no card can widen it."""


_PREVENTABLE: Mapping[FindingKind, bool] = {
    FindingKind.TOOL: True,
    FindingKind.OBSERVED: True,
    FindingKind.UNOBSERVED: False,
    FindingKind.GIT_DIRECTORY: True,
    FindingKind.HOST: True,
    FindingKind.BOUND: True,
}
"""Whether the host can still keep the drift from standing: not run it (before), or undo
it (after). What it cannot prevent, it can only log or stop on."""

_REFUSED_WHATEVER_THE_POLICY = frozenset({FindingKind.GIT_DIRECTORY, FindingKind.BOUND})
"""Findings no policy and no human can keep: the host's git directories, the operator's
network bound."""


@dataclass(frozen=True, slots=True)
class DriftFinding:
    """A call outside the plan: how it was found, why it is outside, the paths it names."""

    kind: FindingKind
    reason: str
    paths: tuple[str, ...] = ()

    @property
    def preventable(self) -> bool:
        return _PREVENTABLE[self.kind]

    @property
    def why(self) -> str:
        """The reason with the paths, as the audit row and the cards say it."""
        return f"{self.reason}: {listed_paths(self.paths, 10)}" if self.paths else self.reason


class DriftAction(StrEnum):
    """What is done with a finding. The values are the audit row's ``outcome``."""

    ASK = "ask"
    """A human decides (Allow / Deny) while the call waits, or while its change is held."""
    REFUSE = "refuse"
    """Not run (before), or undone (after); the model is told."""
    LOG = "log"
    """Kept and flagged."""
    STOP = "stop"
    """Neither preventable nor to be kept: execution ends."""


def drift_action(finding: DriftFinding, policy: DriftPolicy) -> DriftAction:
    """What ``policy`` (the plan-mode ``drift`` knob) does with ``finding``: a written
    git directory and a host outside the operator's bound are refused under every policy."""
    if finding.kind in _REFUSED_WHATEVER_THE_POLICY:
        return DriftAction.REFUSE
    if policy is DriftPolicy.LOG:
        return DriftAction.LOG
    if not finding.preventable:
        return DriftAction.STOP
    return DriftAction.ASK if policy is DriftPolicy.ASK else DriftAction.REFUSE


_ANSWERED: Mapping[Answer, DriftDecision] = {
    Answer.ALLOWED: DriftDecision.ALLOWED,
    Answer.DENIED: DriftDecision.DENIED,
    Answer.TIMED_OUT: DriftDecision.TIMED_OUT,
    Answer.NOT_SHOWN: DriftDecision.STOPPED,
}


def answered(answer: Answer) -> DriftDecision:
    """How an ask's answer decided a drift, as the execution records it."""
    return _ANSWERED[answer]


@dataclass(frozen=True, slots=True)
class DriftPlace:
    """Where a drift happened: the execution's agent and plan revision, the step (as shown)
    and the call (as the permission card shows it)."""

    agent: str
    plan_id: str
    revision: int
    step: StepNumber
    call: str


def drift_row(
    finding: DriftFinding,
    action: DriftAction,
    decision: DriftDecision | None,
    place: DriftPlace,
    at: datetime,
) -> AuditEntry:
    """The one audit row of a drift: how it was found, what the policy did with it and how
    it was decided."""
    return AuditEntry(
        at=at,
        agent=place.agent,
        actor=Actor.agent(place.agent).label,
        action=AuditAction.DRIFT,
        plan_id=place.plan_id,
        revision=place.revision,
        detail={
            "finding": finding.kind.value,
            "call": place.call,
            "why": finding.why,
            "outcome": action.value,
            "decision": decision.value if decision is not None else None,
            "step": place.step,
        },
    )


NESTED_GIT_REASON = (
    "the call wrote a `.git` inside the workspace; git directories are the host's, so it was undone"
)


def nested_git_paths(paths: tuple[str, ...]) -> tuple[str, ...]:
    """Those of ``paths`` that are a ``.git`` below the workspace's top, or inside one (the
    workspace's own ``.git`` is the repository's state, judged apart)."""
    return tuple(p for p in paths if ".git" in p.split("/")[1:])


def listed_paths(paths: tuple[str, ...], most: int = 3) -> str:
    """``a``, ``b`` and 3 more: paths as a card or the model reads them."""
    shown = ", ".join(f"`{p}`" for p in paths[:most])
    return shown + (f" and {len(paths) - most} more" if len(paths) > most else "")
