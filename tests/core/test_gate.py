"""The gate decides per call from the phase the host holds; refusals are structured."""

from __future__ import annotations

import itertools
import json
from datetime import UTC, datetime

import pytest

from plancord.core.gate import GateOutcome, GateRequest, ToolKind, decide
from plancord.core.permissions import PermissionProfile, Preset, action_string
from plancord.core.planning import Phase

ENTERED = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
OPEN = PermissionProfile(preset=Preset.OPEN)


def request(kind: ToolKind, phase: Phase, name: str = "tool", **extra: object) -> GateRequest:
    return GateRequest(
        tool_name=name,
        tool_kind=kind,
        action=action_string(name, "detail"),
        phase=phase,
        entered_at=ENTERED,
        entered_reason="multi-file change",
        **extra,  # type: ignore[arg-type]
    )


@pytest.mark.parametrize(
    ("phase", "kind"), list(itertools.product([Phase.GATHERING, Phase.SUBMITTED], ToolKind))
)
def test_planning_phases_refuse_only_mutations(phase: Phase, kind: ToolKind) -> None:
    decision = decide(request(kind, phase, "create_file"), OPEN)
    if kind is ToolKind.MUTATING:
        assert decision.outcome is GateOutcome.REFUSE
        assert decision.refusal is not None
        body = json.loads(decision.refusal.to_text())
        assert body == {
            "error": "plan_mode_refusal",
            "tool_name": "create_file",
            "tool_kind": "mutating",
            "hint": decision.refusal.hint,
            "entered_at": ENTERED.isoformat(),
            "entered_reason": "multi-file change",
        }
        assert "submit_plan" in body["hint"]
    else:
        assert decision.outcome is GateOutcome.ALLOW
        assert not decision.sandbox


def test_classifier_allowed_shell_runs_sandboxed_while_planning() -> None:
    decision = decide(
        request(
            ToolKind.MUTATING,
            Phase.GATHERING,
            "bash_execute",
            shell_verdict_allowed=True,
            shell_verdict_reason="read-only",
        ),
        OPEN,
    )
    assert decision.outcome is GateOutcome.ALLOW
    assert decision.sandbox is True


def test_classifier_denied_shell_is_refused_with_the_reason() -> None:
    decision = decide(
        request(
            ToolKind.MUTATING,
            Phase.SUBMITTED,
            "bash_execute",
            shell_verdict_allowed=False,
            shell_verdict_reason="`sed -i` edits files in place",
        ),
        OPEN,
    )
    assert decision.outcome is GateOutcome.REFUSE
    assert decision.refusal is not None
    assert "`sed -i` edits files in place" in decision.refusal.hint


@pytest.mark.parametrize("phase", [Phase.INACTIVE, Phase.EXECUTING])
def test_outside_planning_the_profile_decides(phase: Phase) -> None:
    standard = PermissionProfile()
    locked = PermissionProfile(preset=Preset.LOCKED)
    edit = request(ToolKind.MUTATING, phase, "create_file", workspace_edit=True)
    assert decide(edit, standard).allowed
    assert (
        decide(request(ToolKind.MUTATING, phase, "git_push"), standard).outcome is GateOutcome.ASK
    )
    refused = decide(edit, locked)
    assert refused.outcome is GateOutcome.REFUSE
    assert refused.refusal is None
    assert decide(request(ToolKind.READ_ONLY, phase, "view"), locked).allowed
    assert decide(request(ToolKind.PLANNING, phase, "submit_plan"), locked).allowed
    assert not decide(request(ToolKind.MUTATING, phase, "bash_execute"), OPEN).sandbox


def test_confirm_each_edit_asks_even_when_the_profile_allows() -> None:
    ask = decide(
        request(ToolKind.MUTATING, Phase.EXECUTING, "create_file", confirm_each_edit=True), OPEN
    )
    assert ask.outcome is GateOutcome.ASK
    read = decide(
        request(ToolKind.READ_ONLY, Phase.EXECUTING, "view", confirm_each_edit=True), OPEN
    )
    assert read.allowed
    shell = decide(
        request(
            ToolKind.MUTATING,
            Phase.EXECUTING,
            "bash_execute",
            confirm_each_edit=True,
            shell_verdict_allowed=True,
        ),
        OPEN,
    )
    assert shell.allowed


def test_a_profile_deny_beats_confirm_each_edit() -> None:
    profile = PermissionProfile(preset=Preset.OPEN, deny=(r"tool:git_push:.*",))
    decision = decide(
        request(ToolKind.MUTATING, Phase.EXECUTING, "git_push", confirm_each_edit=True), profile
    )
    assert decision.outcome is GateOutcome.REFUSE
