"""What the sub-agent tests look at: which requests are a sub-agent's, and each sub-agent's
line in the channel."""

from __future__ import annotations

from typing import Any

import discord

from plancord.agent.subagents.explore import SYSTEM
from tests.world import PlanScene

QUESTION = "Where is the entry point?"


def is_sub_agent(request: dict[str, Any]) -> bool:
    return bool(request["system"][0]["text"] == SYSTEM)


def sub_agent_requests(scene: PlanScene) -> list[dict[str, Any]]:
    return [r for r in scene.world.server.requests if is_sub_agent(r)]


def lines(scene: PlanScene) -> list[discord.Message]:
    """The bot's messages that are a sub-agent's line."""
    return [m for m in scene.bot_messages() if " explore #" in (m.content or "")]


def posts_of_lines(scene: PlanScene) -> list[str]:
    """The content of every message the bot posted as a sub-agent's line."""
    return [
        r.json["content"]
        for r in scene.env.http_requests
        if r.method == "POST"
        and r.path.endswith("/messages")
        and " explore #" in str((r.json or {}).get("content"))
    ]
