"""The plan review on the plan message: its line, its findings field, its part of the
attached markdown, and the button that sends the findings back to the agent in one tap.

The findings are the reviewer's words about agent-written text, so they are untrusted twice:
``core.review`` renders them quoted and neutralised, and every message here goes out with
mentions off. The button carries only ``plan_id:revision``; a click reloads the review from
the store and asks for changes through the one decision path, so the approver policy and the
revision binding apply as for Edit.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Self

import discord

from plancord.core.planning import PlanEvent, PlanRevision
from plancord.core.review import PlanReview
from plancord.core.review_gate import settle_window
from plancord.discord_bot.plan_card.buttons import (
    FEEDBACK_LIMIT,
    REVISION,
    Button,
    PlanClick,
    app_of,
    may_decide,
    request_changes,
)
from plancord.discord_bot.shared.common import explained_refusals, reply_error
from plancord.discord_bot.shared.dynamic_items import PLAN_ID, CustomId
from plancord.discord_bot.shared.embed_basics import FIELD_VALUE_LIMIT
from plancord.storage.plan_reviews import PlanReviewStore

if TYPE_CHECKING:
    from plancord.app import App

IN_PROGRESS = "⏳ Review in progress"
TITLE = "🔎 Review of v{revision}"
"""The review's embed title: the plan's own text is never in a title but ``Plan: …``'s, so
nothing the agent writes (its context notes, its steps) can look like the review."""
FINDINGS_ID = CustomId("plan:findings:{plan_id}:{revision}", plan_id=PLAN_ID, revision=REVISION)


@dataclass(frozen=True, slots=True)
class ReviewPart:
    """What a plan message shows of its revision's review: ``review`` None while it runs.
    ``step_url`` links a finding's step number to the steps (the plan message itself)."""

    revision: int
    review: PlanReview | None = None
    step_url: str | None = None

    def status_line(self) -> str:
        if self.review is None:
            return IN_PROGRESS
        mark = "🔎" if self.review.available else "⚠️"
        return f"{mark} **{self.review.summary_line()}**"

    def findings(self) -> str:
        """The findings, quoted; nothing while the review runs."""
        if self.review is None:
            return ""
        url = self.step_url
        link: Callable[[int], str | None] | None = (lambda _step: url) if url else None
        return self.review.findings_field(FIELD_VALUE_LIMIT, step_link=link)

    def embed(self, *, colour: discord.Colour | int) -> discord.Embed:
        """The review in an embed of its own, after the plan's, with a title only the host
        writes: its line, then its findings."""
        text = "\n".join(p for p in (self.status_line(), self.findings()) if p)
        return discord.Embed(
            title=TITLE.format(revision=self.revision), description=text, colour=colour
        )

    def markdown(self) -> str:
        """The full review, appended to the attached ``plan-v<rev>.md`` (never to the plan's
        canonical markdown, which its sha covers)."""
        if self.review is None:
            return ""
        return self.review.to_markdown(self.revision)

    @property
    def has_findings(self) -> bool:
        return self.review is not None and self.review.available and bool(self.review.findings)


async def kept_review(reviews: PlanReviewStore, revision: PlanRevision) -> PlanReview | None:
    """The revision's plan review once kept; None while it runs or when there is none."""
    found = await reviews.get(revision.plan_id, revision.revision)
    return found.review if found is not None else None


class SendFindingsButton(
    discord.ui.DynamicItem[Button],
    template=FINDINGS_ID.template,
):
    """Edit in one tap: the review's findings go back to the agent as the feedback, and the
    next revision's review says which of them it resolves."""

    def __init__(self, plan_id: str, revision: int, *, disabled: bool = False) -> None:
        super().__init__(
            discord.ui.Button(
                label="Send findings back",
                style=discord.ButtonStyle.primary,
                custom_id=FINDINGS_ID(plan_id=plan_id, revision=revision),
                disabled=disabled,
                row=0,
            )
        )
        self.click = PlanClick(plan_id, revision)

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction, item: discord.ui.Item[Any], match: re.Match[str], /
    ) -> Self:
        return cls(match["plan_id"], int(match["revision"]))

    async def interaction_check(self, interaction: discord.Interaction) -> bool:
        await interaction.response.defer(ephemeral=True, thinking=True)
        return await self.click.check(interaction)

    async def callback(self, interaction: discord.Interaction) -> Any:
        revision = self.click.found
        if revision is None:
            return
        async with explained_refusals(interaction):
            if not await may_decide(interaction, revision, PlanEvent.REQUEST_CHANGES):
                return
            review = await kept_review(app_of(interaction).plan_reviews, revision)
            if review is None or not review.available or not review.findings:
                await reply_error(interaction, "This plan's review has no findings to send.")
                return
            feedback = review.as_feedback(revision.revision, max_chars=FEEDBACK_LIMIT)
            await request_changes(interaction, revision, feedback, None)


REVIEW_BUTTONS: tuple[type[discord.ui.DynamicItem[Any]], ...] = (SendFindingsButton,)


def add_review_buttons(
    view: discord.ui.View, revision: PlanRevision, part: ReviewPart | None, *, disabled: bool
) -> discord.ui.View:
    """The plan's view with ``Send findings back`` when its review has findings."""
    if part is not None and part.has_findings:
        view.add_item(SendFindingsButton(revision.plan_id, revision.revision, disabled=disabled))
    return view


async def review_part(
    app: App, revision: PlanRevision, *, step_url: str | None, reviewing: bool
) -> tuple[ReviewPart | None, datetime | None]:
    """What the plan message shows of ``revision``'s review, and when the review was kept
    (the end of the cost line's window); no part when reviews are off, or when none was
    started and ``reviewing`` (a fresh submission) does not say one is about to be."""
    settings = (await app.settings.plan_mode_for(revision.agent)).review
    if settings is None:
        return None, None
    found = await app.plan_reviews.get(revision.plan_id, revision.revision)
    if found is None:
        return (ReviewPart(revision.revision, step_url=step_url) if reviewing else None), None
    review = found.settled(app.clock.now(), settle_window(settings))
    return ReviewPart(revision.revision, review, step_url), found.finished_at
