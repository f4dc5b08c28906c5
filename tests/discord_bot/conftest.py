"""The real bot (cogs, views, runtime, SQLite in tmp_path, git workspaces) driven through
SimCord, with the model played by the fake Messages API server.

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
import re
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import discord
import pytest
import simcord

from plancord.app import App
from plancord.config import Config
from plancord.core.errors import PlancordError
from plancord.core.planning import Actor, PlanningState
from plancord.core.scheduler import DeadlineScheduler
from plancord.discord_bot.bot import PlancordBot
from plancord.llm.anthropic_client import AnthropicModelClient
from plancord.storage.plan_messages import PlanMessageRecord, PlanMessageStore
from tests.fakes.anthropic_server import FakeAnthropicServer, Script

MODEL = "claude-fake-test-model"
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
        await super().setup_hook()
        await self.app.scheduler.stop()
        self.deadlines = SimDeadlines(self.app.scheduler, self._env_of())
        self.deadlines.start()

    async def close(self) -> None:
        if self.deadlines is not None:
            await self.deadlines.stop()
        await super().close()


@dataclass
class World:
    env: Any
    server: FakeAnthropicServer
    config: Config
    clock: SimClock
    data_dir: Path

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


def make_bot(config: Config, server: FakeAnthropicServer, clock: SimClock) -> PlancordBot:
    return SimPlancordBot(
        config,
        model_factory=lambda: AnthropicModelClient(
            api_key="test-key", base_url=server.url, max_retries=0
        ),
        clock=clock,
        scheduler_max_sleep=24 * 3600,
        env_of=lambda: clock.env,
    )


@pytest.fixture
async def world_factory(tmp_path: Path) -> AsyncIterator[Callable[..., Any]]:
    """``world = await world_factory(script, plan_mode={...})``; torn down after the test."""
    servers: list[FakeAnthropicServer] = []
    envs: list[Any] = []

    async def make(script: Script = (), *, plan_mode: dict[str, Any] | None = None) -> World:
        server = await FakeAnthropicServer(script).start()
        servers.append(server)
        config = Config.model_validate(
            {
                "data_dir": str(tmp_path / "data"),
                "anthropic": {"model": MODEL},
                "plan_mode": plan_mode or {},
            }
        )
        clock = SimClock()
        env = simcord.Env(make_bot(config, server, clock))
        clock.env = env
        await env.start()
        envs.append(env)
        return World(env, server, config, clock, tmp_path / "data")

    yield make
    for env in reversed(envs):
        await env.settle()
        await env.bot.close()
        await env.shutdown()
    for server in servers:
        await server.stop()
    for env in envs:
        env.raise_errors()


# -- plan-mode scenes ----------------------------------------------------------------------


@dataclass
class PlanScene:
    """A guild with the agent ``ada`` bound to ``#ada``; ana asks for plans, bob is a
    bystander, and ``boss`` is a server administrator."""

    world: World
    guild: Any
    channel: Any
    ana: Any
    bob: Any
    boss: Any

    @property
    def env(self) -> Any:
        return self.world.env

    @property
    def app(self) -> App:
        return self.world.bot.app

    def bot_messages(self, channel: Any = None) -> list[discord.Message]:
        bot_id = self.env.bot.user.id
        return [m for m in (channel or self.channel).history() if m.author.id == bot_id]

    def bot_texts(self) -> list[str]:
        return [m.content for m in self.bot_messages() if m.content]

    def plan_messages(self) -> list[discord.Message]:
        return [
            m
            for m in self.bot_messages()
            if m.embeds and (m.embeds[0].title or "").startswith("Plan: ")
        ]

    def plan_message(self, revision: int | None = None) -> discord.Message:
        """The newest plan message (of ``revision`` when given), as the channel shows it now."""
        for message in reversed(self.plan_messages()):
            footer = message.embeds[-1].footer.text or ""
            if revision is None or footer.startswith(f"v{revision} "):
                return message
        raise AssertionError(f"no plan message for v{revision} in {self.bot_texts()}")

    def progress_message(self) -> discord.Message:
        found = [
            m
            for m in self.bot_messages()
            if m.embeds
            and re.match(
                r"(Executing plan|Plan v\d+ (complete|cancelled))", m.embeds[0].title or ""
            )
        ]
        assert found, f"no progress message in {self.bot_texts()}"
        return found[-1]

    async def record(self, plan_id: str, revision: int) -> PlanMessageRecord:
        found = await PlanMessageStore(self.app.db).get(plan_id, revision)
        assert found is not None, f"no plan message stored for {plan_id} v{revision}"
        return found

    def pinged(self, message: discord.Message) -> list[int]:
        """Who the simulated Discord actually notified for a message."""
        return list(self.env.backend.messages[message.channel.id][message.id].ping_user_ids)

    def patches(self, message_id: int) -> list[Any]:
        """The JSON of every edit the bot sent for one message, oldest first."""
        return [
            r.json
            for r in self.env.http_requests
            if r.method == "PATCH" and r.path.endswith(f"/messages/{message_id}")
        ]

    async def audit(self) -> list[tuple[str, str]]:
        return [(a.action, a.actor) for a in await self.app.store.list_audit("ada")]

    async def state(self) -> PlanningState:
        return await self.app.store.load_state("ada")

    async def restart(self) -> None:
        await self.world.restart()


def buttons(message: discord.Message) -> dict[str, bool]:
    """Label → enabled, for every button on a message."""
    found: dict[str, bool] = {}
    for row in message.components:
        for item in getattr(row, "children", ()):
            if isinstance(item, discord.Button) and item.label:
                found[item.label] = not item.disabled
    return found


@pytest.fixture
async def plan_scene(world_factory: Callable[..., Any]) -> Callable[..., Any]:
    """``scene = await plan_scene(script, plan_mode={...})``."""

    async def make(script: Script = (), **options: Any) -> PlanScene:
        world: World = await world_factory(script, **options)
        env = world.env
        guild = env.create_guild("plancord")
        channel = guild.create_text_channel("ada")
        admins = guild.create_role("Admins", permissions=discord.Permissions(administrator=True))
        ana = guild.add_member(env.create_user("ana"))
        bob = guild.add_member(env.create_user("bob"))
        boss = guild.add_member(env.create_user("boss"), roles=[admins])
        await world.bot.app.manager.create(
            "ada",
            actor=Actor.user(ana.id, "ana"),
            channel_id=channel.id,
            guild_id=guild.id,
            profile="open",
        )
        return PlanScene(world, guild, channel, ana, bob, boss)

    return make
