"""The ``Notifier`` port on Discord.

Two parts share the work: ``PlanMessages`` renders plan-mode changes (the plan embed with its
buttons, decisions, supersession, timeouts, execution progress), and ``ChannelIO`` carries the
conversation (agent text, tool activity, questions and permission requests).
"""

from __future__ import annotations

from plancord.core.ports import PermissionRequest, PlanningChange, Question
from plancord.discord_bot.asks import Asks
from plancord.discord_bot.channel_io import ChannelIO
from plancord.discord_bot.client import PlancordClient
from plancord.discord_bot.plan_messages import PlanMessages


class DiscordNotifier:
    def __init__(self, bot: PlancordClient) -> None:
        self.bot = bot
        self.plans = PlanMessages(bot)
        self.io = ChannelIO(bot)
        self.asks = Asks(bot, self.io)
        self.io.question_waiting = self.asks.waiting

    async def planning_changed(self, change: PlanningChange) -> None:
        await self.plans.planning_changed(change)

    async def say(self, agent: str, text: str) -> None:
        await self.io.say(agent, text)

    async def activity(self, agent: str, line: str) -> None:
        await self.io.activity(agent, line)

    async def ask_user(self, question: Question) -> str | None:
        return await self.asks.ask_user(question)

    async def ask_permission(self, request: PermissionRequest) -> bool | None:
        return await self.asks.ask_permission(request)

    async def restore(self) -> None:
        """After a (re)start: re-attach pending plan messages and asks."""
        await self.plans.restore()
        await self.asks.restore()
