"""The host holds observed changes to the current step: within, moves on, or drift."""

from __future__ import annotations

import pytest

from plancord.core.holding import (
    Holding,
    MovesOn,
    StepDrift,
    WithinStep,
    entering_checkpoint,
    hold_to_step,
)
from plancord.core.plan import Plan

PLAN = Plan.model_validate(
    {
        "summary": "Add a health endpoint",
        "steps": [
            {"description": "Read", "tools": ["view"]},
            {
                "description": "Route",
                "tools": ["str_replace", "bash_execute"],
                "files": ["app/*.py"],
            },
            {"description": "Docs", "tools": ["create_file"], "files": ["docs/"]},
            {
                "description": "Migrate",
                "tools": ["bash_execute"],
                "files": ["db/**"],
                "risk": "high",
            },
            {"description": "Anything", "tools": ["git_commit"]},
        ],
    }
)


@pytest.mark.parametrize(
    ("current", "tool", "changed", "expected"),
    [
        (1, "str_replace", ["app/routes.py"], WithinStep(1)),
        (1, "bash_execute", [], WithinStep(1)),
        (1, "bash_execute", None, WithinStep(1)),
        (1, "bash_execute", ["./app/x.py"], WithinStep(1)),
        (0, "str_replace", ["app/routes.py"], MovesOn(1, (), False)),
        (0, "create_file", ["docs/health.md"], MovesOn(2, (1,), False)),
        (1, "bash_execute", ["db/0001.sql"], MovesOn(3, (2,), True)),
        (1, "bash_execute", ["app/x.py", "db/0001.sql"], None),
        (1, "bash_execute", ["app/sub/x.py"], None),
        (2, "str_replace", ["app/routes.py"], None),
        (1, "git_commit", ["anything.txt"], MovesOn(4, (2, 3), False)),
        (4, "git_commit", ["anything.txt"], WithinStep(4)),
        (4, "bash_execute", [], None),
    ],
)
def test_hold_to_step(
    current: int, tool: str, changed: list[str] | None, expected: Holding | None
) -> None:
    holding = hold_to_step(PLAN, current, tool, changed)
    if expected is None:
        assert isinstance(holding, StepDrift)
        assert holding.step == current
    else:
        assert holding == expected


def test_drift_names_the_paths_outside_the_step() -> None:
    holding = hold_to_step(PLAN, 1, "bash_execute", ["app/ok.py", "secrets.env", "db/x.sql"])
    assert isinstance(holding, StepDrift)
    assert holding.outside == ("secrets.env", "db/x.sql")
    assert "`secrets.env`" in holding.reason


def test_a_tool_of_a_passed_step_is_drift_that_says_so() -> None:
    holding = hold_to_step(PLAN, 2, "str_replace", ["app/routes.py"])
    assert isinstance(holding, StepDrift)
    assert "step 2" in holding.reason and "moved past" in holding.reason


def test_a_plan_without_tools_limits_only_files() -> None:
    plan = Plan.model_validate(
        {"summary": "s", "steps": [{"description": "a", "files": ["a.txt"]}, {"description": "b"}]}
    )
    assert hold_to_step(plan, 0, "bash_execute", ["a.txt"]) == WithinStep(0)
    assert hold_to_step(plan, 0, "bash_execute", ["b.txt"]) == MovesOn(1, (), False)
    assert hold_to_step(plan, 1, "bash_execute", ["a.txt"]) == WithinStep(1)


def test_the_current_step_must_exist() -> None:
    with pytest.raises(ValueError, match="step 5"):
        hold_to_step(PLAN, 5, "view", [])


def test_a_high_risk_first_step_needs_its_checkpoint() -> None:
    assert entering_checkpoint(PLAN, 3)
    assert not entering_checkpoint(PLAN, 0)
