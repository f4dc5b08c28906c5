"""The completion card's embed: per step how it ended, the files it changed with lines
added and removed, the commands it ran and the drift events with how each was decided, and
the result review's findings (``plan_mode.review.review_result``) for whoever decides Merge.

Why this exists: the card is the one place a human sees an execution's result before
merging it. It must keep to every Discord embed limit (title 256, description 4096, 25
fields of 1024, 6000 in all, counting every title, field name and footer) however many
steps, files and commands there are. It is measured as Discord counts it
(``embed_basics.embed_size``); what does not fit is shortened or counted ("and 12 more
files"), never silently dropped: the steps in full go in an attached file
(``details``), which the card names, and the whole change is in the attached diff. The
compact form (one line per step) is what a card Discord refused is posted as again.
"""

from __future__ import annotations

from dataclasses import dataclass

import discord

from plancord.core.execution import ResultState
from plancord.core.permissions import spoken_action
from plancord.core.results import (
    FileLines,
    ResultSummary,
    StepResult,
    drift_decided,
    lines_changed,
    step_label,
)
from plancord.discord_bot.result_card.details import details_filename
from plancord.discord_bot.shared.embed_basics import (
    EMBED_TOTAL_LIMIT,
    FIELD_VALUE_LIMIT,
    FIELDS_PER_EMBED,
    clip,
    fit_fields,
    size,
)

TITLE_PREFIX = "Result: "
REVIEW_FIELD = "🔎 Result review"
BEFORE_FIELD = "📥 Already in the workspace before the plan"
BEFORE_NOTE = (
    "Uncommitted or untracked when the plan was approved: the branch starts from them, so "
    "Merge brings them too."
)
UNLISTED_FIELD = "⚠️ In the result, in no step"
UNLISTED_NOTE = "Merge brings these too, though no step listed them."
DESCRIPTION_BUDGET = 1800
"""Characters of the description at most, so the steps always have room."""
STEP_NAME_BUDGET = 100
"""Characters of a step's field name (its title; the whole title is in the file)."""
MIN_STEP_VALUE = 60
MARGIN = 40
"""Characters kept free under Discord's 6000, for what trimming and counting may differ."""
_COMPACT_TITLES = (60, 30, 0)
"""How much of each step's title the compact form tries, longest first."""


@dataclass(frozen=True, slots=True)
class RenderedResult:
    """The card's embed, and whether it shows less than its steps file holds (the file must
    go with it then)."""

    embed: discord.Embed
    shortened: bool


@dataclass(slots=True)
class _Fields:
    fields: list[tuple[str, str]]
    shortened: bool


def render_result(
    summary: ResultSummary, diff_note: str | None, *, compact: bool = False
) -> RenderedResult:
    """The card within every embed limit; ``compact``: the steps one line each."""
    record = summary.record
    color = {
        ResultState.WAITING: discord.Color.gold(),
        ResultState.MERGED: discord.Color.green(),
        ResultState.DISCARDED: discord.Color.dark_grey(),
    }.get(record.result or ResultState.WAITING, discord.Color.gold())
    title = clip(TITLE_PREFIX + summary.summary, 256)
    footer = clip(f"{record.branch} · v{record.revision} · {record.plan_id}", 400)
    lines = _description(summary, diff_note)
    note = f"📎 Every step in full is in the attached `{details_filename(summary)}`."
    description = clip(lines, DESCRIPTION_BUDGET - size(note) - 1)
    fixed: list[tuple[str, str]] = []
    if summary.before_plan:
        fixed.append((BEFORE_FIELD, _files_text(BEFORE_NOTE, summary.before_plan)))
    if summary.unlisted:
        fixed.append((UNLISTED_FIELD, _files_text(UNLISTED_NOTE, summary.unlisted)))
    if summary.review is not None:
        fixed.append((REVIEW_FIELD, summary.review.findings_field(FIELD_VALUE_LIMIT)))
    budget = EMBED_TOTAL_LIMIT - MARGIN - size(title) - size(footer) - size(description)
    budget -= size(note) + 1 + sum(size(n) + size(v) for n, v in fixed)
    steps = None if compact else _full_steps(summary.steps, budget, FIELDS_PER_EMBED - len(fixed))
    if steps is None:
        steps = _compact_steps(summary.steps, budget, FIELDS_PER_EMBED - len(fixed))
    shortened = steps.shortened or description != lines
    if shortened:
        description = f"{description}\n{note}" if description else note
    embed = discord.Embed(title=title, description=description, color=color)
    for name, value in [*fixed, *steps.fields]:
        embed.add_field(name=name, value=value, inline=False)
    embed.set_footer(text=footer)
    return RenderedResult(embed, shortened)


