"""What every part of the Discord edge may rely on: the Discord client, the config and the
application, with one way to explain a refusal.

``PlancordBot`` (in ``discord_bot/bot.py``) is the one subclass: it builds the parts and
the cogs and hands each what it needs. The parts depend on this class, never on the bot, so
the edge has no import circle: bot → notifier → cogs → plan card | asks → shared.
"""

from __future__ import annotations

from typing import Any

import discord
from discord.ext import commands

from plancord.app import App
from plancord.config import Config
from plancord.core.errors import PlancordError


def _no_prefix(bot: commands.Bot, message: discord.Message) -> list[str]:
    """plancord has slash commands only; text in an agent's channel is for the agent."""
    return []


class PlancordClient(commands.Bot):
    def __init__(self, config: Config) -> None:
        intents = discord.Intents.default()
        intents.message_content = True
        shards = config.discord
        sharding: dict[str, Any] = (
            {"shard_count": shards.shard_count, "shard_ids": shards.shard_ids}
            if shards.sharded
            else {}
        )
        super().__init__(
            command_prefix=_no_prefix,
            intents=intents,
            allowed_mentions=discord.AllowedMentions.none(),
            help_command=None,
            **sharding,
        )
        self.config = config
        self._app: App | None = None

    @property
    def app(self) -> App:
        if self._app is None:
            raise RuntimeError("the bot has not finished setting up")
        return self._app

    async def explain(self, exc: PlancordError) -> str:
        """The text a member reads for a refusal (``PlancordBot`` adds links to plans)."""
        return str(exc)

    async def decide_ask(self, interaction: discord.Interaction, ask_id: str, allow: bool) -> None:
        """A click on a permission request's Allow or Deny (``PlancordBot`` hands it on)."""
        raise RuntimeError("this client cannot decide permission requests")

    async def answer_ask(
        self, interaction: discord.Interaction, ask_id: str, choice: int | None
    ) -> None:
        """A tap on a question's choice, or on "Other…" (``None``)."""
        raise RuntimeError("this client cannot answer questions")

    async def answer_ask_text(
        self, interaction: discord.Interaction, ask_id: str, text: str
    ) -> None:
        """The "Other…" form of a question, submitted."""
        raise RuntimeError("this client cannot answer questions")

    async def answer_plan_question(
        self,
        interaction: discord.Interaction,
        plan_id: str,
        revision: int,
        question: int,
        choice: int,
    ) -> None:
        """A pick in the menu of one of a waiting plan's open questions."""
        raise RuntimeError("this client cannot answer plan questions")


def client_of(interaction: discord.Interaction) -> PlancordClient:
    """The plancord client behind an interaction."""
    client = interaction.client
    if not isinstance(client, PlancordClient):
        raise RuntimeError("plancord's components need a PlancordClient")
    return client
