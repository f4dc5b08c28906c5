"""The gate: the one host-side check every tool call passes before it runs.

The model never holds the mode bit. For each call the runtime loads the agent's phase from the
store and asks ``decide``. While planning (``gathering``/``submitted``) only read-only,
planning and interactive tools run; a mutating call is refused with a ``PlanModeRefusal`` the
model can read, except a shell command the read-only classifier allowed, which runs inside the
kernel sandbox. While ``executing`` or ``inactive`` the permission profile decides (allow, ask
a human, deny); an approval "confirm each edit" makes every mutating call ask.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from plancord.core.call_rules import CallRule, RuleTier
from plancord.core.decider import Decider
from plancord.core.drift import DriftPolicy
from plancord.core.drift_findings import DriftAction, DriftFinding, drift_action
from plancord.core.kinds import Permission, ToolKind
from plancord.core.permissions import PermissionProfile
from plancord.core.planning import Phase

__all__ = [
    "GateDecision",
    "GateOutcome",
    "GateRequest",
    "Permission",
    "PermissionProfile",
    "PlanModeRefusal",
    "ToolKind",
    "decide",
]


class GateOutcome(StrEnum):
    ALLOW = "allow"
    REFUSE = "refuse"
    ASK = "ask"


@dataclass(frozen=True, slots=True)
class PlanModeRefusal:
    """What a refused call returns to the model, as an ``is_error`` tool result."""

    tool_name: str
    tool_kind: ToolKind
    hint: str
    entered_at: datetime | None
    entered_reason: str | None

    def to_text(self) -> str:
        body = {
            "error": "plan_mode_refusal",
            "tool_name": self.tool_name,
            "tool_kind": self.tool_kind.value,
            "hint": self.hint,
            "entered_at": self.entered_at.isoformat() if self.entered_at else None,
            "entered_reason": self.entered_reason,
        }
        return json.dumps(body, ensure_ascii=False)


@dataclass(frozen=True, slots=True)
class GateDecision:
    outcome: GateOutcome
    reason: str
    sandbox: bool = False
    refusal: PlanModeRefusal | None = None
    drift: DriftFinding | None = None
    """Set when the call is outside the approved plan (whatever the outcome), to be audited."""
    drift_action: DriftAction | None = None
    """What the drift policy did with ``drift`` (``core.drift_findings.drift_action``)."""
    decider: Decider = Decider.PROFILE
    """What decided the outcome, for the call's decision record."""
    rule: CallRule | None = None
    """The remembered rule that decided (or, when a human is asked, would have been
    overridden by nothing: the card says which rule applies)."""

    @property
    def allowed(self) -> bool:
        return self.outcome is GateOutcome.ALLOW


@dataclass(frozen=True, slots=True)
class GateRequest:
    """One tool call as the gate sees it."""

    tool_name: str
    tool_kind: ToolKind
    action: str
    phase: Phase
    entered_at: datetime | None = None
    entered_reason: str | None = None
    shell_verdict_allowed: bool | None = None
    shell_verdict_reason: str | None = None
    confirm_each_edit: bool = False
    workspace_edit: bool = False
    """The tool declares that it only edits workspace files, and this call writes none
    another tool guards (``PermissionProfile.evaluate``)."""
    drift: DriftFinding | None = None
    """While executing: the call is outside the approved plan, known before it runs."""
    drift_policy: DriftPolicy = DriftPolicy.ASK
    rule: CallRule | None = None
    """The remembered rule (``core.call_rules.applicable``) for this call, operator's or a
    member's; never asked while planning."""


PLAN_HINT = (
    "You are in plan mode: explore with read-only tools, then call submit_plan with your plan. "
    "Changes become possible once a human approves the plan."
)


