"""A turn answers where it started, and its requester is who started it: a message from
another thread while a turn runs does not redirect that turn's output, and gets a turn of its
own afterwards, answered in its thread; a later speaker never becomes the requester."""

from __future__ import annotations

from typing import Any

from simcord.builders import ChannelHandle

from tests.discord_bot.plans import PLAN, submitted_plan
from tests.fakes.anthropic_server import ToolCall, text_turn, tool_turn
from tests.world import PlanScene

EVERYONE = {"access": {"everyone": True}}


async def test_a_turn_never_posts_into_another_members_thread(plan_scene: Any) -> None:
    scene: PlanScene = await plan_scene(
        [
            tool_turn(ToolCall("ask_user", {"question": "Which file?"})),
            text_turn("ana's private result"),
            text_turn("bob's answer"),
        ],
        plan_mode=EVERYONE,
    )
    raw = scene.env.backend.create_thread(scene.channel.id, "bob's corner", scene.bob.id)
    thread = ChannelHandle(scene.env, scene.guild, raw)

    await scene.ana.send(scene.channel, "look at the secrets file")
    assert scene.app.runtime.is_busy("ada")
    await scene.bob.send(thread, "what about me?")
    await scene.ana.send(scene.channel, "notes.txt")
    await scene.app.runtime.wait_idle("ada")

    bot_id = scene.env.bot.user.id
    in_thread = [m.content for m in thread.history() if m.author.id == bot_id]
    assert "ana's private result" not in in_thread
    assert "ana's private result" in scene.bot_texts()
    assert any("busy with a request made elsewhere" in t for t in in_thread)
    assert "bob's answer" in in_thread
    assert "bob's answer" not in scene.bot_texts()


async def test_a_later_speaker_does_not_become_the_requester(plan_scene: Any) -> None:
    """ana's plan executes with every edit confirmed; bob says "go on" in a new turn: the
    permission request still names ana, so bob's Allow does not count as the requester's."""
    scene = await submitted_plan(
        plan_scene,
        PLAN,
        text_turn("Approved; shall I go on?"),
        tool_turn(ToolCall("create_file", {"path": "greet.py", "content": "x = 1\n"})),
        text_turn("done"),
        plan_mode={**EVERYONE, "approval": "approver"},
    )
    await scene.boss.click(scene.plan_message(1), label="Approve, confirm each edit")
    await scene.app.runtime.wait_idle("ada")
    await scene.bob.send(scene.channel, "go on")
    request = scene.channel.last_message
    fields = {f.name: f.value for f in request.embeds[0].fields}
    assert fields["Requested by"] == f"<@{scene.ana.id}>"
