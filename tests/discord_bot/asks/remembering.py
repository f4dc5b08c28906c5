"""What the tests of remembered rules share: a scene whose channel asks for shell commands
(``standard`` profile) with an approver (carol, of the ``reviewers`` role), the permission
cards a channel shows, and "Allow always…" clicked through its confirmation."""

from __future__ import annotations

from typing import Any

import discord

from tests.discord_bot.agent_scene import Scene, SceneFactory
from tests.discord_bot.asks.asking import tool_results
from tests.fakes.anthropic_server import ToolCall, text_turn, tool_turn


def shell_script(*commands: str) -> list[Any]:
    turns = [tool_turn(ToolCall("bash_execute", {"command": c})) for c in commands]
    return [*turns, text_turn("Done.")]


async def approver_scene(
    scene_factory: SceneFactory, script: list[Any], **plan_mode: Any
) -> tuple[Scene, Any, Any]:
    """The scene, ada's channel, and carol (an approver); nothing sent yet."""
    scene = await scene_factory(script, plan_mode={"approver_roles": ["reviewers"], **plan_mode})
    reviewers = scene.guild.create_role("reviewers")
    carol = scene.guild.add_member(scene.env.create_user("carol"), roles=[reviewers])
    await scene.world.bot.resolve_role_names()
    channel = await scene.create_agent("ada", profile="standard")
    return scene, channel, carol


def cards(scene: Scene, channel: Any) -> list[discord.Message]:
    """The permission cards the channel shows, oldest first."""
    bot_id = scene.env.bot.user.id
    return [
        m
        for m in channel.history()
        if m.author.id == bot_id and m.embeds and (m.embeds[0].title or "").startswith("🔐")
    ]


def fields_of(scene: Scene, message: Any) -> dict[str, str]:
    return {f["name"]: f["value"] for f in scene.stored(message).embeds[0]["fields"]}


async def remember(member: Any, card: Any, choice: str = "Allow", lasts: str = "always") -> Any:
    """``member`` clicks "<choice> always…" then the confirmation's button; the offer's
    result (its private text names the scope)."""
    offer = await member.click(card, label=f"{choice} always…")
    assert offer.response is not None and offer.response.ephemeral, offer
    label = f"{choice} always" if lasts == "always" else f"{choice} for 1 day"
    await member.click(offer.response, label=label)
    return offer


def result_texts(scene: Scene) -> list[str]:
    """Every tool result the model was sent, in order."""
    texts = []
    for index in range(1, len(scene.server.requests)):
        texts += [str(r["content"]) for r in tool_results(scene, index)]
    return texts