def _full_steps(steps: tuple[StepResult, ...], budget: int, room: int) -> _Fields | None:
    """A field per step (the last ones counted in one field when there are more steps than
    fields), shortened evenly to fit; None when even that does not fit."""
    shown = steps if len(steps) <= room else steps[: room - 1]
    fields: list[tuple[str, str]] = []
    shortened = len(shown) < len(steps)
    for step in shown:
        title = f"{step.number}. {step.title or 'step'}"
        name = clip(title, STEP_NAME_BUDGET)
        text, cut = _step_text(step)
        fields.append((name, text))
        shortened = shortened or cut or name != title
    if len(shown) < len(steps):
        rest = steps[len(shown) :]
        counts: dict[str, int] = {}
        for step in rest:
            label = step_label(step)
            counts[label] = counts.get(label, 0) + 1
        text = ", ".join(f"{n} {label}" for label, n in counts.items())
        fields.append((f"Steps {rest[0].number} to {rest[-1].number}", text + " (see the file)"))
    fitted, cut = fit_fields(fields, budget, MIN_STEP_VALUE)
    if len(fitted) < len(fields):
        return None
    return _Fields(fitted, shortened or cut)


def _compact_steps(steps: tuple[StepResult, ...], budget: int, room: int) -> _Fields:
    """One line per step, in fields of up to 1024 characters; titles shorter until it
    fits, and at worst only how many steps ended how."""
    for width in _COMPACT_TITLES:
        fields = _packed([_step_line(step, width) for step in steps], steps)
        cost = sum(size(n) + size(v) for n, v in fields)
        if len(fields) <= room and cost <= budget:
            return _Fields(fields, True)
    counts: dict[str, int] = {}
    for step in steps:
        counts[step_label(step)] = counts.get(step_label(step), 0) + 1
    text = ", ".join(f"{n} {label}" for label, n in counts.items()) or "no steps"
    return _Fields([(f"{len(steps)} steps", clip(text, max(1, budget - 10)))], True)


def _step_line(step: StepResult, width: int) -> str:
    what = [
        f"{len(items)} {noun}{'s' if len(items) != 1 else ''}"
        for items, noun in ((step.files, "file"), (step.commands, "command"), (step.drift, "event"))
        if items
    ]
    title = f" {clip(step.title or 'step', width)}" if width else ""
    counts = f" ({', '.join(what)})" if what else ""
    return f"**{step.number}.**{title} — {step_label(step)}{counts}"


def _packed(lines: list[str], steps: tuple[StepResult, ...]) -> list[tuple[str, str]]:
    fields: list[tuple[str, str]] = []
    chunk: list[str] = []
    first = 0
    for index, line in enumerate(lines):
        if chunk and size("\n".join([*chunk, line])) > FIELD_VALUE_LIMIT:
            fields.append((_span(steps, first, index - 1), "\n".join(chunk)))
            chunk, first = [], index
        chunk.append(clip(line, FIELD_VALUE_LIMIT))
    if chunk:
        fields.append((_span(steps, first, len(lines) - 1), "\n".join(chunk)))
    return fields


def _span(steps: tuple[StepResult, ...], first: int, last: int) -> str:
    if first == last:
        return f"Step {steps[first].number}"
    return f"Steps {steps[first].number} to {steps[last].number}"


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
        lines.append(f"Execution ended: {clip(record.end_reason, 500)}")
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


def _step_text(step: StepResult) -> tuple[str, bool]:
    """What the step did, its lists cut at a few items each, and whether any was cut."""
    lines = [step_label(step)]
    files = [f"`{f.path}` {lines_changed(f.added, f.removed)}" for f in step.files]
    ignored = [f"`{path}` (ignored by git, in no commit)" for path in step.ignored]
    drift = [
        f"{'🔴' if d.checkpoint else '⚠️'} {clip(d.what, 150)} — {drift_decided(d)}"
        for d in step.drift
    ]
    lists = (
        (files, 8, "file"),
        (ignored, 4, "ignored file"),
        ([f"▸ `{clip(spoken_action(c), 90)}`" for c in step.commands], 5, "command"),
        ([f"🌐 {clip(h.text(), 90)}" for h in step.hosts], 5, "host"),
        (drift, 4, "event"),
    )
    cut = False
    for items, most, noun in lists:
        lines += _listed(items, most, noun)
        cut = cut or len(items) > most
    return "\n".join(lines), cut


def _files_text(note: str, changed: tuple[FileLines, ...]) -> str:
    files = [f"`{clip(f.path, 120)}` {lines_changed(f.added, f.removed)}" for f in changed]
    return clip("\n".join([note, *_listed(files, 8, "file")]), FIELD_VALUE_LIMIT)


def _listed(items: list[str], most: int, noun: str) -> list[str]:
    if len(items) <= most:
        return items
    more = len(items) - most
    return [*items[:most], f"… and {more} more {noun}{'s' if more != 1 else ''}"]
