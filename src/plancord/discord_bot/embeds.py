"""Plan mode as Discord shows it: the plan message, the execution progress message, the
``/plan status`` card and the short channel lines that announce changes.

Pure functions from core models to ``discord.Embed`` and text, so every Discord limit can be
checked without a bot. A plan can be far larger than an embed; whatever is shortened or left
out is said in the embed, and the revision's canonical markdown (the text its sha256 covers)
goes along as ``plan-v<rev>.md``. Lengths are measured in UTF-16 code units, which is never
less than the code-point count Discord may be counting, so an emoji-heavy plan stays inside
the limits either way.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

import discord

from plancord.core.plan import Risk
from plancord.core.plan_diff import PlanDiff
from plancord.core.planning import (
    ApprovalMode,
    Phase,
    PlanRevision,
    StepProgress,
    StepStatus,
)
from plancord.core.service import PlanningStatus

TITLE_LIMIT = 256
DESCRIPTION_LIMIT = 4096
FIELDS_PER_EMBED = 25
FIELD_NAME_LIMIT = 256
FIELD_VALUE_LIMIT = 1024
FOOTER_LIMIT = 2048
EMBED_TOTAL_LIMIT = 6000
EMBEDS_PER_MESSAGE = 10
CONTENT_LIMIT = 2000

RISK_MARK = {Risk.LOW: "🟢", Risk.MEDIUM: "🟡", Risk.HIGH: "🔴"}
STEP_MARK = {
    StepStatus.DONE: "✅",
    StepStatus.IN_PROGRESS: "⏳",
    StepStatus.PENDING: "⬜",
    StepStatus.SKIPPED: "⏭",
}
MODE_WORDS = {
    ApprovalMode.NORMAL: "normal",
    ApprovalMode.FRESH_CONTEXT: "fresh context",
    ApprovalMode.CONFIRM_EACH_EDIT: "confirm each edit",
}

PENDING_COLOUR = discord.Colour.blurple()
APPROVED_COLOUR = discord.Colour.green()
CHANGES_COLOUR = discord.Colour.orange()
REJECTED_COLOUR = discord.Colour.red()
CLOSED_COLOUR = discord.Colour.dark_grey()

_STATUS_LINE_LIMIT = 600
CHANGES_LIMIT = 1200
"""Characters of a revision's plan message given to what changed since the last revision."""
_NOTE_LIMIT = 300
_FOOTER_BUDGET = 400
_OVERFLOW_NOTE_LIMIT = 300
_NOTES_ROOMY = 1500
_NOTES_TIGHT = 700
_QUESTIONS_ROOMY = FIELD_VALUE_LIMIT
_QUESTIONS_TIGHT = 600
_MIN_STEP_VALUE = 24


def size(text: str) -> int:
    """Length in UTF-16 code units (an astral emoji counts 2)."""
    return len(text.encode("utf-16-le")) // 2


def clip(text: str, limit: int) -> str:
    """``text`` if it fits in ``limit`` units, else a prefix ending in "…" that does."""
    if size(text) <= limit:
        return text
    if limit <= 0:
        return ""
    out: list[str] = []
    used = 0
    for char in text:
        width = 2 if ord(char) > 0xFFFF else 1
        if used + width > limit - 1:
            break
        out.append(char)
        used += width
    return "".join(out).rstrip() + "…"


def embed_size(embed: discord.Embed) -> int:
    """What Discord counts against the 6000 total: title, description, fields, footer, author."""
    total = size(embed.title or "") + size(embed.description or "")
    for item in embed.fields:
        total += size(item.name or "") + size(item.value or "")
    total += size(embed.footer.text or "") + size(embed.author.name or "")
    return total


def when(at: datetime) -> str:
    """A moment as Discord shows it to each reader: relative, in their own time zone."""
    return discord.utils.format_dt(at, "R")


def utc(at: datetime) -> str:
    return at.strftime("%Y-%m-%d %H:%M UTC")


def jump_url(guild_id: int | None, channel_id: int, message_id: int) -> str:
    return f"https://discord.com/channels/{guild_id or '@me'}/{channel_id}/{message_id}"


# -- the plan message --------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Outcome:
    """How a revision's wait ended: ``action`` is an audit action (approved, rejected…)."""

    action: str
    by: str | None
    at: datetime
    note: str | None = None


