"""The Discord bot: a ``commands.Bot`` that opens the app before it logs in (``open_app``,
which ``plancord run`` calls first: ``serving``), and whose ``setup_hook`` loads the cogs,
registers the persistent buttons, starts the deadline scheduler, re-attaches whatever was
waiting for a human when the bot last stopped, and then freezes what startup built out of
the garbage collector's way (``GcTuning``)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import discord
from discord.ext import commands

from plancord.app import App
from plancord.app.remote_changes import Wait, plain_wait
from plancord.config import Config
from plancord.core.ports import Clock, ModelClient
from plancord.core.roles import RoleNames
from plancord.discord_bot.asks.live import MARK_ASK_CARD, mark_owed_card
from plancord.discord_bot.notifier import DiscordNotifier
from plancord.discord_bot.shared.client import PlancordClient
from plancord.discord_bot.shared.members import DiscordMembers
from plancord.process.gc_tuning import GcTuning

log = logging.getLogger(__name__)
#: How long a shutdown waits for the progress lines to show their last text.
LINES_SETTLE_SECONDS = 5.0


def count_failed_requests(http: Any, failed: Callable[[str, str, str], None]) -> None:
    """Count every Discord REST request that fails (by method, route template and status)
    before its error goes on to the caller as before."""
    request = http.request

    async def counted(route: discord.http.Route, **kwargs: Any) -> Any:
        try:
            return await request(route, **kwargs)
        except discord.HTTPException as exc:
            failed(route.method, route.path, str(exc.status))
            raise
        except (TimeoutError, OSError):
            failed(route.method, route.path, "unreachable")
            raise

    http.request = counted


class PlancordBot(PlancordClient):
    def __init__(
        self,
        config: Config,
        *,
        model_factory: Callable[[], ModelClient],
        clock: Clock | None = None,
        scheduler_max_sleep: float = 60.0,
        tune_gc: bool = True,
    ) -> None:
        super().__init__(config)
        self.model_factory = model_factory
        self.clock = clock
        self.scheduler_max_sleep = scheduler_max_sleep
        self.notifier = DiscordNotifier(self)
        self.attach(
            asks=self.notifier.asks,
            plan_questions=self.notifier.plan_answers,
            explainer=self.notifier.plans,
        )
        self.tune_gc = tune_gc
        self.gc_tuning: GcTuning | None = None
        self.setup_begun = False
        """Whether Discord accepted the login and the setup after it has started."""
        self.discord_connected = False
        """Whether the gateway is connected now (the ``plancord_discord_connected`` gauge)."""

    async def open_app(self) -> App:
        """Open (and migrate) the database and start what needs no Discord (the metrics
        endpoint); once, whether ``plancord run`` calls it before the login or the setup
        after it does."""
        if self._app is None:
            app = await App.open(
                self.config,
                notifier=self.notifier,
                members=DiscordMembers(self),
                model=self.model_factory(),
                clock=self.clock,
                scheduler_max_sleep=self.scheduler_max_sleep,
            )
            app.runtime.turn_origin = self._turn_origin
            app.ask_service.attach(self.notifier.asks, self.notifier.ask_signals)
            if app.metrics is not None:
                collector = app.metrics.collector
                count_failed_requests(self.http, collector.discord_failed)
                collector.discord_connected = lambda: self.discord_connected
            self._app = app
        return self._app

    async def setup_hook(self) -> None:
        from plancord.discord_bot.asks.permission_card import ASK_BUTTONS
        from plancord.discord_bot.asks.question_card import QUESTION_CONTROLS
        from plancord.discord_bot.asks.remember import REMEMBER_BUTTONS
        from plancord.discord_bot.cogs.agents import AgentCog
        from plancord.discord_bot.cogs.messages import MessageCog
        from plancord.discord_bot.cogs.plan import PlanCog
        from plancord.discord_bot.cogs.schedules import ScheduleCog
        from plancord.discord_bot.plan_card.answer_menu import ANSWER_CONTROLS
        from plancord.discord_bot.plan_card.buttons import PLAN_BUTTONS
        from plancord.discord_bot.plan_card.comments import COMMENT_BUTTONS
        from plancord.discord_bot.plan_card.direct_edit import DIRECT_EDIT_BUTTONS
        from plancord.discord_bot.plan_card.review import REVIEW_BUTTONS
        from plancord.discord_bot.result_card.buttons import RESULT_CONTROLS
        from plancord.discord_bot.shared.why import WHY_CONTROLS

        self.setup_begun = True
        await self.open_app()
        await self.add_cog(PlanCog(self, self.notifier.io))
        await self.add_cog(AgentCog(self, self.notifier.io))
        await self.add_cog(MessageCog(self, self.notifier.io, self.notifier.asks))
        await self.add_cog(ScheduleCog(self))
        self.add_dynamic_items(
            *PLAN_BUTTONS,
            *DIRECT_EDIT_BUTTONS,
            *COMMENT_BUTTONS,
            *REVIEW_BUTTONS,
            *ANSWER_CONTROLS,
            *ASK_BUTTONS,
            *REMEMBER_BUTTONS,
            *QUESTION_CONTROLS,
            *RESULT_CONTROLS,
            *WHY_CONTROLS,
        )
        await self.sync_commands()
        # Before the cards are restored from the store: a decision made elsewhere meanwhile
        # is heard, not missed.
        await self.start_change_feed()
        self.start_deadlines()
        self.start_schedules()
        # Approvals and decisions on results a crash interrupted first, so the cards
        # restored show them.
        await self.app.recover_interrupted()
        await self.notifier.restore()
        self.notifier.results.owed.start(self.owed_cards_sleep)
        if self.app.owed is not None:  # the writes owed until they land (``agent.owed``)
            self.app.owed.handle(MARK_ASK_CARD, mark_owed_card(self))
            self.app.owed.start(self.owed_cards_sleep)
        for agent in await self.app.runtime.resume_interrupted():
            self.notifier.io.watch_turn(agent)
        if self.tune_gc:
            self.gc_tuning = self.make_gc_tuning()
            self.gc_tuning.after_startup()
            self.gc_tuning.start()

    def _turn_origin(self, agent: str, origin: object) -> None:
        if isinstance(origin, discord.abc.Messageable):
            self.notifier.io.note_origin(agent, origin)

    async def on_ready(self) -> None:
        self.discord_connected = True
        await self.resolve_role_names()

    async def on_connect(self) -> None:
        self.discord_connected = True

    async def on_resumed(self) -> None:
        self.discord_connected = True

    async def on_disconnect(self) -> None:
        self.discord_connected = False

    # A card the store knows (a plan waiting for a decision, an ask) that someone deletes is
    # posted again at once (``shared.reposting``).
    async def on_raw_message_delete(self, payload: discord.RawMessageDeleteEvent) -> None:
        await self.notifier.reposting.deleted(
            payload.guild_id, payload.channel_id, [payload.message_id], bulk=False
        )

    async def on_raw_bulk_message_delete(self, payload: discord.RawBulkMessageDeleteEvent) -> None:
        await self.notifier.reposting.deleted(
            payload.guild_id, payload.channel_id, sorted(payload.message_ids), bulk=True
        )

    # The config's role names follow the servers (plancord.core.roles): re-resolved whenever
    # the bot joins a server or a role is created, renamed or deleted.
    async def on_guild_join(self, guild: discord.Guild) -> None:
        await self.resolve_role_names()

    async def on_guild_role_create(self, role: discord.Role) -> None:
        await self.resolve_role_names()

    async def on_guild_role_update(self, before: discord.Role, after: discord.Role) -> None:
        await self.resolve_role_names()

    async def on_guild_role_delete(self, role: discord.Role) -> None:
        await self.resolve_role_names()

    async def resolve_role_names(self) -> None:
        """Resolve the config's role names to role ids against the servers as they are now;
        a name matching no role or several is logged once as a config error and grants
        nothing."""
        names = await self.app.settings.role_names_used()
        roles = [(str(role.id), role.name) for guild in self.guilds for role in guild.roles]
        resolved = RoleNames.resolve(names, roles)
        before = self.app.settings.role_names
        for problem in resolved.problems_since(before):
            log.error("%s", problem)
        for change in resolved.changes_since(before):
            log.info("%s", change)
        self.app.settings.resolve_roles(resolved)

    def make_gc_tuning(self, sleep: Callable[[float], Awaitable[None]] = asyncio.sleep) -> GcTuning:
        return GcTuning(idle=lambda: not self.app.runtime.any_busy(), sleep=sleep)

    async def owed_cards_sleep(self, delay: float) -> None:
        """The wait between two passes over the completion cards still to post."""
        await asyncio.sleep(delay)

    async def start_change_feed(self, wait: Wait | None = None) -> None:
        """Follow the decisions other processes make (``app.remote_changes``)."""
        changes = self.app.changes
        if changes is None:
            return
        changes.on_result_opened(self.notifier.results.owed.wake)
        await changes.feed.prune()
        await changes.start(wait or plain_wait)

    def start_deadlines(self) -> None:
        """Start the deadline scheduler, whose first pass fires what fell due while down."""
        self.app.scheduler.start()

    def start_schedules(self) -> None:
        """Start the schedules' loop, whose first pass finds the runs missed while down."""
        self.app.schedule_loop.start()

    async def sync_commands(self) -> None:
        """Sync to ``discord.dev_guild_id`` when set (instant), otherwise globally."""
        guild_id = self.config.discord.dev_guild_id
        if guild_id is not None:
            guild = discord.Object(id=guild_id)
            self.tree.copy_global_to(guild=guild)
            await self.tree.sync(guild=guild)
        else:
            await self.tree.sync()

    async def close(self) -> None:
        if self.gc_tuning is not None:
            await self.gc_tuning.stop()
        await self.notifier.results.owed.stop()
        try:
            if self._app is not None:
                await self.app.close()
                self._app = None
                # The sub-agents the shutdown ended have said so on their lines: show it.
                await self.notifier.lines.settle(LINES_SETTLE_SECONDS)
        finally:
            self.discord_connected = False
            await super().close()


class ShardedPlancordBot(PlancordBot, commands.AutoShardedBot):
    """The bot serving a share of the application's shards (``discord.shard_count`` and
    ``discord.shard_ids``): discord.py's sharded client with the same setup."""


def make_bot(config: Config, *, model_factory: Callable[[], ModelClient]) -> PlancordBot:
    """The bot the config asks for: sharded when it names shards."""
    kind = ShardedPlancordBot if config.discord.sharded else PlancordBot
    return kind(config, model_factory=model_factory)
