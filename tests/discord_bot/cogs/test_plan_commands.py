"""``/plan`` from a keyboard or a phone: status in every phase, cancel, the slash
equivalents of the plan buttons, ``/plan start`` while planning, and readable refusals."""

from __future__ import annotations

import re
from typing import Any

import discord

from plancord.core.planning import ApprovalMode, Phase
from plancord.discord_bot.shared.common import NO_AGENT
from tests.discord_bot.plans import PLAN, PLAN_V2, submitted
from tests.fakes.anthropic_server import ToolCall, text_turn, tool_turn
from tests.world import PlanScene, buttons, private_answer

RELATIVE = re.compile(r"^<t:\d+:R>$")


def fields(embed: discord.Embed) -> dict[str, str]:
    return {f.name or "": f.value or "" for f in embed.fields}


async def status_of(scene: PlanScene) -> dict[str, str]:
    result = await scene.ana.slash(scene.channel, "plan status")
    assert result.ephemeral
    embed = result.response.embeds[0]
    assert embed.title == "Plan mode · ada"
    return fields(embed)


async def test_status_in_every_phase(plan_scene: Any) -> None:
    scene: PlanScene = await plan_scene(
        [
            text_turn("Looking around first."),
            tool_turn(ToolCall("submit_plan", {"plan": PLAN})),
            tool_turn(ToolCall("update_plan_step", {"step": 1, "status": "done"})),
            text_turn("Step 1 is done."),
        ]
    )

    inactive = await status_of(scene)
    assert inactive == {"Phase": "not in plan mode"}

    await scene.ana.slash(scene.channel, "plan start", task="add a greeting module")
    gathering = await status_of(scene)
    assert gathering["Phase"].startswith("gathering")
    assert RELATIVE.match(gathering["Since"])
    assert gathering["Requested by"] == "ana"
    assert gathering["Task"] == "add a greeting module"
    assert RELATIVE.match(gathering["Idle deadline"])
    assert "Plan" not in gathering

    await scene.ana.send(scene.channel, "go ahead and submit")
    assert (await scene.state()).phase is Phase.SUBMITTED
    waiting = await status_of(scene)
    revision = await scene.app.planning.current_revision("ada")
    assert revision is not None
    assert waiting["Phase"].startswith("submitted")
    assert waiting["Plan"] == f"v1 · `{revision.sha8}` — Add a greeting module"
    assert RELATIVE.match(waiting["Approval deadline"])
    assert "Idle deadline" not in waiting

    await scene.ana.slash(scene.channel, "plan approve")
    executing = await status_of(scene)
    assert executing["Phase"] == "executing the approved plan"
    assert re.match(r"^by ana <t:\d+:R>$", executing["Approved"])
    assert executing["Progress"] == (
        "1/2 done\n✅ 1. Create greet.py with hello()\n⬜ 2. Commit it"
    )
    assert "Approval deadline" not in executing

    await scene.ana.slash(scene.channel, "plan cancel")
    ended = await status_of(scene)
    # The cancelled execution's result waits for Merge or Discard on its completion card.
    assert ended.pop("Result waiting for a decision").startswith("Plan v1 ran on `plancord/")
    assert ended == {"Phase": "not in plan mode"}


async def test_start_while_planning_changes_nothing_and_shows_the_status(plan_scene: Any) -> None:
    scene = await submitted(plan_scene)
    audit = await scene.audit()
    requests = len(scene.world.server.requests)

    again = await scene.ana.slash(scene.channel, "plan start", task="something else")

    answer = private_answer(again)
    assert answer.content == "**ada** is already in plan mode; nothing changed."
    assert fields(answer.embeds[0])["Task"] == "add a greeting module"
    assert await scene.audit() == audit
    assert len(scene.world.server.requests) == requests


