"""The ``FrontEnd`` port on Discord, and where the edge's parts are built. The asks are the
core's (``core.asks``); this front end shows them (``notifier.asks`` is its ``AskCards``).

The plan card (``plan_card``: the plan message, its answers, its restore) and the asks
(``asks``: questions and permission requests) never import each other; this is the one
place that holds both, with the channel I/O they share (``shared.channel_io``: agent text,
tool activity, typing) and the sub-agents' progress lines (``shared.live_lines``). The bot
hands each cog the parts it uses.
"""

from __future__ import annotations

from plancord.core.ports import PlanningChange
from plancord.discord_bot.asks.asks import Asks
from plancord.discord_bot.asks.live import DiscordSignals, LiveAsks
from plancord.discord_bot.asks.permissions import Permissions
from plancord.discord_bot.asks.questions import Questions
from plancord.discord_bot.asks.reposting import AskReposts
from plancord.discord_bot.plan_card.answers import PlanAnswering
from plancord.discord_bot.plan_card.changes import PlanMessages
from plancord.discord_bot.plan_card.message import PlanCards
from plancord.discord_bot.plan_card.reposting import PlanReposts
from plancord.discord_bot.plan_card.restore import PlanRestore
from plancord.discord_bot.result_card.cards import ResultCards
from plancord.discord_bot.shared.channel_io import ChannelIO
from plancord.discord_bot.shared.client import PlancordClient
from plancord.discord_bot.shared.live_lines import LiveLines
from plancord.discord_bot.shared.reposting import CardReposting


class DiscordNotifier:
    def __init__(self, bot: PlancordClient) -> None:
        self.bot = bot
        self.io = ChannelIO(bot)
        self.lines = LiveLines(self.io.destination)
        cards = PlanCards(bot)
        self.cards = cards
        self.plans = PlanMessages(bot, cards)
        self.plan_answers = PlanAnswering(bot, cards)
        self.plan_restore = PlanRestore(bot, cards)
        live = LiveAsks(bot)
        permissions = Permissions(bot, self.io, live)
        self.asks = Asks(bot, live, Questions(bot, self.io, live), permissions)
        self.ask_signals = DiscordSignals(bot)
        self.io.question_waiting = self.asks.waiting
        # The cards the store knows, posted again when deleted: one line per kind of card.
        self.reposting = CardReposting(bot)
        self.reposting.register("plan", PlanReposts(bot, cards))
        self.reposting.register("ask", AskReposts(bot, live, permissions))
        self.results = ResultCards(bot)
        self.reposting.register("result", self.results)

    async def planning_changed(self, change: PlanningChange) -> None:
        await self.plans.planning_changed(change)

    async def plan_reviewed(self, agent: str, plan_id: str, revision: int) -> None:
        """A revision's review was kept: show it on the plan message (``ReviewListener``)."""
        await self.cards.show_review(plan_id, revision)

    async def result_ready(self, agent: str, plan_id: str) -> None:
        """An execution ended: post its completion card (``ResultListener``)."""
        await self.results.result_ready(agent, plan_id)

    async def result_changed(self, agent: str, plan_id: str) -> None:
        await self.results.result_changed(agent, plan_id)

    async def result_recovered(self, agent: str, plan_id: str, text: str) -> None:
        await self.results.result_recovered(agent, plan_id, text)

    async def say(self, agent: str, text: str) -> None:
        await self.io.say(agent, text)

    async def activity(self, agent: str, line: str) -> None:
        await self.io.activity(agent, line)

    async def progress_line(self, agent: str, key: str, line: str, *, final: bool = False) -> None:
        await self.lines.show(agent, key, line, final=final)

    async def restore(self) -> None:
        """After a (re)start: re-attach pending plan messages and asks."""
        await self.plan_restore.restore()
        await self.asks.restore()
        await self.results.restore()
