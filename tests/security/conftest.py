"""The ``hostile`` fixture: the world of ``hostile.py`` built on ``tests.world``, so it is
closed and checked like every other world (no SimCord error, no request the fake refused).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import discord
import pytest

from plancord.core.planning import Actor
from plancord.demo import host_plan_mode, seed_workspace
from plancord.testing.anthropic_server import Script
from tests.security.hostile import (
    FAKE_API_KEY,
    FAKE_DISCORD_TOKEN,
    FILE_SECRET,
    OTHER_SECRET,
    Hostile,
)
from tests.world import Worlds


@pytest.fixture
async def hostile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, worlds: Worlds
) -> Callable[..., Any]:
    """``scene = await hostile(script, profile=..., plan_mode=..., config=...)``."""
    monkeypatch.setenv("DISCORD_TOKEN", FAKE_DISCORD_TOKEN)
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_API_KEY)

    async def make(
        script: Script,
        *,
        profile: str = "standard",
        plan_mode: dict[str, Any] | None = None,
        config: dict[str, Any] | None = None,
    ) -> Hostile:
        secret_file = tmp_path / "run-secrets" / "discord_token"
        secret_file.parent.mkdir()
        secret_file.write_text(FILE_SECRET)
        world = await worlds.start(
            script, plan_mode=host_plan_mode(**(plan_mode or {})), config=config
        )
        env = world.env
        guild = env.create_guild("hostile")
        channel = guild.create_text_channel("ada")
        other_channel = guild.create_text_channel("other")
        admins = guild.create_role("Admins", permissions=discord.Permissions(administrator=True))
        ana = guild.add_member(env.create_user("ana"), roles=[admins])
        app = world.bot.app
        actor = Actor.user(ana.id, "ana")
        for name, where in (("ada", channel), ("other", other_channel)):
            await app.manager.create(
                name, actor=actor, channel_id=where.id, guild_id=guild.id, profile=profile
            )
        await seed_workspace(app.manager.workspace_of("ada"))
        (app.manager.workspace_of("other") / "notes.txt").write_text(OTHER_SECRET)
        return Hostile(world, guild, channel, ana, worlds.data_dir, secret_file)

    return make