@dataclass(frozen=True, slots=True)
class Supersession:
    revision: int
    url: str | None = None


@dataclass(frozen=True, slots=True)
class RenderedPlan:
    embeds: list[discord.Embed]
    overflow: bool
    filename: str
    markdown: str
    notices: tuple[str, ...] = field(default=())
    changes: PlanDiff | None = None

    def file(self) -> discord.File:
        """The canonical markdown as an attachment (a fresh one each time: Files are one-shot)."""
        return discord.File(io.BytesIO(self.markdown.encode("utf-8")), filename=self.filename)

    def changes_file(self) -> discord.File | None:
        """The full diff from the previous revision, when there is one."""
        if self.changes is None or self.changes.empty:
            return None
        name = f"changes-v{self.changes.from_revision}-v{self.changes.to_revision}.md"
        return discord.File(io.BytesIO(self.changes.to_markdown().encode("utf-8")), filename=name)


_OUTCOME_LINE = {
    "approved": ("✅", "Approved"),
    "changes-requested": ("✏️", "Changes requested"),
    "rejected": ("❌", "Rejected"),
    "cancelled": ("🚫", "Cancelled"),
    "timed-out": ("⌛", "Timed out — planning cancelled"),
}
_OUTCOME_COLOUR = {
    "approved": APPROVED_COLOUR,
    "changes-requested": CHANGES_COLOUR,
    "rejected": REJECTED_COLOUR,
    "cancelled": CLOSED_COLOUR,
    "timed-out": CLOSED_COLOUR,
}


def _outcome_line(outcome: Outcome) -> str:
    mark, words = _OUTCOME_LINE.get(outcome.action, ("•", outcome.action))
    line = f"{mark} **{words}**"
    if outcome.by:
        line += f" by {outcome.by}"
    line += f" {when(outcome.at)}"
    if outcome.note:
        line += f": {clip(outcome.note, _NOTE_LIMIT)}"
    return line


def _outcome_footer(outcome: Outcome) -> str:
    words = _OUTCOME_LINE.get(outcome.action, ("", outcome.action))[1].lower()
    who = f" by {outcome.by}" if outcome.by else ""
    return f"{words}{who} · {utc(outcome.at)}"


def _supersession_line(superseded: Supersession) -> str:
    target = f"v{superseded.revision}"
    if superseded.url:
        target = f"[{target}]({superseded.url})"
    return f"⏭ **Superseded by {target}**"


def _step_field(
    number: int, step_risk: Risk, description: str, tools: Sequence[str]
) -> tuple[str, str]:
    name = f"{RISK_MARK[step_risk]} Step {number} · {step_risk.value} risk"
    value = description
    if tools:
        value += "\nTools: " + ", ".join(f"`{t}`" for t in tools)
    return name, value


def _fit_steps(fields: list[tuple[str, str]], budget: int) -> tuple[list[tuple[str, str]], bool]:
    """Every step if possible, shortened evenly when needed; the first ones that fit otherwise.

    Returns the fields to show and whether anything was shortened or left out.
    """
    names = sum(size(n) for n, _ in fields)
    full = [size(v) for _, v in fields]
    if names + sum(min(s, FIELD_VALUE_LIMIT) for s in full) <= budget:
        shown = [(n, clip(v, FIELD_VALUE_LIMIT)) for n, v in fields]
        return shown, any(s > FIELD_VALUE_LIMIT for s in full)
    if names + sum(min(s, _MIN_STEP_VALUE) for s in full) <= budget:
        low, high = _MIN_STEP_VALUE, FIELD_VALUE_LIMIT
        while low < high:
            cap = (low + high + 1) // 2
            if names + sum(min(s, cap) for s in full) <= budget:
                low = cap
            else:
                high = cap - 1
        return [(n, clip(v, low)) for n, v in fields], True
    first: list[tuple[str, str]] = []
    used = 0
    for name, value in fields:
        item = clip(value, _MIN_STEP_VALUE)
        cost = size(name) + size(item)
        if used + cost > budget:
            break
        first.append((name, item))
        used += cost
    return first, True


