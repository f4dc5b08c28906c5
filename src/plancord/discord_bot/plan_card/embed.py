"""The plan message's embeds: every step, question and note inside Discord's limits, the
outcome and supersession lines, the changes since the last revision, and whether the whole
plan must go along as its markdown file."""

from __future__ import annotations

import io
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

import discord

from plancord.core.plan import PlanStep
from plancord.core.plan_answers import PlanAnswer
from plancord.core.plan_comments import CommentSummary
from plancord.core.plan_diff import PlanDiff
from plancord.core.plan_text import COMMENTS_MARK
from plancord.core.planning import (
    PlanRevision,
)
from plancord.discord_bot.plan_card.answer_menu import menu_questions
from plancord.discord_bot.plan_card.review import ReviewPart
from plancord.discord_bot.shared.embed_basics import (
    APPROVED_COLOUR,
    CHANGES_COLOUR,
    CHANGES_LIMIT,
    CLOSED_COLOUR,
    DESCRIPTION_LIMIT,
    EMBED_TOTAL_LIMIT,
    EMBEDS_PER_MESSAGE,
    FIELD_NAME_LIMIT,
    FIELD_VALUE_LIMIT,
    FIELDS_PER_EMBED,
    FOOTER_BUDGET,
    PENDING_COLOUR,
    REJECTED_COLOUR,
    RISK_MARK,
    TITLE_LIMIT,
    clip,
    fit_fields,
    size,
    utc,
    when,
)

_STATUS_LINE_LIMIT = 600
_NOTE_LIMIT = 300
_OVERFLOW_NOTE_LIMIT = 300
_NOTES_ROOMY = 1500
_NOTES_TIGHT = 700
_QUESTIONS_ROOMY = FIELD_VALUE_LIMIT
_QUESTIONS_TIGHT = 600
_MIN_STEP_VALUE = 24


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
    review_markdown: str = ""
    """The full review, attached after the plan (outside the markdown its sha covers)."""
    comments_markdown: str = ""
    """The plan's comments, attached after the plan below ``COMMENTS_MARK``."""

    def file(self) -> discord.File:
        """The canonical markdown as an attachment (a fresh one each time: Files are
        one-shot), after the plan's review when there is one: the host's review comes first,
        so nothing the plan's own text holds can stand above it looking like it."""
        text = self.markdown
        if self.review_markdown:
            text = self.review_markdown.rstrip("\n") + "\n\n---\n\n" + text
        if self.comments_markdown:
            text += f"\n{COMMENTS_MARK}\n\n## Comments\n\n{self.comments_markdown}\n"
        return discord.File(io.BytesIO(text.encode("utf-8")), filename=self.filename)

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
    number: int, step: PlanStep, network_anything: bool, comments: str | None = None
) -> tuple[str, str]:
    name = f"{RISK_MARK[step.risk]} Step {number} · {step.risk.value} risk"
    value = step.description
    if comments:
        # The comments go first, so a step too long for its field keeps them in sight.
        value = f"{comments}\n{value}"
    if step.tools:
        value += "\nTools: " + ", ".join(f"`{t}`" for t in step.tools)
    named = ", ".join(f"`{h}`" for h in step.network)
    if network_anything:
        value += "\nNetwork: anything (the agent has `network: true`)"
        value += f"; the step names {named}" if named else ""
    elif named:
        value += f"\nNetwork: {named}"
    return name, value


def render_plan(
    revision: PlanRevision,
    *,
    requested_by: str | None,
    outcome: Outcome | None = None,
    superseded: Supersession | None = None,
    changes: PlanDiff | None = None,
    votes: str | None = None,
    cost: str | None = None,
    answers: Mapping[int, PlanAnswer] | None = None,
    review: ReviewPart | None = None,
    network_anything: bool = False,
    comments: CommentSummary | None = None,
) -> RenderedPlan:
    """The plan message's embeds, inside every Discord limit, and whether the file must go too.

    ``changes`` (a revision after Edit) opens the message with what changed since the
    previous revision, so a reviewer need not re-read the whole plan. ``network_anything``:
    the agent may reach any host while executing (``network: true``), which every step says.
    """
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
    footer = clip(" · ".join(footer_parts), FOOTER_BUDGET)

    by_step = comments.by_step if comments is not None else {}
    steps = [
        _step_field(n, s, network_anything, by_step.get(n))
        for n, s in enumerate(plan.steps, start=1)
    ]
    questions = question_lines(revision, answers or {})
    notes = plan.context_notes

    changed = changes.to_discord(CHANGES_LIMIT) if changes is not None and not changes.empty else ""
    cost_line = clip(cost or "", 200)
    if comments is not None and comments.plan_line:
        changed = "\n".join(p for p in (changed, clip(comments.plan_line, 200)) if p)
    fixed = (
        size(title) + size(footer) + size(status) + size(changed) + size(cost_line) + 6
    ) + _OVERFLOW_NOTE_LIMIT
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
    review_embed = review.embed(colour=PENDING_COLOUR) if review is not None else None
    review_size = (
        size(review_embed.title or "") + size(review_embed.description or "") if review_embed else 0
    )

    budget = (
        EMBED_TOTAL_LIMIT
        - fixed
        - review_size
        - (size(notes_part) + 2 if notes_part else 0)
        - (size(question_field[0]) + size(question_field[1]) if question_field else 0)
    )
    shown_steps, steps_cut = fit_fields(steps, budget, _MIN_STEP_VALUE)
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

    if cost_line:
        description_parts.append(cost_line)

    colour = PENDING_COLOUR
    if outcome is not None:
        colour = _OUTCOME_COLOUR.get(outcome.action, CLOSED_COLOUR)
    if superseded is not None:
        colour = CLOSED_COLOUR

    fields = list(shown_steps)
    if question_field is not None:
        fields.append(question_field)
    chunks = [fields[i : i + FIELDS_PER_EMBED] for i in range(0, len(fields), FIELDS_PER_EMBED)]
    room = EMBEDS_PER_MESSAGE - (1 if review_embed is not None else 0)
    chunks = chunks[:room] or [[]]
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
    if review_embed is not None:
        review_embed.colour = colour
        embeds.append(review_embed)
    embeds[-1].set_footer(text=footer)
    if outcome is not None:
        embeds[-1].timestamp = outcome.at
    return RenderedPlan(
        embeds,
        overflow,
        filename,
        revision.markdown,
        changes=changes,
        review_markdown=review.markdown() if review is not None else "",
        comments_markdown=comments.markdown if comments is not None else "",
    )


def question_lines(revision: PlanRevision, answers: Mapping[int, PlanAnswer]) -> str:
    """Each open question; one with choices shows them and the pick so far. A question past
    those the card has menus for is answered through the ``Answer N more questions…``
    button."""
    plan = revision.plan
    menus = set(menu_questions(revision))
    lines = []
    for index, question in enumerate(plan.questions):
        lines.append(f"{index + 1}. {question}")
        choices = plan.choices_for(index)
        if not choices:
            continue
        where = "" if index in menus else " (menu under “Answer … more questions”)"
        lines.append(f"   ▸ {' · '.join(choices)}{where}")
        answer = answers.get(index)
        if answer is not None:
            lines.append(f"   ✅ **{answer.answer}** — {answer.by_name}")
    return "\n".join(lines)