def decide(request: GateRequest, profile: PermissionProfile) -> GateDecision:
    """Allow, refuse or ask for one tool call. Pure: no I/O, no clock.

    Outside plan mode the permission comes from, in order: an operator rule; the profile's
    deny; a member's rule; the profile. A rule's allow never passes the drift policy or
    "confirm each edit": those still ask or refuse."""
    if request.phase.is_planning:
        return _decide_planning(request)
    if request.tool_kind in (ToolKind.PLANNING, ToolKind.INTERACTIVE):
        return GateDecision(
            GateOutcome.ALLOW, f"{request.tool_kind.value} tools always run", decider=Decider.GATE
        )
    read_only_shell = request.shell_verdict_allowed is True
    by_profile = profile.evaluate(
        request.action,
        request.tool_kind,
        read_only_shell=read_only_shell,
        workspace_edit=request.workspace_edit,
    )
    rule = request.rule
    if rule is not None and (rule.tier is RuleTier.OPERATOR or by_profile is not Permission.DENY):
        permission, decider, why = rule.decision, Decider.RULE, rule.label()
    else:
        rule = None
        decider = (
            Decider.FILTER
            if read_only_shell and by_profile is Permission.ALLOW
            else (Decider.PROFILE)
        )
        permission, why = by_profile, "the agent's permission profile"
    if permission is Permission.DENY:
        return GateDecision(
            GateOutcome.REFUSE, f"{why} denies {request.action}", decider=decider, rule=rule
        )
    is_mutation = request.tool_kind is ToolKind.MUTATING and not read_only_shell
    drift = request.drift if is_mutation and request.phase is Phase.EXECUTING else None
    action = drift_action(drift, request.drift_policy) if drift is not None else None
    if drift is not None:
        outside = f"not in the approved plan: {request.action} ({drift.reason})"
        if action in (DriftAction.REFUSE, DriftAction.STOP):
            return GateDecision(
                GateOutcome.REFUSE,
                f"{outside}. Keep to the approved plan's steps; if the plan must change, say "
                "so and finish with complete_plan so a human can plan the rest",
                drift=drift,
                drift_action=action,
                decider=Decider.DRIFT,
            )
        if action is DriftAction.ASK:
            return GateDecision(
                GateOutcome.ASK, outside, drift=drift, drift_action=action, decider=Decider.DRIFT
            )
    if permission is Permission.ASK or (request.confirm_each_edit and is_mutation):
        by_rule = f" ({why} asks)" if rule is not None and permission is Permission.ASK else ""
        return GateDecision(
            GateOutcome.ASK,
            f"{request.action} needs a human's permission{by_rule}",
            drift=drift,
            drift_action=action,
            decider=decider if permission is Permission.ASK else Decider.GATE,
            rule=rule,
        )
    allowed = f"allowed by {why}" if rule is not None else "allowed by the permission profile"
    return GateDecision(
        GateOutcome.ALLOW,
        allowed,
        drift=drift,
        drift_action=action,
        decider=decider,
        rule=rule,
    )


def _decide_planning(request: GateRequest) -> GateDecision:
    if request.tool_kind is not ToolKind.MUTATING:
        return GateDecision(
            GateOutcome.ALLOW,
            f"{request.tool_kind.value} tools run in plan mode",
            decider=Decider.GATE,
        )
    if request.shell_verdict_allowed is True:
        return GateDecision(
            GateOutcome.ALLOW,
            request.shell_verdict_reason or "read-only command",
            sandbox=True,
            decider=Decider.FILTER,
        )
    if request.shell_verdict_allowed is False:
        hint = (
            f"Plan mode allows only read-only shell commands, and this one is not: "
            f"{request.shell_verdict_reason}. {PLAN_HINT}"
        )
    else:
        hint = (
            f"{request.tool_name} changes things and is not available while planning. {PLAN_HINT}"
        )
    refusal = PlanModeRefusal(
        tool_name=request.tool_name,
        tool_kind=request.tool_kind,
        hint=hint,
        entered_at=request.entered_at,
        entered_reason=request.entered_reason,
    )
    decider = Decider.GATE if request.shell_verdict_allowed is None else Decider.FILTER
    return GateDecision(GateOutcome.REFUSE, hint, refusal=refusal, decider=decider)