async def test_cancel_by_the_requester_not_by_a_stranger(plan_scene: Any) -> None:
    scene = await submitted(plan_scene)
    state = await scene.state()

    refused = await scene.bob.slash(scene.channel, "plan cancel")
    assert refused.ephemeral
    assert refused.response.content == (
        "Only the requester (ana) or server administrators can cancel this plan."
    )
    assert await scene.state() == state

    done = await scene.ana.slash(scene.channel, "plan cancel")
    assert done.ephemeral
    assert done.response.content == "Cancelled plan mode for **ada**."
    assert (await scene.state()).phase is Phase.INACTIVE
    assert "🚫 Planning for **ada** was cancelled by ana. Nothing was changed." in (
        scene.bot_texts()
    )
    message = scene.plan_message(1)
    assert not any(buttons(message).values())
    assert (message.embeds[0].description or "").startswith("🚫 **Cancelled** by ana")

    nothing = await scene.ana.slash(scene.channel, "plan cancel")
    assert nothing.response.content == (
        "Cannot cancel: there is nothing to cancel: the agent is not in plan mode."
    )


async def test_slash_approve_with_a_mode(plan_scene: Any) -> None:
    scene = await submitted(plan_scene, text_turn("On it."))

    approved = await scene.ana.slash(scene.channel, "plan approve", mode="fresh_context")

    assert approved.ephemeral
    assert approved.response.content.startswith("Approved plan v1")
    state = await scene.state()
    assert (state.phase, state.approval_mode) == (Phase.EXECUTING, ApprovalMode.FRESH_CONTEXT)
    message = scene.plan_message(1)
    assert not any(buttons(message).values())
    assert "fresh context" in (message.embeds[0].description or "")
    assert (scene.progress_message().embeds[0].title or "").startswith("Executing plan v1")


async def test_slash_edit_then_reject(plan_scene: Any) -> None:
    scene = await submitted(plan_scene, tool_turn(ToolCall("submit_plan", {"plan": PLAN_V2})))

    stranger = await scene.bob.slash(scene.channel, "plan edit", feedback="no")
    assert stranger.response.content == (
        "Only the requester (ana) or server administrators can edit this plan."
    )
    out_of_range = await scene.ana.slash(scene.channel, "plan edit", feedback="x", step=7)
    assert out_of_range.response.content == "Plan v1 has steps 1 to 2; there is no step 7."

    sent = await scene.ana.slash(scene.channel, "plan edit", feedback="greet by name", step=1)
    assert sent.response.content == "Sent plan v1 back to **ada** with your feedback."
    assert scene.plan_message(2).embeds[0].title == "Plan: Add a greeting module with a name"

    rejected = await scene.ana.slash(scene.channel, "plan reject", reason="too early")
    assert rejected.response.content == "Rejected plan v2; nothing will be executed."
    assert (await scene.state()).phase is Phase.INACTIVE
    assert (scene.plan_message(2).embeds[0].description or "").startswith("❌ **Rejected** by ana")
    assert [a for a, _ in await scene.audit() if a != "decision-refused"][-4:] == [
        "submitted",
        "changes-requested",
        "submitted",
        "rejected",
    ]


async def test_decisions_before_any_plan_are_refused_readably(plan_scene: Any) -> None:
    scene: PlanScene = await plan_scene([text_turn("Exploring.")])
    none_yet = await scene.ana.slash(scene.channel, "plan approve")
    assert none_yet.response.content == "Cannot approve: the agent is not in plan mode."

    await scene.ana.slash(scene.channel, "plan start")
    exploring = await scene.ana.slash(scene.channel, "plan reject")
    assert exploring.response.content == (
        "Cannot reject: the agent is still exploring and has not submitted a plan yet."
    )


async def test_commands_outside_an_agent_channel(plan_scene: Any) -> None:
    scene: PlanScene = await plan_scene()
    lobby = scene.guild.create_text_channel("lobby")

    started = await scene.ana.slash(lobby, "plan start")
    assert private_answer(started).content == NO_AGENT  # after a public deferral
    for command, options in (
        ("plan status", {}),
        ("plan cancel", {}),
        ("plan approve", {}),
        ("plan edit", {"feedback": "x"}),
        ("plan reject", {}),
    ):
        result = await scene.ana.slash(lobby, command, **options)
        assert result.ephemeral, command
        assert result.response.content == NO_AGENT, command
    assert (await scene.state()).phase is Phase.INACTIVE
