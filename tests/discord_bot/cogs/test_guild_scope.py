"""Agents belong to the server they were created in: another server's managers cannot list,
inspect or remove them, and Manage Channels through one channel's overwrite manages
nothing."""

from __future__ import annotations

import discord

from tests.discord_bot.agent_scene import MANAGE_CHANNELS, Scene, SceneFactory
from tests.world import private_answer


async def test_another_server_cannot_see_or_touch_the_agent(scene_factory: SceneFactory) -> None:
    scene: Scene = await scene_factory()
    await scene.ana.slash(scene.lobby, "agent create", name="ada", system_prompt="secret plan")
    other = scene.env.create_guild("other")
    lobby = other.create_text_channel("lobby")
    managers = other.create_role("Managers", permissions=MANAGE_CHANNELS)
    eve = other.add_member(scene.env.create_user("eve"), roles=[managers])

    listed = await eve.slash(lobby, "agent list")
    assert "ada" not in (listed.followups[0].content if listed.followups else "")
    info = await eve.slash(lobby, "agent info", name="ada")
    assert "No agent named **ada** in this server" in info.response.content
    removed = await eve.slash(lobby, "agent remove", name="ada")
    assert "No agent named **ada** in this server" in private_answer(removed).content
    assert [a.name for a in await scene.app.manager.list()] == ["ada"]


async def test_a_channel_overwrite_does_not_grant_agent_management(
    scene_factory: SceneFactory,
) -> None:
    scene: Scene = await scene_factory()
    mallory = scene.guild.add_member(scene.env.create_user("mallory"))
    corner = scene.guild.create_text_channel(
        "corner", overwrites={mallory: discord.PermissionOverwrite(manage_channels=True)}
    )
    created = await mallory.slash(corner, "agent create", name="shell", profile="open")
    assert "server-wide **Manage Channels**" in created.response.content
    assert await scene.app.manager.list() == []


async def test_the_system_prompt_shows_only_to_managers(scene_factory: SceneFactory) -> None:
    scene: Scene = await scene_factory()
    await scene.ana.slash(scene.lobby, "agent create", name="ada", system_prompt="secret plan")
    seen = await scene.bob.slash(scene.lobby, "agent info", name="ada")
    fields = {f.name: f.value for f in seen.response.embeds[0].fields}
    assert "secret plan" not in str(fields)
    managed = await scene.ana.slash(scene.lobby, "agent info", name="ada")
    assert "secret plan" in str({f.name: f.value for f in managed.response.embeds[0].fields})
