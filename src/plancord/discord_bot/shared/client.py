"""What every part of the Discord edge may rely on: the Discord client, the config and the
application, with one way to explain a refusal, and the parts a click on a persistent
button or menu is handed to (a dynamic item reaches them through the client).

``PlancordBot`` (in ``discord_bot/bot.py``) is the one subclass: it builds the parts and
the cogs and hands each what it needs. The parts depend on this class, never on the bot, so
the edge has no import circle: bot → notifier → cogs → plan card | asks → shared.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any, Protocol

import discord
from discord.ext import commands

from plancord.app import App
from plancord.config import Config
from plancord.core.errors import PlancordError


def _no_prefix(bot: commands.Bot, message: discord.Message) -> list[str]:
    """plancord has slash commands only; text in an agent's channel is for the agent."""
    return []


class AskControls(Protocol):
    """Where the asks' buttons and forms hand a click (``asks.asks.Asks``)."""

    async def decide(
        self, interaction: discord.Interaction[discord.Client], ask_id: str, allow: bool
    ) -> None: ...

    async def answer(
        self, interaction: discord.Interaction[discord.Client], ask_id: str, index: int | None
    ) -> None: ...

    async def remember(
        self,
        interaction: discord.Interaction[discord.Client],
        ask_id: str,
        allow: bool,
        lasts: timedelta | None,
        *,
        confirmed: bool,
    ) -> None: ...

    async def answer_text(
        self, interaction: discord.Interaction[discord.Client], ask_id: str, text: str
    ) -> None: ...


class PlanQuestionControls(Protocol):
    """Where a pick in a plan question's menu goes (``plan_card.answers.PlanAnswering``)."""

    async def answer(
        self,
        interaction: discord.Interaction,
        plan_id: str,
        number: int,
        question: int,
        choice: int,
    ) -> None: ...

    async def redraw(self, plan_id: str, number: int) -> None:
        """Draw the message of plan ``number`` again (a comment arrived, or was resolved)."""
        ...


class Explainer(Protocol):
    """Turns a refusal into the text a member reads (``plan_card.changes.PlanMessages``)."""

    async def explain(self, exc: PlancordError) -> str: ...


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
        self._ask_controls: AskControls | None = None
        self._plan_questions: PlanQuestionControls | None = None
        self._explainer: Explainer | None = None

    def attach(
        self,
        *,
        asks: AskControls,
        plan_questions: PlanQuestionControls,
        explainer: Explainer,
    ) -> None:
        """Hand the client the parts its persistent components reach through it."""
        self._ask_controls = asks
        self._plan_questions = plan_questions
        self._explainer = explainer

    @property
    def app(self) -> App:
        if self._app is None:
            raise RuntimeError("the bot has not finished setting up")
        return self._app

    @property
    def ask_controls(self) -> AskControls:
        if self._ask_controls is None:
            raise RuntimeError("this client cannot answer asks")
        return self._ask_controls

    @property
    def plan_questions(self) -> PlanQuestionControls:
        if self._plan_questions is None:
            raise RuntimeError("this client cannot answer plan questions")
        return self._plan_questions

    async def explain(self, exc: PlancordError) -> str:
        """The text a member reads for a refusal (with links to plans once attached)."""
        if self._explainer is None:
            return str(exc)
        return await self._explainer.explain(exc)


def client_of(interaction: discord.Interaction) -> PlancordClient:
    """The plancord client behind an interaction."""
    client = interaction.client
    if not isinstance(client, PlancordClient):
        raise RuntimeError("plancord's components need a PlancordClient")
    return client
