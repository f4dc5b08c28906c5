"""Channel messages reach the agent; its replies come back split, unpinging, with typing and
one tool-activity message per turn."""

from __future__ import annotations

from simcord.builders import ChannelHandle

from plancord.discord_bot.shared.channel_io import fences_balanced, split_message, split_parts
from tests.discord_bot.agent_scene import Scene, SceneFactory
from tests.fakes.anthropic_server import ToolCall, text_turn, tool_turn


def typing_posts(scene: Scene, channel_id: int) -> int:
    path = f"/channels/{channel_id}/typing"
    return sum(1 for r in scene.env.http_requests if r.method == "POST" and r.path == path)


async def test_a_message_to_the_agent_gets_the_scripted_reply(
    scene_factory: SceneFactory,
) -> None:
    scene = await scene_factory([text_turn("Hello, ana.")])
    channel = await scene.create_agent("ada")

    await scene.ana.send(channel, f"hi, I am with <@{scene.bob.id}>")

    assert scene.bot_texts(channel)[-1] == "Hello, ana."
    first = scene.server.requests[0]["messages"][0]["content"][0]["text"]
    assert first == "ana: hi, I am with @bob"
    assert typing_posts(scene, channel.id) >= 1
    assert not scene.app.runtime.is_busy("ada")
    stored = await scene.app.conversations.load("ada")
    # The message, the regime the host appended after it, the reply.
    assert [m["role"] for m in stored] == ["user", "system", "assistant"]


async def test_messages_elsewhere_or_from_bots_and_webhooks_are_ignored(
    scene_factory: SceneFactory,
) -> None:
    scene = await scene_factory([text_turn("unused")])
    channel = await scene.create_agent("ada")
    robot = scene.guild.add_member(scene.env.create_user("robot", bot=True))
    hook = scene.guild.create_webhook(channel, "ci")

    await scene.ana.send(scene.lobby, "nobody lives here")
    await robot.send(channel, "beep")
    await hook.send("build passed")

    assert scene.server.requests == []
    assert len(scene.bot_texts(channel)) == 1
    assert typing_posts(scene, channel.id) == 0


async def test_a_thread_under_the_agent_channel_reaches_the_agent_and_gets_the_reply(
    scene_factory: SceneFactory,
) -> None:
    scene = await scene_factory([text_turn("Answered in the thread.")])
    channel = await scene.create_agent("ada")
    raw = scene.env.backend.create_thread(channel.id, "side topic", scene.ana.id)
    thread = ChannelHandle(scene.env, scene.guild, raw)

    await scene.ana.send(thread, "question in a thread")

    assert scene.bot_texts(thread) == ["Answered in the thread."]
    assert scene.server.requests[0]["messages"][0]["content"][0]["text"] == (
        "ana: question in a thread"
    )


async def test_a_long_reply_arrives_in_pieces_with_balanced_code_blocks(
    scene_factory: SceneFactory,
) -> None:
    code = "\n".join(f"    step_{i:03d}()  # keep going" for i in range(130))
    reply = "Intro line.\n" * 40 + f"```python\n{code}\n```\n" + "Outro line.\n" * 80
    reply = reply.strip()
    assert len(reply) > 5000
    scene = await scene_factory([text_turn(reply)])
    channel = await scene.create_agent("ada")

    await scene.ana.send(channel, "write a lot")

    pieces = scene.bot_texts(channel)[1:]
    assert len(pieces) >= 3
    assert all(len(p) <= 2000 for p in pieces)
    assert all(fences_balanced(p) for p in pieces)
    assert pieces[1].endswith("\n```") and pieces[2].startswith("```python\n")
    assert pieces == split_message(reply)
    assert "".join(chunk.body for chunk in split_parts(reply)) == reply


async def test_mentions_in_agent_text_never_ping(scene_factory: SceneFactory) -> None:
    said: dict[str, str] = {}
    scene = await scene_factory(lambda _request: text_turn(said["text"]))
    role = scene.guild.create_role("oncall", mentionable=True)
    text = said["text"] = f"@everyone @here <@{scene.ana.id}> <@&{role.id}> look"
    channel = await scene.create_agent("ada")

    await scene.ana.send(channel, "ping people")

    sent = channel.last_message
    assert sent.content == text
    stored = scene.stored(sent)
    assert not stored.mention_everyone
    assert stored.ping_user_ids == []
    assert stored.ping_role_ids == []
    posts = [
        r
        for r in scene.env.http_requests
        if r.method == "POST" and r.path == f"/channels/{channel.id}/messages"
    ]
    assert posts[-1].json["allowed_mentions"] == {"parse": []}


async def test_tool_activity_is_one_status_message_per_turn(scene_factory: SceneFactory) -> None:
    scene = await scene_factory(
        [
            tool_turn(ToolCall("glob", {"pattern": "*"})),
            tool_turn(ToolCall("git_status", {}), ToolCall("git_log", {})),
            text_turn("Looked around."),
        ]
    )
    channel = await scene.create_agent("ada")

    await scene.ana.send(channel, "look around")

    texts = scene.bot_texts(channel)
    statuses = [t for t in texts if t.startswith("🔧")]
    assert statuses == ["🔧 done · 3 calls in 2 steps\n› glob(*)\n› git_status · git_log"]
    assert texts[-1] == "Looked around."


async def test_the_status_message_shows_only_the_last_lines(scene_factory: SceneFactory) -> None:
    lines = 8
    turns = [tool_turn(ToolCall("glob", {"pattern": f"p{i}"})) for i in range(lines)]
    scene = await scene_factory([*turns, text_turn("done")])
    channel = await scene.create_agent("ada")

    await scene.ana.send(channel, "search")

    status = next(t for t in scene.bot_texts(channel) if t.startswith("🔧"))
    assert status.splitlines() == [
        f"🔧 done · {lines} calls",
        f"… {lines - 5} earlier",
        *[f"› glob(p{i})" for i in range(lines - 5, lines)],
    ]
