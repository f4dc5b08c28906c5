"""What a completion card shows of an execution's result, read from what the host recorded.

Why this exists: the card must say, per step, how it ended (done, skipped, stopped, or
rolled back since), which files it changed with lines added and removed (from the step's
commit on the branch, git's own count), the commands it ran, the hosts it reached through
the plan's proxy with their request counts, and the drift events with how each was decided
(from the execution's events). Steps and commits are matched by the ids the host recorded
when it committed each step, never by a commit's subject. The card also names the pinned
commit and says when the branch moved past it since, and lists apart the work that was in
the workspace before the plan (on the branch from its first commit, so Merge brings it).
This gathers them into ``core.results.ResultSummary`` so the card only renders.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from plancord.agent.execution.branch_reading import BranchReading, FileChange, StepCommit
from plancord.agent.execution.host_git import BranchError
from plancord.agent.execution.network import NETWORK_TOOL, RECORDED_PER_HOST, reached_action
from plancord.agent.execution.starter import branch_record
from plancord.core.errors import PlancordError
from plancord.core.execution import (
    DriftDecision,
    ExecutionEvent,
    ExecutionEventKind,
    ExecutionRecord,
    StepIndex,
    StepNumber,
    StepOutcome,
    step_index,
    step_number,
)
from plancord.core.plan import Plan
from plancord.core.results import DriftLine, FileLines, HostReached, ResultSummary, StepResult
from plancord.core.review import PlanReview
from plancord.storage.executions import ExecutionStore
from plancord.storage.step_commits import StepCommitId

MAX_COMMANDS = 20
MAX_DRIFT = 20


@dataclass(frozen=True, slots=True)
class _Seen:
    """What the host recorded of the whole execution, read once for every step."""

    commits: list[StepCommit]
    events: list[ExecutionEvent]
    ignored: frozenset[str]
    """The paths the steps wrote that git ignores."""
    rolled_back: frozenset[StepNumber]


async def summarise(
    record: ExecutionRecord,
    plan: Plan | None,
    executions: ExecutionStore,
    branch: BranchReading,
    recorded: list[StepCommitId],
    rolled_back: frozenset[StepNumber],
    *,
    votes: tuple[str, ...] = (),
    needed: int = 1,
    review: PlanReview | None = None,
    push_remote: str | None = None,
) -> ResultSummary:
    commits: list[StepCommit] = []
    before: tuple[FileLines, ...] = ()
    whole: tuple[FileChange, ...] = ()
    moved_to: str | None = None
    try:
        before = tuple(
            FileLines(f.path, f.added, f.removed)
            for f in await branch.before_plan(branch_record(record))
        )
        commits = await branch.steps([(c.step, c.commit) for c in recorded])
        if record.result_commit is not None:
            whole = await branch.changes(record.base_commit, record.result_commit)
        if record.waiting and record.result_commit is not None:
            tip = await branch.tip(branch_record(record))
            moved_to = tip if tip != record.result_commit else None
    except (BranchError, PlancordError):
        commits = []  # discarded: the branch is gone
    events = await executions.events(record.plan_id)
    ignored = await _ignored(branch, events)
    steps = tuple(
        _step(
            step_number(StepIndex(index)),
            outcome,
            plan,
            _Seen(commits, events, ignored, rolled_back),
        )
        for index, outcome in enumerate(record.steps)
    )
    listed = {f.path for f in before} | {
        f.path for step in steps if not step.rolled_back for f in step.files
    }
    return ResultSummary(
        record=record,
        summary=plan.summary if plan is not None else record.branch,
        steps=steps,
        votes=votes,
        needed=needed,
        review=review,
        push_remote=push_remote,
        branch_moved_to=moved_to,
        head=record.result_commit or (commits[-1].commit if commits else None),
        before_plan=before,
        unlisted=tuple(
            FileLines(f.path, f.added, f.removed) for f in whole if f.path not in listed
        ),
    )


def _step(
    number: StepNumber,
    outcome: StepOutcome,
    plan: Plan | None,
    seen: _Seen,
) -> StepResult:
    events = seen.events
    mine = [c for c in seen.commits if c.step == number]
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
    mine_events = [e for e in events if e.step == number]
    commands = tuple(
        e.action[:200]
        for e in mine_events
        if e.kind is ExecutionEventKind.COMMAND and e.tool != NETWORK_TOOL
    )
    reached = Counter(
        e.action.removeprefix(reached_action(""))
        for e in mine_events
        if e.kind is ExecutionEventKind.COMMAND and e.tool == NETWORK_TOOL
    )
    hosts = tuple(
        HostReached(host, count, capped=count >= RECORDED_PER_HOST)
        for host, count in sorted(reached.items())
    )
    drift = tuple(
        DriftLine(
            _drift_text(e),
            e.answer if e.kind is ExecutionEventKind.CHECKPOINT else e.decision,
            connection=e.tool == NETWORK_TOOL,
        )
        for e in mine_events
        if e.kind is not ExecutionEventKind.COMMAND
    )
    index = step_index(number)
    title = plan.steps[index].description if plan and index < len(plan.steps) else ""
    wrote = (p for e in events if e.step == number and _kept(e) for p in e.paths)
    return StepResult(
        number=number,
        title=title,
        outcome=outcome,
        files=tuple(lines.values()),
        commands=commands[-MAX_COMMANDS:],
        drift=drift[-MAX_DRIFT:],
        committed=bool(mine),
        ignored=tuple(p for p in dict.fromkeys(wrote) if p in seen.ignored),
        rolled_back=number in seen.rolled_back and not mine,
        hosts=hosts,
    )


def _kept(event: ExecutionEvent) -> bool:
    """The event's paths stayed as the call left them (a command, or drift kept)."""
    if event.kind is ExecutionEventKind.COMMAND:
        return True
    return event.kind is ExecutionEventKind.DRIFT and event.decision in (
        DriftDecision.ALLOWED,
        DriftDecision.LOGGED,
    )


async def _ignored(branch: BranchReading, events: list[ExecutionEvent]) -> frozenset[str]:
    """The paths the steps wrote that git ignores (none when git cannot say)."""
    written = [p for e in events if _kept(e) for p in e.paths]
    try:
        return frozenset(await branch.ignored(written))
    except (BranchError, PlancordError):
        return frozenset()


def _drift_text(event: ExecutionEvent) -> str:
    if event.kind is ExecutionEventKind.CHECKPOINT:
        return f"checkpoint before {event.action[:120]}"
    paths = ", ".join(event.paths[:5]) + (" …" if len(event.paths) > 5 else "")
    return f"{event.reason or 'drift'}: {paths}" if paths else (event.reason or "drift")


def _sum(a: int | None, b: int | None) -> int | None:
    return None if a is None or b is None else a + b
