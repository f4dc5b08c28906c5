"""What the tests of plan questions with choices share: a plan asking which environment
first, and readers of the plan message's menus, its questions field and a private refusal."""

from __future__ import annotations

from typing import Any

import discord

from tests.world import PlanScene

PLAN = {
    "summary": "Deploy the greeting service",
    "steps": [{"description": "Write deploy.sh", "tools": ["create_file"]}],
    "questions": [
        "Anything else I should know?",
        {"question": "Which environment first?", "choices": ["staging", "production"]},
    ],
}
PLAN_V2 = {**PLAN, "summary": "Deploy the greeting service, with a smoke test"}


def menus(scene: PlanScene, message: discord.Message) -> list[dict[str, Any]]:
    """The select menus the simulated Discord holds for a message, as sent."""
    stored = scene.env.backend.messages[message.channel.id][message.id]
    return [c for row in stored.components for c in row["components"] if c["type"] == 3]


def questions_field(message: discord.Message) -> str:
    for embed in message.embeds:
        for field in embed.fields:
            if field.name == "❓ Open questions":
                return str(field.value)
    raise AssertionError("no open questions on the plan message")


def refusal(result: Any) -> str:
    [answer] = result.followups
    assert answer.ephemeral
    return str(answer.content)
