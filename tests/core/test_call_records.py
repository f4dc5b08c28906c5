"""The completion card's per-step listing of decision records stays bounded: a step keeps
its first calls and counts the rest, and the calls before the steps are listed apart."""

from __future__ import annotations

from datetime import UTC, datetime

from plancord.core.call_records import CallOutcome, CallRecord, calls_by_step
from plancord.core.decider import Decider


def _record(seq: int, step: int | None) -> CallRecord:
    return CallRecord(
        id=f"r{seq}",
        seq=seq,
        agent="ada",
        phase="executing" if step is not None else "gathering",
        tool="view",
        digest="0" * 12,
        decider=Decider.GATE,
        reason=f"call {seq}",
        outcome=CallOutcome.RAN,
        at=datetime(2026, 12, 2, tzinfo=UTC),
        step=step,
    )


def test_a_busy_step_keeps_its_first_calls_and_counts_the_rest() -> None:
    records = [_record(0, None), *(_record(i, 0) for i in range(1, 8)), _record(8, 1)]

    lines = calls_by_step(records, per_step=3)

    assert list(lines) == [None, 0, 1]
    assert len(lines[None]) == 1 and "gathering" in lines[None][0]
    assert [line.split(": ", 1)[1] for line in lines[0][:3]] == ["call 1", "call 2", "call 3"]
    assert lines[0][3] == "… and 4 more (`plancord calls` prints every one)"
    assert len(lines[1]) == 1 and "step 2" in lines[1][0]
