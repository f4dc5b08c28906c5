"""The completion card's steps in full, as the markdown file attached when the card itself
shows less (long step names, many files or commands, more steps than fields, or the compact
form a refused card is posted in): nothing a card leaves out is lost, and the card says the
file is there."""

from __future__ import annotations

import io

import discord

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


def details_file(summary: ResultSummary) -> discord.File:
    text = details_markdown(summary)
    return discord.File(io.BytesIO(text.encode("utf-8")), filename=details_filename(summary))


def details_markdown(summary: ResultSummary) -> str:
    """Every step of the result with all it did, and the result review's findings."""
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
    parts += [_step_section(step) for step in summary.steps]
    return "\n\n".join(parts) + "\n"


def _step_section(step: StepResult) -> str:
    lines = [f"## {step.number}. {step.title or 'step'}", step_label(step)]
    lines += [f"- `{f.path}` {lines_changed(f.added, f.removed)}" for f in step.files]
    lines += [f"- `{path}` (ignored by git, in no commit)" for path in step.ignored]
    lines += [f"- ran `{spoken_action(command)}`" for command in step.commands]
    lines += [f"- reached {host.text()}" for host in step.hosts]
    lines += [
        f"- {'checkpoint' if d.checkpoint else 'drift'}: {d.what} — {drift_decided(d)}"
        for d in step.drift
    ]
    return "\n".join(lines)
