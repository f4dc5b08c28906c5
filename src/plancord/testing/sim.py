"""The real bot under SimCord, with the model played by the fake Messages API server.

Both the end-to-end tests and ``plancord demo`` run plancord this way: the production
``PlancordBot`` (cogs, views, runtime, SQLite, git workspaces) against SimCord's simulated
Discord, so nothing needs a token or the network.

One thing differs from production, because of how SimCord settles the event loop after
every simulated action: ``DeadlineScheduler.run`` waits with
``asyncio.wait_for(event.wait(), timeout)``, a wait SimCord cannot tell from a hung task, so
no action would ever settle. ``SimDeadlines`` replaces only that wait: the same scheduler's
``run_once`` and ``seconds_until_next`` decide what fires and when, the service's
deadline-changed signal wakes it, and it sleeps inside ``env.external_wait`` so the sleep is
virtual: ``await env.advance_time(s)`` is what brings a deadline due, as wall-clock time would
in production.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import simcord
from discord.ext import commands

from plancord.app.remote_changes import Wait
from plancord.config import Config
from plancord.core.changes import Change
from plancord.core.errors import PlancordError
from plancord.core.scheduler import DeadlineScheduler
from plancord.discord_bot.bot import PlancordBot
from plancord.llm.anthropic_client import AnthropicModelClient
from plancord.process.gc_tuning import GcTuning
from plancord.testing.anthropic_server import FakeAnthropicServer, Script
from plancord.testing.discord_checks import DiscordChecks, install_checks

MODEL = "claude-sonnet-5-5"
PROGRESS_DEBOUNCE_SECONDS = 0.05


class SimClock:
    """The bot's clock is SimCord's virtual clock (real UTC only before an env exists)."""

    def __init__(self) -> None:
        self.env: Any = None

    def now(self) -> datetime:
        if self.env is None:
            return datetime.now(UTC)
        result: datetime = self.env.now()
        return result


class SimDeadlines:
    """Runs ``DeadlineScheduler`` passes with a wait SimCord can park and time can advance."""

    def __init__(self, scheduler: DeadlineScheduler, env: Any) -> None:
        self.scheduler = scheduler
        self.env = env
        self._woken = False
        self._sleeper: asyncio.Task[None] | None = None
        self._task: asyncio.Task[None] | None = None
        scheduler.service.on_deadlines_changed(self.wake)

    def wake(self) -> None:
        self._woken = True
        if self._sleeper is not None and not self._sleeper.done():
            self._sleeper.cancel()

    async def _sleep(self, delay: float) -> None:
        await self.env.external_wait(asyncio.sleep(delay), reason="plancord deadline scheduler")

    async def _run(self) -> None:
        while True:
            self._woken = False
            try:
                await self.scheduler.run_once()
                delay = await self.scheduler.seconds_until_next()
            except PlancordError:
                delay = 5.0
            if self._woken:
                continue
            self._sleeper = asyncio.create_task(self._sleep(delay))
            await asyncio.wait({self._sleeper})

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="plancord-sim-deadlines")

    async def stop(self) -> None:
        for task in (self._sleeper, self._task):
            if task is not None and not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task


class SimPlancordBot(PlancordBot):
    """``PlancordBot`` with the scheduler's wait swapped for ``SimDeadlines``, and a short
    progress debounce: SimCord lets a short timer fire only once its real delay has passed
    and the rest of the bot is idle, so the production second would cost a real second for
    every progress edit."""

    def __init__(self, *args: Any, env_of: Callable[[], Any], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._env_of = env_of
        self.deadlines: SimDeadlines | None = None

    async def setup_hook(self) -> None:
        self.notifier.plans.progress_debounce = PROGRESS_DEBOUNCE_SECONDS
        self.notifier.lines.min_interval = PROGRESS_DEBOUNCE_SECONDS
        await super().setup_hook()

    def make_gc_tuning(self, sleep: Callable[[float], Awaitable[None]] = asyncio.sleep) -> GcTuning:
        env = self._env_of()

        async def external_sleep(delay: float) -> None:
            await env.external_wait(sleep(delay), reason="plancord gc tuning")

        return super().make_gc_tuning(external_sleep)

    async def owed_cards_sleep(self, delay: float) -> None:
        await self._env_of().external_wait(asyncio.sleep(delay), reason="plancord owed cards")

    async def start_change_feed(self, wait: Wait | None = None) -> None:
        # The follower thread is the outside input the feed's task waits on.
        env = self._env_of()

        async def declared(next_batch: Awaitable[list[Change]]) -> list[Change]:
            result: list[Change] = await env.external_wait(next_batch, reason="plancord changes")
            return result

        await super().start_change_feed(wait or declared)

    def start_deadlines(self) -> None:
        self.deadlines = SimDeadlines(self.app.scheduler, self._env_of())
        self.deadlines.start()

    def start_schedules(self) -> None:
        env = self._env_of()

        async def virtual_sleep(delay: float) -> None:
            await env.external_wait(asyncio.sleep(delay), reason="plancord schedules")

        self.app.schedule_loop.sleep = virtual_sleep
        super().start_schedules()

    async def close(self) -> None:
        if self.deadlines is not None:
            await self.deadlines.stop()
        await super().close()


class ShardedSimPlancordBot(SimPlancordBot, commands.AutoShardedBot):
    """The simulated bot serving the share of shards its config names."""


def make_bot(
    config: Config, server: FakeAnthropicServer, clock: SimClock, *, tune_gc: bool = False
) -> PlancordBot:
    """A bot whose model is ``server`` and whose clock is SimCord's (sharded when the config
    names shards). Its garbage collection is left alone unless ``tune_gc``: many bots come
    and go in one test process."""
    kind = ShardedSimPlancordBot if config.discord.sharded else SimPlancordBot
    return kind(
        config,
        model_factory=lambda: AnthropicModelClient(
            api_key="test-key",
            base_url=server.url,
            max_retries=0,
            max_concurrent_requests=config.anthropic.max_concurrent_requests,
        ),
        clock=clock,
        scheduler_max_sleep=24 * 3600,
        env_of=lambda: clock.env,
        tune_gc=tune_gc,
    )


@dataclass
class World:
    """One simulated Discord with the bot logged in, its fake model and its data directory."""

    env: Any
    server: FakeAnthropicServer
    config: Config
    clock: SimClock
    data_dir: Path
    discord_checks: DiscordChecks
    """Discord's limits SimCord leaves unchecked, on every request (``discord_checks``)."""

    @property
    def bot(self) -> PlancordBot:
        bot: PlancordBot = self.env.bot
        return bot

    def new_bot(self) -> PlancordBot:
        return make_bot(self.config, self.server, self.clock)

    async def restart(self) -> PlancordBot:
        """Stop the bot (closing its app, as a process exit would) and start a fresh one over
        the same database and workspaces."""
        await self.env.settle()
        await self.bot.close()
        fresh = self.new_bot()
        await self.env.restart_bot(fresh)
        return fresh

    async def close(self) -> None:
        """Stop the bot, the simulated Discord and the fake model, in that order; all three
        even when the bot does not settle first (whose TimeoutError is raised after)."""
        try:
            await self.env.settle()
        finally:
            await self.env.bot.close()
            await self.env.shutdown()
            await self.server.stop()


async def start_world(
    data_dir: Path,
    script: Script = (),
    *,
    plan_mode: dict[str, Any] | None = None,
    config: dict[str, Any] | None = None,
) -> World:
    """Start the fake model and the bot under SimCord over ``data_dir``; ``World.close`` ends
    it. ``config`` adds sections of the config file (``sandbox``, ``agents``, ...)."""
    settings = Config.model_validate(
        {
            **(config or {}),
            "data_dir": str(data_dir),
            "anthropic": {**(config or {}).get("anthropic", {}), "model": MODEL},
            "plan_mode": plan_mode or {},
        }
    )
    server = await FakeAnthropicServer(script).start()
    clock = SimClock()
    env = simcord.Env(make_bot(settings, server, clock))
    clock.env = env
    checks = install_checks(env)
    try:
        await env.start()
    except BaseException:
        await server.stop()
        raise
    return World(env, server, settings, clock, data_dir, checks)