def render_plan(
    revision: PlanRevision,
    *,
    requested_by: str | None,
    outcome: Outcome | None = None,
    superseded: Supersession | None = None,
    changes: PlanDiff | None = None,
    votes: str | None = None,
) -> RenderedPlan:
    """The plan message's embeds, inside every Discord limit, and whether the file must go too.

    ``changes`` (a revision after Edit) opens the message with what changed since the
    previous revision, so a reviewer need not re-read the whole plan."""
    plan = revision.plan
    filename = f"plan-v{revision.revision}.md"
    title_text = f"Plan: {plan.summary}"
    title = clip(title_text, TITLE_LIMIT)
    shortened: list[str] = []
    if title != title_text:
        shortened.append("the summary")

    status_lines = [votes] if votes else []
    if outcome is not None:
        status_lines.append(_outcome_line(outcome))
    if superseded is not None:
        status_lines.append(_supersession_line(superseded))
    status = clip("\n".join(status_lines), _STATUS_LINE_LIMIT)

    footer_parts = [f"v{revision.revision}", revision.sha8]
    if requested_by:
        footer_parts.append(f"requested by {requested_by}")
    if outcome is not None:
        footer_parts.append(_outcome_footer(outcome))
    if superseded is not None:
        footer_parts.append(f"superseded by v{superseded.revision}")
    footer = clip(" · ".join(footer_parts), _FOOTER_BUDGET)

    steps = [
        _step_field(n, s.risk, s.description, s.tools) for n, s in enumerate(plan.steps, start=1)
    ]
    questions = "\n".join(f"{n}. {q}" for n, q in enumerate(plan.questions, start=1))
    notes = plan.context_notes

    changed = changes.to_discord(CHANGES_LIMIT) if changes is not None and not changes.empty else ""
    fixed = size(title) + size(footer) + size(status) + size(changed) + 4 + _OVERFLOW_NOTE_LIMIT
    roomy_notes, roomy_questions = clip(notes, _NOTES_ROOMY), clip(questions, _QUESTIONS_ROOMY)
    roomy = fixed + size(roomy_notes) + size(roomy_questions) + 40
    step_sizes = sum(size(n) + min(size(v), FIELD_VALUE_LIMIT) for n, v in steps)
    if roomy + step_sizes <= EMBED_TOTAL_LIMIT:
        shown_notes, shown_questions = roomy_notes, roomy_questions
    else:
        shown_notes, shown_questions = clip(notes, _NOTES_TIGHT), clip(questions, _QUESTIONS_TIGHT)
    if shown_notes != notes:
        shortened.append("the context notes")
    if shown_questions != questions:
        shortened.append("the open questions")

    description_parts = [p for p in (status, changed) if p]
    notes_part = f"**Context notes**\n{shown_notes}" if shown_notes else ""
    if notes_part:
        description_parts.append(notes_part)
    question_field = ("❓ Open questions", shown_questions) if shown_questions else None

    budget = (
        EMBED_TOTAL_LIMIT
        - fixed
        - (size(notes_part) + 2 if notes_part else 0)
        - (size(question_field[0]) + size(question_field[1]) if question_field else 0)
    )
    shown_steps, steps_cut = _fit_steps(steps, budget)
    left_out = len(steps) - len(shown_steps)
    if steps_cut and left_out == 0:
        shortened.append("some step descriptions")

    overflow = bool(shortened) or left_out > 0
    if overflow:
        what = []
        if left_out:
            first = len(shown_steps) + 1
            span = f"step {first}" if first == len(steps) else f"steps {first}–{len(steps)}"
            what.append(f"{span} of {len(steps)} are only in the file")
        if shortened:
            what.append(", ".join(shortened) + " are shortened here")
        note = (
            "📎 This plan is larger than a Discord embed: "
            + "; ".join(what)
            + f". The whole plan is attached as `{filename}`."
        )
        description_parts.append(clip(note, _OVERFLOW_NOTE_LIMIT - 2))

    colour = PENDING_COLOUR
    if outcome is not None:
        colour = _OUTCOME_COLOUR.get(outcome.action, CLOSED_COLOUR)
    if superseded is not None:
        colour = CLOSED_COLOUR

    fields = list(shown_steps)
    if question_field is not None:
        fields.append(question_field)
    chunks = [fields[i : i + FIELDS_PER_EMBED] for i in range(0, len(fields), FIELDS_PER_EMBED)]
    chunks = chunks[:EMBEDS_PER_MESSAGE] or [[]]
    embeds = []
    for index, chunk in enumerate(chunks):
        embed = discord.Embed(colour=colour)
        if index == 0:
            embed.title = title
            description = "\n\n".join(description_parts)
            if description:
                embed.description = clip(description, DESCRIPTION_LIMIT)
        for name, value in chunk:
            embed.add_field(name=clip(name, FIELD_NAME_LIMIT), value=value, inline=False)
        embeds.append(embed)
    embeds[-1].set_footer(text=footer)
    if outcome is not None:
        embeds[-1].timestamp = outcome.at
    return RenderedPlan(embeds, overflow, filename, revision.markdown, changes=changes)


