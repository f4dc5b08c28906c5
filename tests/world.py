"""The one builder of the worlds the Discord, end-to-end and security tests run in: the real
bot under SimCord over a data directory, with the model played by the fake Messages API
(``plancord.testing.sim.start_world``), and the people and channels of a plan-mode scene.

``Worlds`` starts worlds for one test and, when the test ends, closes them and checks what
every such test must leave true: SimCord saw no error in the bot's handlers, the fake
refused no request (a test that means the fake to refuse something clears
``server.rejections`` after checking them), and the bot sent Discord nothing past its limits
(``discord_checks.refusals``, cleared the same way by a test that means it).

A world's SQLite file starts as a copy of the worker's migrated one (``migrated_sqlite`` in
the conftest): migrating a new file costs a few hundred milliseconds of synced writes, and
the migrations have tests of their own (``tests/storage``). A world whose config names a
database migrates that one itself.
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import discord

from plancord.app import App
from plancord.core.planning import Actor, PlanningState
from plancord.storage.plan_messages import PlanMessageRecord, PlanMessageStore
from plancord.testing.anthropic_server import Script
from plancord.testing.sim import World, start_world

#: How long SimCord's settle may wait for the bot, in real time. A settle returns as soon as
#: the bot has nothing left but recognised waits, so this costs nothing where the bot is
#: quick; it is long so a loaded machine (real git, real sandboxes, two test workers) slows
#: a test down instead of failing it.
PATIENT_SETTLE_SECONDS = 60.0


class Worlds:
    """The worlds of one test, all over one data directory (a restart keeps it), each with a
    patient settle."""

    def __init__(self, data_dir: Path, migrated: Path) -> None:
        self.data_dir = data_dir
        self._migrated = migrated
        self._started: list[World] = []

    def _place_database(self, config: dict[str, Any] | None) -> None:
        database = self.data_dir / "plancord.db"
        if database.exists() or (config or {}).get("database") is not None:
            return
        self.data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        shutil.copyfile(self._migrated, database)
        database.chmod(0o600)

    async def start(
        self,
        script: Script = (),
        *,
        plan_mode: dict[str, Any] | None = None,
        config: dict[str, Any] | None = None,
    ) -> World:
        self._place_database(config)
        world = await start_world(self.data_dir, script, plan_mode=plan_mode, config=config)
        world.env.settle_timeout = PATIENT_SETTLE_SECONDS
        self._started.append(world)
        return world

    async def close(self) -> None:
        """Close every world, newest first, then check each one's errors and rejections."""
        for world in reversed(self._started):
            await world.close()
        for world in self._started:
            world.env.raise_errors()
        for world in self._started:
            assert world.server.rejections == [], "the fake Messages API refused a request"
        for world in self._started:
            refused = world.discord_checks.refusals
            assert refused == [], f"Discord would refuse what the bot sent: {refused}"


# -- the plan-mode scene -------------------------------------------------------------------


@dataclass
class PlanScene:
    """A guild with an agent (``ada`` unless told otherwise) bound to its channel; ana asks
    for plans, bob is a bystander, and ``boss`` is a server administrator."""

    world: World
    guild: Any
    channel: Any
    ana: Any
    bob: Any
    boss: Any
    agent: str = "ada"

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
        return [(a.action, a.actor) for a in await self.app.store.list_audit(self.agent)]

    async def state(self) -> PlanningState:
        return await self.app.store.load_state(self.agent)

    async def restart(self) -> None:
        await self.world.restart()


async def plan_scene_in(world: World, *, guild: str = "plancord", agent: str = "ada") -> PlanScene:
    """Populate ``world``: a guild, ``#<agent>`` bound to the agent (created by ana, with the
    ``open`` permission profile), ana, bob, and boss with an administrator role."""
    env = world.env
    server = env.create_guild(guild)
    channel = server.create_text_channel(agent)
    admins = server.create_role("Admins", permissions=discord.Permissions(administrator=True))
    ana = server.add_member(env.create_user("ana"))
    bob = server.add_member(env.create_user("bob"))
    boss = server.add_member(env.create_user("boss"), roles=[admins])
    await world.bot.app.manager.create(
        agent,
        actor=Actor.user(ana.id, "ana"),
        channel_id=channel.id,
        guild_id=server.id,
        profile="open",
    )
    return PlanScene(world, server, channel, ana, bob, boss, agent)


def buttons(message: discord.Message) -> dict[str, bool]:
    """Label → enabled, for every button on a message."""
    found: dict[str, bool] = {}
    for row in message.components:
        for item in getattr(row, "children", ()):
            if isinstance(item, discord.Button) and item.label:
                found[item.label] = not item.disabled
    return found


def private_answer(result: Any) -> Any:
    """The answer to a publicly deferred command that only its invoker sees: the public
    placeholder is gone and the one followup is ephemeral."""
    assert result.response is None, f"the public placeholder is still there: {result.response}"
    [answer] = result.followups
    assert answer.ephemeral
    return answer
