"""The completion card as the operator's text: every step, file, command and drift event,
however many (the shell has no Discord limits), with the decisions named as on the card."""

from __future__ import annotations

from datetime import UTC, datetime

from plancord.command.operator_results import result_text
from plancord.core.authority import Answer
from plancord.core.execution import DriftDecision, ExecutionRecord, ResultState, StepOutcome
from plancord.core.results import DriftLine, FileLines, ResultSummary, StepResult
from plancord.core.review import Finding, PlanReview, Severity

AT = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


def record(**changes: object) -> ExecutionRecord:
    fields: dict[str, object] = {
        "agent": "ada",
        "plan_id": "abc123",
        "revision": 2,
        "branch": "plancord/abc123-v2",
        "base": "main",
        "base_commit": "1" * 40,
        "reviewed_commit": "2" * 40,
        "reviewed_index": "3" * 40,
        "steps": (StepOutcome.DONE, StepOutcome.STOPPED),
        "started_at": AT,
        "ended_at": AT,
        "end_reason": "a human stopped it",
        "result": ResultState.WAITING,
        "result_version": 3,
        "requested_by_name": "ana",
    }
    return ExecutionRecord.model_validate({**fields, **changes})


def summary(found: ExecutionRecord) -> ResultSummary:
    files = tuple(FileLines(f"src/f{n}.py", n, 1) for n in range(12))
    return ResultSummary(
        record=found,
        summary="Add /health",
        steps=(
            StepResult(
                1,
                "Write it",
                StepOutcome.DONE,
                files=(*files, FileLines("logo.png", None, None)),
                commands=("tool:bash_execute:make test", "tool:create_file:src/health.py"),
                drift=(
                    DriftLine("outside the plan: evil.py", DriftDecision.DENIED),
                    DriftLine("checkpoint before Deploy", Answer.ALLOWED),
                ),
                committed=True,
                ignored=("build/out.bin",),
            ),
            StepResult(2, "Document it", StepOutcome.STOPPED, rolled_back=True),
        ),
        votes=("boss",),
        needed=2,
        review=PlanReview(
            model="claude-test",
            findings=(Finding(severity=Severity.CONCERN, step=1, text="No test for /health."),),
        ),
        push_remote="origin",
        head="4" * 40,
        branch_moved_to="5" * 40,
    )


def test_a_waiting_result_shows_everything_and_how_to_decide() -> None:
    lines = result_text(summary(record())).splitlines()

    assert lines[:3] == [
        "result of agent ada: Add /health",
        "plan v2 · abc123 · branch plancord/abc123-v2 onto main",
        "state: waiting for a decision",
    ]
    for expected in (
        f"commit: {'4' * 40}",
        f"the branch moved since (now at {'5' * 40}): the later commits are not part of the "
        "result; merge and push take the commit above",
        "   build/out.bin (ignored by git, in no commit)",
        "execution ended: a human stopped it",
        "requested by: ana",
        "merge votes: 1 of 2 (boss)",
        "result review: 1 concern",
        "push remote: origin",
        "1. Write it: ✅ done",
        "   src/f11.py +11 −1",
        "   logo.png (binary)",
        "   $ make test",
        "   create_file src/health.py",
        "   drift: outside the plan: evil.py (denied, restored)",
        "   checkpoint: checkpoint before Deploy (Continue)",
        "2. Document it: ↩️ rolled back",
        "merge:   plancord plan merge --agent ada",
    ):
        assert expected in lines, expected
    assert sum(line.startswith("   src/") for line in lines) == 12  # none cut
    assert not any("tool:" in line for line in lines)  # a call, not an action string


def test_a_decided_result_names_who_and_offers_no_decision() -> None:
    decided = record(
        result=ResultState.MERGED,
        decided_by_name="operator",
        outcome="merged into `main` as a fast-forward (44444444)",
    )
    text = result_text(summary(decided))

    assert "state: merged" in text.splitlines()
    assert "decided by operator: merged into main as a fast-forward (44444444)" in text
    assert "merge votes" not in text and "push remote" not in text
    assert "plancord plan merge" not in text
