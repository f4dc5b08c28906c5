"""Comments from the plan message: ``Comment`` opens a form (a step number, or none for the
plan as a whole, and the comment) at once, as the click's first answer; its submission is
checked like any click on the plan (the agent's own channel, the revision still waiting)
and kept by ``PlanComments``, which asks the authority whether the member may instruct the
agent. The message then shows the comment under its step."""

from __future__ import annotations

import re
from typing import Any, Self

import discord

from plancord.core.plan_comments import MAX_COMMENT_CHARS, PLAN_WIDE
from plancord.core.planning import PlanRevision
from plancord.discord_bot.plan_card.buttons import (
    MODAL_TIMEOUT_SECONDS,
    REVISION,
    PlanClick,
    app_of,
)
from plancord.discord_bot.shared.client import client_of
from plancord.discord_bot.shared.common import actor_at, explained_refusals, reply_error
from plancord.discord_bot.shared.dynamic_items import PLAN_ID, CustomId

COMMENT_ID = CustomId("plan:comment:{plan_id}:{revision}", plan_id=PLAN_ID, revision=REVISION)


class CommentButton(
    discord.ui.DynamicItem[discord.ui.Button[discord.ui.View]],
    template=COMMENT_ID.template,
):
    def __init__(self, plan_id: str, revision: int, *, disabled: bool = False) -> None:
        super().__init__(
            discord.ui.Button(
                label="Comment",
                style=discord.ButtonStyle.secondary,
                custom_id=COMMENT_ID(plan_id=plan_id, revision=revision),
                disabled=disabled,
                row=1,
            )
        )
        self.click = PlanClick(plan_id, revision)

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction, item: discord.ui.Item[Any], match: re.Match[str], /
    ) -> Self:
        return cls(match["plan_id"], int(match["revision"]))

    async def callback(self, interaction: discord.Interaction) -> Any:
        await interaction.response.send_modal(CommentModal(self.click))


class CommentModal(discord.ui.Modal):
    def __init__(self, click: PlanClick) -> None:
        super().__init__(title=f"Comment on plan v{click.revision}", timeout=MODAL_TIMEOUT_SECONDS)
        self.click = click
        self.step: discord.ui.TextInput[Self] = discord.ui.TextInput(
            custom_id="step",
            required=False,
            max_length=3,
            placeholder="A step number; empty: the whole plan",
        )
        self.body: discord.ui.TextInput[Self] = discord.ui.TextInput(
            custom_id="comment",
            style=discord.TextStyle.paragraph,
            required=True,
            max_length=MAX_COMMENT_CHARS,
        )
        self.add_item(discord.ui.Label(text="Step (optional)", component=self.step))
        self.add_item(discord.ui.Label(text="Comment", component=self.body))

    async def on_submit(self, interaction: discord.Interaction) -> None:
        raw = self.step.value.strip()
        if raw and not raw.isdigit():
            await reply_error(interaction, f"The step must be a number such as 2, not {raw!r}.")
            return
        await interaction.response.defer(ephemeral=True, thinking=True)
        if not await self.click.check(interaction):
            return
        revision = self.click.checked
        async with explained_refusals(interaction):
            comment = await app_of(interaction).plan_comments.comment(
                revision.agent, actor_at(interaction), int(raw or PLAN_WIDE), self.body.value
            )
            await redraw(interaction, revision)
            await interaction.followup.send(
                f"Comment #{comment.id} on {comment.where} of plan v{revision.revision} kept; "
                f"**{revision.agent}** reads it at its next turn.",
                ephemeral=True,
            )


async def redraw(interaction: discord.Interaction, revision: PlanRevision) -> None:
    """Show the plan's comments as they are now on the message of ``revision``."""
    await client_of(interaction).plan_questions.redraw(revision.plan_id, revision.revision)


COMMENT_BUTTONS: tuple[type[discord.ui.DynamicItem[Any]], ...] = (CommentButton,)
