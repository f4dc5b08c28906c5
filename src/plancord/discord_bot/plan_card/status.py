"""Plan mode as Discord shows it besides the plan card (``embed``): the execution
progress message, the ``/plan status`` card and the short channel lines that announce
changes.

Pure functions from core models to ``discord.Embed`` and text, so every Discord limit can be
checked without a bot. A plan can be far larger than an embed; whatever is shortened or left
out is said in the embed, and the revision's canonical markdown (the text its sha256 covers)
goes along as ``plan-v<rev>.md``. Lengths are measured in UTF-16 code units, which is never
less than the code-point count Discord may be counting, so an emoji-heavy plan stays inside
the limits either way.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import discord

from plancord.core.planning import (
    ApprovalMode,
    AuditAction,
    Phase,
    PlanRevision,
    StepProgress,
    StepStatus,
)
from plancord.core.service import PlanningStatus
from plancord.discord_bot.shared.embed_basics import (
    APPROVED_COLOUR,
    CLOSED_COLOUR,
    CONTENT_LIMIT,
    DESCRIPTION_LIMIT,
    FIELD_VALUE_LIMIT,
    FOOTER_BUDGET,
    MODE_WORDS,
    PENDING_COLOUR,
    STEP_MARK,
    TITLE_LIMIT,
    clip,
    size,
    when,
)


def review_request_text(
    agent: str,
    revision: int,
    mention: str | None,
    *,
    amends: int | None = None,
    edited_by: str | None = None,
) -> str:
    who = f"{mention}, " if mention else ""
    if edited_by is not None:
        return (
            f"{who}{edited_by} edited plan v{revision - 1} of **{agent}** directly: "
            f"v{revision} is up for review."
        )
    if amends is not None:
        return (
            f"{who}**{agent}** wants to amend the approved plan v{amends}: v{revision} is up "
            "for review. ⏸️ Execution is paused until it is approved; Reject stops it."
        )
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

    action: AuditAction
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
    elif finish.action is AuditAction.COMPLETED:
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
    embed.set_footer(text=clip(" · ".join(footer), FOOTER_BUDGET))
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
