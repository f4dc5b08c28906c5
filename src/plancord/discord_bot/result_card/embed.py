"""The completion card's embed: per step how it ended, the files it changed with lines
added and removed, the commands it ran and the drift events with how each was decided, and
the result review's findings (``plan_mode.review.review_result``) for whoever decides Merge.

Why this exists: the card is the one place a human sees an execution's result before
merging it. It must keep to every Discord embed limit (title 256, description 4096, 25
fields of 1024, 6000 in all) however many steps, files and commands there are; what does
not fit is counted ("and 12 more files"), never silently dropped, and the whole change is
in the attached diff.
"""

from __future__ import annotations

import discord

from plancord.core.execution import ResultState
from plancord.core.results import (
    ResultSummary,
    StepResult,
    drift_decided,
    lines_changed,
    step_label,
)
from plancord.discord_bot.shared.embed_basics import clip as _clip
from plancord.discord_bot.shared.embed_basics import size

MAX_FIELDS = 25
TOTAL_BUDGET = 5800
FIELD_LIMIT = 1024
TITLE_PREFIX = "Result: "
REVIEW_FIELD = "🔎 Result review"


def render_result(summary: ResultSummary, diff_note: str | None) -> discord.Embed:
    record = summary.record
    color = {
        ResultState.WAITING: discord.Color.gold(),
        ResultState.MERGED: discord.Color.green(),
        ResultState.DISCARDED: discord.Color.dark_grey(),
    }.get(record.result or ResultState.WAITING, discord.Color.gold())
    embed = discord.Embed(
        title=_clip(TITLE_PREFIX + summary.summary, 256),
        description=_clip(_description(summary, diff_note), 4096),
        color=color,
    )
    if summary.review is not None:
        findings = summary.review.findings_field(FIELD_LIMIT)
        embed.add_field(name=REVIEW_FIELD, value=findings, inline=False)
    steps = list(summary.steps)
    fields_left = MAX_FIELDS - len(embed.fields)
    shown = steps if len(steps) <= fields_left else steps[: fields_left - 1]
    used = size(embed.title or "") + size(embed.description or "") + 100
    used += sum(size(field.value or "") + size(field.name or "") for field in embed.fields)
    room = max(60, min(FIELD_LIMIT, (TOTAL_BUDGET - used) // max(1, len(shown) + 1)))
    for step in shown:
        name = _clip(f"{step.number}. {step.title or 'step'}", 200)
        embed.add_field(name=name, value=_clip(_step_text(step), room), inline=False)
    if len(steps) > len(shown):
        rest = steps[len(shown) :]
        counts: dict[str, int] = {}
        for step in rest:
            label = step_label(step)
            counts[label] = counts.get(label, 0) + 1
        text = ", ".join(f"{n} {label}" for label, n in counts.items())
        embed.add_field(
            name=f"Steps {rest[0].number} to {rest[-1].number}",
            value=_clip(text + " (see the diff)", room),
            inline=False,
        )
    embed.set_footer(text=_clip(f"{record.branch} · v{record.revision} · {record.plan_id}", 2048))
    return embed


def _description(summary: ResultSummary, diff_note: str | None) -> str:
    record = summary.record
    lines: list[str] = []
    pinned = (record.result_commit or "")[:12]
    if record.result is ResultState.WAITING:
        lines.append(
            f"**Waiting for a decision**: Merge puts the result `{pinned}` of `{record.branch}` "
            f"onto `{record.base}`; Discard puts `{record.base}` and the workspace back at the "
            "reviewed state."
        )
        if summary.branch_moved_to is not None:
            lines.append(
                f"⚠️ `{record.branch}` moved since this result (now at "
                f"`{summary.branch_moved_to[:12]}`): the later commits are not part of it. "
                f"Merge and Push take the result shown, `{pinned}`."
            )
    elif record.result is ResultState.MERGED:
        lines.append(f"**Merged** by {record.decided_by_name}: {record.outcome}.")
    elif record.result is ResultState.DISCARDED:
        lines.append(f"**Discarded** by {record.decided_by_name}: {record.outcome}.")
    if record.end_reason:
        lines.append(f"Execution ended: {_clip(record.end_reason, 500)}")
    if record.requested_by_name:
        lines.append(f"Requested by {record.requested_by_name}.")
    if summary.needed > 1 and record.result is ResultState.WAITING:
        names = ", ".join(summary.votes) or "none yet"
        lines.append(f"**Merge votes {len(summary.votes)} of {summary.needed}**: {names}")
    if summary.review is not None:
        lines.append("Result r" + summary.review.summary_line()[1:])
    if summary.push_remote is not None and record.result is ResultState.WAITING:
        lines.append(f"Push sends the branch to `{summary.push_remote}`.")
    if diff_note:
        lines.append(diff_note)
    return "\n".join(lines)


def _step_text(step: StepResult) -> str:
    lines = [step_label(step)]
    files = [f"`{f.path}` {lines_changed(f.added, f.removed)}" for f in step.files]
    lines += _listed(files, 8, "file")
    ignored = [f"`{path}` (ignored by git, in no commit)" for path in step.ignored]
    lines += _listed(ignored, 4, "ignored file")
    lines += _listed([f"▸ `{_clip(c, 90)}`" for c in step.commands], 5, "command")
    lines += _listed([f"🌐 {_clip(h.text(), 90)}" for h in step.hosts], 5, "host")
    drift = [
        f"{'🔴' if d.checkpoint else '⚠️'} {_clip(d.what, 150)} — {drift_decided(d)}"
        for d in step.drift
    ]
    lines += _listed(drift, 4, "event")
    return "\n".join(lines)


def _listed(items: list[str], most: int, noun: str) -> list[str]:
    if len(items) <= most:
        return items
    more = len(items) - most
    return [*items[:most], f"… and {more} more {noun}{'s' if more != 1 else ''}"]
