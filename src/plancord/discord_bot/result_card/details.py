"""The completion card's steps in full, as the markdown file attached when the card itself
shows less (long step names, many files or commands, more steps than fields, or the compact
form a refused card is posted in) or when the plan's tool calls have decision records:
nothing a card leaves out is lost, and the card says the file is there. Under each step,
its calls: what decided each one and why (``core.call_records``), at most
``CALLS_PER_STEP`` a step; the planning's calls come first."""

from __future__ import annotations

import io
from collections.abc import Sequence

import discord

from plancord.core.call_records import CallRecord, calls_by_step
from plancord.core.permissions import spoken_action
from plancord.core.results import (
    ResultSummary,
    StepResult,
    drift_decided,
    lines_changed,
    step_label,
)


def details_filename(summary: ResultSummary) -> str:
    return f"result-v{summary.record.revision}-steps.md"


def details_file(summary: ResultSummary, calls: Sequence[CallRecord] = ()) -> discord.File:
    text = details_markdown(summary, calls)
    return discord.File(io.BytesIO(text.encode("utf-8")), filename=details_filename(summary))


def details_markdown(summary: ResultSummary, calls: Sequence[CallRecord] = ()) -> str:
    """Every step of the result with all it did and why each of its tool calls ran or did
    not, and the result review's findings."""
    by_step = calls_by_step(calls)
    record = summary.record
    parts = [
        f"# Result: {summary.summary}",
        f"Plan v{record.revision} (`{record.plan_id}`) on `{record.branch}`, onto `{record.base}`.",
    ]
    if summary.review is not None:
        parts.append("## Result review\n" + summary.review.findings_field(1_000_000))
    if summary.before_plan:
        parts.append(
            "## Already in the workspace before the plan\n"
            "Uncommitted or untracked when the plan was approved: the branch starts from "
            "them, so Merge brings them too.\n"
            + "\n".join(
                f"- `{f.path}` {lines_changed(f.added, f.removed)}" for f in summary.before_plan
            )
        )
    if summary.unlisted:
        parts.append(
            "## In the result, in no step\nMerge brings these too, though no step listed them.\n"
            + "\n".join(
                f"- `{f.path}` {lines_changed(f.added, f.removed)}" for f in summary.unlisted
            )
        )
    if None in by_step:
        parts.append("## While planning\n" + _calls(by_step[None]))
    parts += [_step_section(step, by_step.get(step.number - 1, [])) for step in summary.steps]
    return "\n\n".join(parts) + "\n"


def _calls(lines: list[str]) -> str:
    return "Tool calls, what decided each and why:\n" + "\n".join(f"  - {x}" for x in lines)


def _step_section(step: StepResult, calls: list[str]) -> str:
    lines = [f"## {step.number}. {step.title or 'step'}", step_label(step)]
    lines += [f"- `{f.path}` {lines_changed(f.added, f.removed)}" for f in step.files]
    lines += [f"- `{path}` (ignored by git, in no commit)" for path in step.ignored]
    lines += [f"- ran `{spoken_action(command)}`" for command in step.commands]
    lines += [f"- reached {host.text()}" for host in step.hosts]
    lines += [
        f"- {'checkpoint' if d.checkpoint else 'drift'}: {d.what} — {drift_decided(d)}"
        for d in step.drift
    ]
    if calls:
        lines.append(_calls(calls))
    return "\n".join(lines)
