"""A pick in a plan question's menu: acknowledged at once, then reported to the core
(``core.plan_picks``: judged, checked against the shared state, kept with its audit row),
and shown on the plan message. A pick the core refuses changes nothing and is answered
privately with the reason."""

from __future__ import annotations

import logging

import discord

from plancord.discord_bot.plan_card.buttons import revision_for_click
from plancord.discord_bot.plan_card.message import PlanCards
from plancord.discord_bot.shared.client import PlancordClient
from plancord.discord_bot.shared.common import acknowledge, actor_at, reply_error

log = logging.getLogger(__name__)


class PlanAnswering:
    """Takes the picks in the menus of a waiting plan's questions and shows them on its card."""

    def __init__(self, bot: PlancordClient, cards: PlanCards) -> None:
        self.bot = bot
        self.cards = cards

    async def answer(
        self,
        interaction: discord.Interaction,
        plan_id: str,
        number: int,
        question: int,
        choice: int,
    ) -> None:
        await acknowledge(interaction)
        revision = await revision_for_click(interaction, plan_id, number)
        if revision is None:
            return
        kept = await self.bot.app.plan_picks.pick(actor_at(interaction), revision, question, choice)
        if isinstance(kept, str):
            await reply_error(interaction, kept)
            return
        message = await self.cards.store.get(plan_id, number)
        if message is not None and not await self.cards.redraw(message, revision=revision):
            log.warning("the answer to Q%s of plan v%s is kept but not shown", question, number)

    async def redraw(self, plan_id: str, number: int) -> None:
        """Draw the message of plan ``number`` again (a comment arrived, or was resolved)."""
        message = await self.cards.store.get(plan_id, number)
        if message is not None:
            await self.cards.redraw(message)
