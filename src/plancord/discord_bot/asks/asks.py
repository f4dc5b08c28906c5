"""The asks on Discord as one entry point for the core, the bot's buttons and the message
cog.

``Asks`` is the core's ``AskCards`` (``core.asks.records``): it shows an ask, redraws it
once settled, marks it unanswered or expired, handing each call to the part it belongs to:
questions (``questions.py``) and permission requests (``permissions.py``), over the cards
both keep (``live.py``). The asks themselves (their rows, the wait, the answer, the expiry
after a restart) are the core's ``AskService``.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import discord

from plancord.core.asks.records import CardRef, OpenAsk, StoredAsk
from plancord.discord_bot.asks.live import LiveAsks
from plancord.discord_bot.asks.permissions import Permissions
from plancord.discord_bot.asks.questions import Questions
from plancord.discord_bot.asks.remember import Remembering
from plancord.discord_bot.shared.client import PlancordClient


class Asks:
    def __init__(
        self,
        bot: PlancordClient,
        live: LiveAsks,
        questions: Questions,
        permissions: Permissions,
    ) -> None:
        self.bot = bot
        self.live = live
        self.questions = questions
        self.permissions = permissions
        self.remembering = Remembering(bot, live)

    def waiting(self, agent: str) -> bool:
        """True while the agent waits for a human's answer or decision."""
        return self.live.waiting(agent)

    def take_answer(self, message: discord.Message) -> bool:
        """Hand ``message`` to the question it answers; True when it was taken as an answer."""
        return self.questions.take_answer(message)

    async def answer(
        self, interaction: discord.Interaction[discord.Client], ask_id: str, index: int | None
    ) -> None:
        await self.questions.answer(interaction, ask_id, index)

    async def answer_text(
        self, interaction: discord.Interaction[discord.Client], ask_id: str, text: str
    ) -> None:
        await self.questions.answer_text(interaction, ask_id, text)

    async def decide(
        self, interaction: discord.Interaction[discord.Client], ask_id: str, allow: bool
    ) -> None:
        await self.permissions.decide(interaction, ask_id, allow)

    async def remember(
        self,
        interaction: discord.Interaction[discord.Client],
        ask_id: str,
        allow: bool,
        lasts: timedelta | None,
        *,
        confirmed: bool,
    ) -> None:
        """ "Allow always…" / "Deny always…": the scope shown, then (``confirmed``) kept."""
        if confirmed:
            await self.remembering.confirm(interaction, ask_id, allow, lasts)
        else:
            await self.remembering.offer(interaction, ask_id, allow)

    # -- the core's AskCards -----------------------------------------------------------------

    async def show(self, ask: OpenAsk) -> CardRef:
        if ask.kind == "permission":
            return await self.permissions.show(ask)
        return await self.questions.show(ask)

    async def settled(self, ask: OpenAsk, outcome: str, value: Any) -> None:
        if ask.kind == "permission":
            await self.permissions.settled(ask, outcome, value)
        else:
            await self.questions.settled(ask, outcome, value)

    async def unanswered(self, ask: OpenAsk) -> None:
        if ask.kind == "permission":
            await self.permissions.unanswered(ask)
        else:
            await self.questions.unanswered(ask)

    async def expired(self, ask: StoredAsk) -> None:
        if ask.kind == "permission":
            await self.permissions.expired(ask)
        else:
            await self.questions.expired(ask)

    async def restore(self) -> None:
        """Mark every ask left over from an earlier process expired (``AskService.restore``);
        asks of agents another process serves are that process's."""
        await self.live.service.restore(self.bot.app.serves)
