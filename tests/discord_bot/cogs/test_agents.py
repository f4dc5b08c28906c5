"""``/agent create | list | info | remove`` through the real bot in SimCord."""

from __future__ import annotations

import asyncio

import pytest

from plancord.core.errors import AgentNotFound
from plancord.discord_bot.shared.confirm import NOT_YOURS
from tests.discord_bot.agent_scene import Scene, SceneFactory
from tests.world import private_answer

MODEL = "claude-sonnet-5-5"


@pytest.fixture
async def scene(scene_factory: SceneFactory) -> Scene:
    return await scene_factory()


async def test_create_makes_a_bound_channel_and_a_git_workspace(scene: Scene) -> None:
    result = await scene.ana.slash(
        scene.lobby, "agent create", name="Ada", profile="locked", system_prompt="Be brief."
    )

    assert result.ephemeral
    channel = scene.channel("ada")
    assert channel.id != scene.lobby.id
    assert scene.env.bot.get_channel(channel.id).category_id == scene.category.id
    record = await scene.app.store.get_agent("Ada")
    assert record.channel_id == channel.id
    assert record.permission_profile["preset"] == "locked"
    assert record.system_prompt == "Be brief."
    assert record.model == MODEL
    assert record.created_by is not None and "ana" in record.created_by
    workspace = scene.app.manager.workspace_of("Ada")
    assert f"<#{channel.id}>" in result.response.content
    assert str(workspace) in result.response.content
    git = await asyncio.create_subprocess_exec(
        "git", "-C", str(workspace), "log", "--oneline", stdout=asyncio.subprocess.PIPE
    )
    out, _ = await git.communicate()
    assert git.returncode == 0 and out.strip()
    assert "Agent **Ada** lives here" in scene.bot_texts(channel)[0]


async def test_create_needs_manage_channels(scene: Scene) -> None:
    channels_before = set(scene.guild.channels)

    result = await scene.bob.slash(scene.lobby, "agent create", name="ada")

    assert result.ephemeral
    assert "Manage Channels" in result.response.content
    assert set(scene.guild.channels) == channels_before
    assert await scene.app.manager.list() == []


async def test_create_can_bind_the_current_channel(scene: Scene) -> None:
    channels_before = set(scene.guild.channels)

    result = await scene.ana.slash(scene.lobby, "agent create", name="ada", bind_here=True)

    assert result.ephemeral and result.response.content.startswith("Created agent")
    assert set(scene.guild.channels) == channels_before
    record = await scene.app.store.get_agent("ada")
    assert record.channel_id == scene.lobby.id
    assert record.guild_id == scene.guild.id
    assert "Agent **ada** lives here" in scene.bot_texts(scene.lobby)[-1]


async def test_create_refuses_bad_names_duplicates_and_bound_channels(scene: Scene) -> None:
    channel = await scene.create_agent("ada")
    channels_before = set(scene.guild.channels)

    bad = await scene.ana.slash(scene.lobby, "agent create", name="no spaces!")
    duplicate = await scene.ana.slash(scene.lobby, "agent create", name="ada")
    bound = await scene.ana.slash(channel, "agent create", name="bea", bind_here=True)

    assert bad.ephemeral and "not a valid agent name" in bad.response.content
    assert duplicate.ephemeral and "already exists" in duplicate.response.content
    assert bound.ephemeral and "already bound to agent **ada**" in bound.response.content
    assert set(scene.guild.channels) == channels_before
    assert [a.name for a in await scene.app.manager.list()] == ["ada"]


async def test_list_shows_name_channel_model_phase_and_profile(scene: Scene) -> None:
    ada = await scene.create_agent("ada")
    bea = await scene.create_agent("bea", profile="open", model="claude-other-model")

    result = await scene.bob.slash(scene.lobby, "agent list")

    assert result.ephemeral
    lines = result.response.content.splitlines()
    assert lines == [
        f"**ada** · <#{ada.id}> · `{MODEL}` · inactive · standard",
        f"**bea** · <#{bea.id}> · `claude-other-model` · inactive · open",
    ]


async def test_info_defaults_to_this_channels_agent(scene: Scene) -> None:
    channel = await scene.create_agent("ada", profile="open")

    result = await scene.bob.slash(channel, "agent info")
    elsewhere = await scene.bob.slash(scene.lobby, "agent info")
    named = await scene.bob.slash(scene.lobby, "agent info", name="ada")

    assert result.ephemeral
    embed = result.response.embeds[0]
    fields = {f.name: f.value for f in embed.fields}
    assert embed.title == "Agent ada"
    assert fields["Channel"] == f"<#{channel.id}>"
    assert fields["Model"] == f"`{MODEL}`"
    assert fields["Profile"] == "open"
    assert fields["Role"] == "none"
    assert fields["Phase"] == "inactive"
    assert "Workspace" not in fields  # bob may not manage agents
    assert "ana" in fields["Created"]
    managed = await scene.ana.slash(channel, "agent info")
    shown = {f.name: f.value for f in managed.response.embeds[0].fields}
    assert str(scene.app.manager.workspace_of("ada")) in shown["Workspace"]
    assert elsewhere.ephemeral and "No agent is bound to this channel" in elsewhere.response.content
    assert named.response.embeds[0].title == "Agent ada"


async def test_remove_asks_first_refuses_others_and_keeps_the_workspace(scene: Scene) -> None:
    channel = await scene.create_agent("ada")
    workspace = scene.app.manager.workspace_of("ada")

    prompt = await scene.ana.slash(scene.lobby, "agent remove", name="ada")
    assert not prompt.ephemeral
    assert "workspace is kept" in prompt.response.content

    intruder = await scene.bob.click(prompt.response, label="Remove")
    assert intruder.ephemeral and intruder.response.content == NOT_YOURS
    assert (await scene.app.store.get_agent("ada")).channel_id == channel.id

    await scene.ana.click(prompt.response, label="Remove")

    content = prompt.response.content
    assert "Removed agent **ada**" in content
    assert f"The workspace is kept at `{workspace}`" in content
    assert all(c["disabled"] for row in prompt.response.components for c in row["components"])
    with pytest.raises(AgentNotFound):
        await scene.app.store.get_agent("ada")
    assert (workspace / ".git").is_dir()
    audit = await scene.app.store.list_audit("ada")
    assert audit[-1].action == "agent-removed" and "ana" in audit[-1].actor


async def test_remove_can_be_cancelled_or_left_to_time_out(scene: Scene) -> None:
    await scene.create_agent("ada")

    cancelled = await scene.ana.slash(scene.lobby, "agent remove", name="ada")
    await scene.ana.click(cancelled.response, label="Cancel")
    ignored = await scene.ana.slash(scene.lobby, "agent remove", name="ada")
    await scene.env.advance_time(121)

    assert "Cancelled: nothing was removed." in cancelled.response.content
    assert "Timed out: nothing was removed." in ignored.response.content
    assert all(c["disabled"] for row in ignored.response.components for c in row["components"])
    assert (await scene.app.store.get_agent("ada")).name == "ada"


async def test_remove_needs_manage_channels_and_an_existing_agent(scene: Scene) -> None:
    await scene.create_agent("ada")

    refused = await scene.bob.slash(scene.lobby, "agent remove", name="ada")
    missing = await scene.ana.slash(scene.lobby, "agent remove", name="nobody")

    assert refused.ephemeral and "Manage Channels" in refused.response.content
    answer = private_answer(missing)  # the agent is looked up after a public deferral
    assert "no agent named 'nobody'" in answer.content
    assert "`/agent list` names the agents" in answer.content
    assert (await scene.app.store.get_agent("ada")).name == "ada"
