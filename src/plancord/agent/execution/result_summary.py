"""What a completion card shows of an execution's result, read from what the host recorded.

Why this exists: the card must say, per step, how it ended (done, skipped, stopped, or rolled
back since), which files it changed with lines added and removed (from the step's commit on
the branch, git's own count), the commands it ran and the drift events with how each was
decided (from the execution's events). This gathers them into ``core.results.ResultSummary``
so the card only renders.
"""

from __future__ import annotations

from plancord.agent.execution.branch import BranchError, ExecutionBranch, StepCommit
from plancord.agent.execution.starter import branch_record
from plancord.core.errors import PlancordError
from plancord.core.execution import (
    ExecutionEvent,
    ExecutionEventKind,
    ExecutionRecord,
    StepOutcome,
)
from plancord.core.plan import Plan
from plancord.core.results import DriftLine, FileLines, ResultSummary, StepResult
from plancord.core.review import PlanReview
from plancord.storage.executions import ExecutionStore

MAX_COMMANDS = 20
MAX_DRIFT = 20


async def summarise(
    record: ExecutionRecord,
    plan: Plan | None,
    executions: ExecutionStore,
    branch: ExecutionBranch,
    *,
    votes: tuple[str, ...] = (),
    needed: int = 1,
    review: PlanReview | None = None,
    push_remote: str | None = None,
) -> ResultSummary:
    commits: list[StepCommit] = []
    try:
        commits = await branch.steps(branch_record(record))
    except (BranchError, PlancordError):
        commits = []  # discarded: the branch is gone
    events = await executions.events(record.plan_id)
    steps = tuple(
        _step(index + 1, outcome, plan, commits, events, record)
        for index, outcome in enumerate(record.steps)
    )
    return ResultSummary(
        record=record,
        summary=plan.summary if plan is not None else record.branch,
        steps=steps,
        votes=votes,
        needed=needed,
        review=review,
        push_remote=push_remote,
        head=commits[-1].commit if commits else None,
    )


def _step(
    number: int,
    outcome: StepOutcome,
    plan: Plan | None,
    commits: list[StepCommit],
    events: list[ExecutionEvent],
    record: ExecutionRecord,
) -> StepResult:
    mine = [c for c in commits if c.step == number]
    lines: dict[str, FileLines] = {}
    for commit in mine:
        for change in commit.files:
            had = lines.get(change.path)
            if had is None:
                lines[change.path] = FileLines(change.path, change.added, change.removed)
            else:
                lines[change.path] = FileLines(
                    change.path, _sum(had.added, change.added), _sum(had.removed, change.removed)
                )
    commands = tuple(
        e.action[:200] for e in events if e.step == number and e.kind is ExecutionEventKind.COMMAND
    )
    drift = tuple(
        DriftLine(_drift_text(e), e.decision, e.kind is ExecutionEventKind.CHECKPOINT)
        for e in events
        if e.step == number and e.kind is not ExecutionEventKind.COMMAND
    )
    title = plan.steps[number - 1].description if plan and number <= len(plan.steps) else ""
    if not title and mine:
        title = mine[0].title
    return StepResult(
        number=number,
        title=title,
        outcome=outcome,
        files=tuple(lines.values()),
        commands=commands[-MAX_COMMANDS:],
        drift=drift[-MAX_DRIFT:],
        committed=bool(mine),
        rolled_back=(
            record.result is not None
            and outcome in (StepOutcome.DONE, StepOutcome.STOPPED)
            and not mine
            and bool(commits or record.waiting)
        ),
    )


def _drift_text(event: ExecutionEvent) -> str:
    if event.kind is ExecutionEventKind.CHECKPOINT:
        return f"checkpoint before {event.action[:120]}"
    paths = ", ".join(event.paths[:5]) + (" …" if len(event.paths) > 5 else "")
    return f"{event.reason or 'drift'}: {paths}" if paths else (event.reason or "drift")


def _sum(a: int | None, b: int | None) -> int | None:
    return None if a is None or b is None else a + b
