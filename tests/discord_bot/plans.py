"""The plans the Discord tests submit and the checks their cards must pass: the two
revisions of the greeting plan, a scene where that plan waits for a decision, a fifty-step
plan near the size limit, and every Discord embed limit."""

from __future__ import annotations

from typing import Any

import discord

from plancord.core.plan import Plan, validate_plan
from plancord.core.planning import Phase
from plancord.discord_bot.shared.embed_basics import embed_size, size
from tests.fakes.anthropic_server import ToolCall, tool_turn
from tests.world import PlanScene


def assert_within_limits(embeds: list[discord.Embed]) -> None:
    assert 1 <= len(embeds) <= 10
    total = 0
    for embed in embeds:
        assert size(embed.title or "") <= 256
        assert size(embed.description or "") <= 4096
        assert len(embed.fields) <= 25
        for item in embed.fields:
            assert item.name and item.name.strip() and size(item.name) <= 256
            assert item.value and item.value.strip() and size(item.value) <= 1024
        assert size(embed.footer.text or "") <= 2048
        assert len(embed) <= 6000
        total += embed_size(embed)
        discord.Embed.from_dict(embed.to_dict())
    assert total <= 6000
    assert sum(len(e) for e in embeds) <= 6000


def fifty_step_plan() -> Plan:
    steps = [
        {
            "description": (f"Step {i}: update module_{i}.py so that " + "x" * 200)[:96],
            "tools": ["str_replace"],
            "risk": ["low", "medium", "high"][i % 3],
        }
        for i in range(1, 51)
    ]
    return validate_plan(
        {
            "summary": "Refactor the storage layer into fifty small, reviewable steps",
            "steps": steps,
            "questions": ["Keep the old API for one release?", "Run the migrations online?"],
            "context_notes": "Found while exploring: " + "n" * 300,
        }
    )


PLAN = {
    "summary": "Add a greeting module",
    "steps": [
        {"description": "Create greet.py with hello()", "tools": ["create_file"], "risk": "low"},
        {"description": "Commit it", "tools": ["git_commit"], "risk": "medium"},
    ],
    "questions": ["Should hello() take a name?"],
    "context_notes": "The workspace holds only the initial commit.",
}


PLAN_V2 = {
    **PLAN,
    "summary": "Add a greeting module with a name",
    "steps": [
        {
            "description": "Create greet.py with hello(name)",
            "tools": ["create_file"],
            "risk": "low",
        },
        {"description": "Commit it", "tools": ["git_commit"], "risk": "medium"},
    ],
}


ALL_BUTTONS = {
    "Approve": True,
    "Edit": True,
    "Reject": True,
    "Approve, fresh context": True,
    "Approve, confirm each edit": True,
    "Edit directly": True,
    "Comment": True,
}


async def submitted(plan_scene: Any, *after: Any, **options: Any) -> PlanScene:
    """A scene where ana ran ``/plan start`` and ada submitted ``PLAN`` as v1."""
    return await submitted_plan(plan_scene, PLAN, *after, **options)


async def submitted_plan(
    plan_scene: Any, plan: dict[str, Any], *after: Any, **options: Any
) -> PlanScene:
    scene: PlanScene = await plan_scene(
        [tool_turn(ToolCall("submit_plan", {"plan": plan})), *after], **options
    )
    await scene.ana.slash(scene.channel, "plan start", task="add a greeting module")
    assert (await scene.state()).phase is Phase.SUBMITTED
    return scene