def review_request_text(agent: str, revision: int, mention: str | None) -> str:
    who = f"{mention}, " if mention else ""
    return f"{who}**{agent}** submitted plan v{revision} for review."


def auto_approved_text(agent: str, revision: int) -> str:
    return (
        f"**{agent}** submitted plan v{revision}; it is approved automatically "
        "(`plan_mode.require_approval` is off)."
    )


# -- execution progress ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Finish:
    """How execution ended, for the progress message's last edit."""

    action: str
    by: str | None = None


def render_progress(
    revision: PlanRevision,
    steps: Sequence[StepProgress],
    *,
    approved_by: str | None,
    mode: ApprovalMode | None,
    finish: Finish | None = None,
    drift: int = 0,
) -> discord.Embed:
    """The progress of an approved plan; ``drift`` counts calls outside the plan so far."""
    plan = revision.plan
    progress = list(steps)[: len(plan.steps)]
    progress += [StepProgress()] * (len(plan.steps) - len(progress))
    done = sum(1 for p in progress if p.status is StepStatus.DONE)
    if finish is None:
        title, colour = f"Executing plan v{revision.revision}: {plan.summary}", PENDING_COLOUR
    elif finish.action == "completed":
        title, colour = f"Plan v{revision.revision} complete: {plan.summary}", APPROVED_COLOUR
    else:
        who = f" by {finish.by}" if finish.by else ""
        title = f"Plan v{revision.revision} {finish.action}{who}: {plan.summary}"
        colour = CLOSED_COLOUR

    per_line = max(40, min(300, (DESCRIPTION_LIMIT - 100) // max(1, len(plan.steps)) - 1))
    lines = []
    for number, (step, state) in enumerate(zip(plan.steps, progress, strict=True), start=1):
        first_line = step.description.split("\n", 1)[0]
        line = f"{STEP_MARK[state.status]} {number}. {first_line}"
        if state.note:
            line += f" — {state.note}"
        lines.append(clip(line, per_line))
    footer = [f"v{revision.revision}", revision.sha8, f"{done}/{len(plan.steps)} done"]
    if drift:
        footer.append(f"⚠️ {drift} call{'s' if drift != 1 else ''} outside the plan")
    if approved_by:
        footer.append(f"approved by {approved_by}")
    if mode is not None and mode is not ApprovalMode.NORMAL:
        footer.append(MODE_WORDS[mode])
    embed = discord.Embed(
        title=clip(title, TITLE_LIMIT),
        description=clip("\n".join(lines), DESCRIPTION_LIMIT),
        colour=colour,
    )
    embed.set_footer(text=clip(" · ".join(footer), _FOOTER_BUDGET))
    return embed


def completed_text(revision: PlanRevision, summary: str | None) -> str:
    text = f"✅ Plan v{revision.revision} complete: {revision.plan.summary}"
    if summary:
        text += "\n" + "\n".join(f"> {line}" for line in summary.splitlines())
    return clip(text, CONTENT_LIMIT)


# -- status ------------------------------------------------------------------------------

_PHASE_WORDS = {
    Phase.INACTIVE: "not in plan mode",
    Phase.GATHERING: "gathering — exploring read-only, no plan submitted yet",
    Phase.SUBMITTED: "submitted — a plan is waiting for a decision",
    Phase.EXECUTING: "executing the approved plan",
}


def render_status(agent: str, status: PlanningStatus) -> discord.Embed:
    """``/plan status``: phase, since when, who asked, the plan, progress and deadlines."""
    state, revision = status.state, status.revision
    embed = discord.Embed(title=clip(f"Plan mode · {agent}", TITLE_LIMIT))
    embed.add_field(name="Phase", value=_PHASE_WORDS[state.phase], inline=True)
    if state.phase is Phase.INACTIVE:
        embed.colour = CLOSED_COLOUR
        embed.description = "Start planning with `/plan start`."
        return embed
    embed.colour = APPROVED_COLOUR if state.phase is Phase.EXECUTING else PENDING_COLOUR
    if state.entered_at is not None:
        embed.add_field(name="Since", value=when(state.entered_at), inline=True)
    if state.requested_by_name:
        embed.add_field(name="Requested by", value=clip(state.requested_by_name, 256), inline=True)
    if state.task:
        embed.add_field(name="Task", value=clip(state.task, FIELD_VALUE_LIMIT), inline=False)
    if revision is not None:
        plan = f"v{revision.revision} · `{revision.sha8}` — {revision.plan.summary}"
        embed.add_field(name="Plan", value=clip(plan, FIELD_VALUE_LIMIT), inline=False)
    if state.phase is Phase.EXECUTING:
        who = state.approved_by_name or "?"
        mode = state.approval_mode or ApprovalMode.NORMAL
        approved = f"by {who}"
        if state.approved_at is not None:
            approved += f" {when(state.approved_at)}"
        if mode is not ApprovalMode.NORMAL:
            approved += f" ({MODE_WORDS[mode]})"
        embed.add_field(name="Approved", value=clip(approved, FIELD_VALUE_LIMIT), inline=False)
        if revision is not None:
            done = sum(1 for s in state.steps if s.status is StepStatus.DONE)
            lines = [f"{done}/{len(state.steps)} done"]
            for number, (step, progress) in enumerate(
                zip(revision.plan.steps, state.steps, strict=False), start=1
            ):
                first_line = step.description.split("\n", 1)[0]
                lines.append(clip(f"{STEP_MARK[progress.status]} {number}. {first_line}", 80))
            embed.add_field(
                name="Progress", value=clip("\n".join(lines), FIELD_VALUE_LIMIT), inline=False
            )
    if state.approval_deadline is not None:
        embed.add_field(name="Approval deadline", value=when(state.approval_deadline), inline=True)
    if state.idle_deadline is not None:
        embed.add_field(name="Idle deadline", value=when(state.idle_deadline), inline=True)
    return embed


# -- channel lines -----------------------------------------------------------------------


def entered_text(agent: str, reason: str | None) -> str:
    why = f" ({reason})" if reason else ""
    return clip(
        f"📝 **{agent}** is in plan mode{why}: it explores read-only and will submit a plan "
        "for approval before changing anything.",
        CONTENT_LIMIT,
    )


def changes_requested_text(
    agent: str, revision: int, by: str | None, feedback: str, step: int | None
) -> str:
    where = f" (step {step})" if step else ""
    who = by or "Someone"
    head = f"✏️ {who} asked for changes to plan v{revision}{where}:"
    tail = f"**{agent}** is revising the plan; v{revision + 1} will be posted here."
    room = CONTENT_LIMIT - size(head) - size(tail) - 4
    quoted = "\n".join(f"> {line}" for line in clip(feedback, max(room - 200, 50)).splitlines())
    return clip(f"{head}\n{quoted}\n{tail}", CONTENT_LIMIT)


def timed_out_text(agent: str, which: str, revision: int) -> str:
    if which == "approval" and revision:
        return (
            f"⌛ Plan v{revision} for **{agent}** got no decision in time — planning cancelled. "
            "Nothing was changed."
        )
    return (
        f"⌛ **{agent}** spent too long in plan mode without submitting a plan — planning "
        "cancelled. Nothing was changed."
    )


def cancelled_text(agent: str, by: str | None, phase: Phase) -> str:
    who = f" by {by}" if by else ""
    if phase is Phase.EXECUTING:
        return f"🚫 Execution of the approved plan was cancelled{who}; **{agent}** stops."
    return f"🚫 Planning for **{agent}** was cancelled{who}. Nothing was changed."
