"""A step's index (from 0, what the host's records keep) and its number (from 1, what people
see) are distinct types: the type checker refuses one where the other is meant, in a call
and in a model's fields, so no hand-written ``+ 1`` can slip between them."""

from __future__ import annotations

from pathlib import Path

from mypy import api

ROOT = Path(__file__).resolve().parents[2]

MIXED = """
from datetime import UTC, datetime

from plancord.core.execution import (
    ExecutionEvent,
    ExecutionEventKind,
    ExecutionRecord,
    StepIndex,
    StepNumber,
    step_index,
    step_number,
)


def mixed(record: ExecutionRecord, number: StepNumber) -> None:
    ExecutionEvent(
        plan_id="p1",
        at=datetime.now(UTC),
        step=record.current_step,  # mixed
        kind=ExecutionEventKind.DRIFT,
        tool="t",
        action="a",
    )
    step_number(number)  # mixed
    step_index(record.current_step)  # mixed
    moved: StepIndex = number  # mixed


def converted(record: ExecutionRecord, number: StepNumber) -> None:
    ExecutionEvent(
        plan_id="p1",
        at=datetime.now(UTC),
        step=step_number(record.current_step),
        kind=ExecutionEventKind.DRIFT,
        tool="t",
        action="a",
    )
    moved: StepIndex = step_index(number)
"""


def test_mixing_a_step_index_and_a_step_number_is_a_type_error(tmp_path: Path) -> None:
    source = tmp_path / "mixed.py"
    source.write_text(MIXED)
    out, _, status = api.run(
        [
            "--config-file",
            str(ROOT / "pyproject.toml"),
            "--cache-dir",
            str(tmp_path / "cache"),
            str(source),
        ]
    )
    errors = [line for line in out.splitlines() if ": error:" in line]
    assert status == 1
    mixed = [n for n, line in enumerate(MIXED.splitlines(), 1) if line.endswith("# mixed")]
    assert sorted(int(line.split(":")[1]) for line in errors) == mixed, out
    assert all("StepIndex" in line and "StepNumber" in line for line in errors), out
