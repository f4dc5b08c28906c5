"""A process serving a share of the application's shards, over a shared PostgreSQL store:
the sharded client connects only its shards, so it runs the agents of their guilds and
never hears the others' messages."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from discord.ext import commands

from plancord.core.planning import Actor
from tests.fakes.anthropic_server import text_turn


async def test_a_process_runs_only_the_agents_of_its_shards(
    world_factory: Callable[..., Any], postgres_url: str
) -> None:
    world = await world_factory(
        [text_turn("Hello from shard 1.")],
        config={"database": postgres_url, "discord": {"shard_count": 2, "shard_ids": [1]}},
    )
    bot = world.bot
    assert isinstance(bot, commands.AutoShardedBot)
    assert (bot.shard_count, bot.shard_ids) == (2, [1])
    env = world.env
    ours = env.create_guild("ours", shard_id=1)
    theirs = env.create_guild("theirs", shard_id=0)
    ana = env.create_user("ana")
    channels = {}
    for name, guild in (("ada", ours), ("bea", theirs)):
        member = guild.add_member(ana)
        channels[name] = (guild.create_text_channel(name), member)
        await bot.app.manager.create(
            name,
            actor=Actor.user(ana.id, "ana"),
            channel_id=channels[name][0].id,
            guild_id=guild.id,
            profile="open",
        )

    channel, member = channels["bea"]
    await member.send(channel, "are you there?")
    await env.settle()
    assert world.server.requests == []
    assert not bot.app.runtime.is_busy("bea")

    channel, member = channels["ada"]
    await member.send(channel, "are you there?")
    await asyncio.wait_for(bot.app.runtime.wait_idle("ada"), 20)
    assert len(world.server.requests) == 1
    assert "Hello from shard 1." in [m.content for m in channel.history()]
    assert await bot.app.store.find_agent_by_channel(channels["bea"][0].id) is not None
