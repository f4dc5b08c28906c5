"""The asks as one entry point for the notifier, the bot's buttons and the message cog.

``Asks`` holds the three parts and hands each call to the one it belongs to: questions
(``questions.py``), permission requests (``permissions.py``) and the live asks both wait on
(``live.py``). Every open ask is also a row of ``pending_asks``; a coroutine waiting in a
process that died cannot be resumed, so after a restart ``restore`` expires each leftover
row: its message is edited (controls disabled) and the row deleted.
"""

from __future__ import annotations

from datetime import timedelta

import discord

from plancord.core.authority import Answer
from plancord.core.ports import PermissionRequest, Question
from plancord.discord_bot.asks.live import LiveAsks
from plancord.discord_bot.asks.permissions import Permissions
from plancord.discord_bot.asks.questions import Questions
from plancord.discord_bot.asks.remember import Remembering
from plancord.discord_bot.shared.client import PlancordClient
from plancord.storage.pending_asks import StoredAsk


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

    async def ask_user(self, question: Question) -> str | None:
        return await self.questions.ask_user(question)

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

    async def ask_permission(self, request: PermissionRequest) -> Answer:
        return await self.permissions.ask_permission(request)

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

    async def restore(self) -> None:
        """Mark every ask left over from an earlier process expired; its waiter is gone. Asks
        of agents another process serves (``discord.shard_ids``) are that process's."""
        for ask in await self.live.store.all():
            if self.live.get(ask.id) is not None or not await self.bot.app.serves(ask.agent):
                continue
            await self._expire(ask)

    async def _expire(self, ask: StoredAsk) -> None:
        message = None
        if ask.channel_id is not None and ask.message_id is not None:
            message = self.bot.get_partial_messageable(ask.channel_id).get_partial_message(
                ask.message_id
            )
        if ask.kind == "permission":
            await self.permissions.expire(ask, message)
        elif message is not None:
            await self.questions.expire(ask, message)
        await self.live.store.delete(ask.id)
