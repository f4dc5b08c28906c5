"""Attachments are read into the agent's message (text files within the limit) or refused
with a message naming each file and why; never dropped silently."""

from __future__ import annotations

from plancord.discord_bot.shared.attachments import MAX_ATTACHMENT_BYTES
from tests.discord_bot.agent_scene import Scene, SceneFactory
from tests.fakes.anthropic_server import text_turn


def first_user_text(scene: Scene) -> str:
    return str(scene.server.requests[0]["messages"][0]["content"][0]["text"])


async def test_a_text_file_reaches_the_agent_with_the_message(scene_factory: SceneFactory) -> None:
    scene: Scene = await scene_factory([text_turn("Read it.")])
    channel = await scene.create_agent("ada")

    await scene.ana.send(
        channel, "why does this fail?", attachments=[("error.log", b"Traceback: boom\n")]
    )

    text = first_user_text(scene)
    assert text.startswith("ana: why does this fail?")
    assert "[attached file error.log]\n```\nTraceback: boom\n```" in text
    assert scene.bot_texts(channel)[-1] == "Read it."


async def test_a_file_alone_is_a_message_too(scene_factory: SceneFactory) -> None:
    scene: Scene = await scene_factory([text_turn("Got the notes.")])
    channel = await scene.create_agent("ada")

    await scene.ana.send(channel, "", attachments=[("notes.md", b"# notes\n- one\n")])

    assert "[attached file notes.md]" in first_user_text(scene)


async def test_binary_and_oversized_files_are_refused_with_a_message(
    scene_factory: SceneFactory,
) -> None:
    scene: Scene = await scene_factory([text_turn("Only the text.")])
    channel = await scene.create_agent("ada")
    big = b"x" * (MAX_ATTACHMENT_BYTES + 1)

    await scene.ana.send(
        channel,
        "look",
        attachments=[
            ("screenshot.png", b"\x89PNG\r\n\x1a\n"),
            ("huge.txt", big),
            ("bad.txt", b"\xff\xfe\x00 not utf-8 \xc3"),
            ("ok.txt", b"fine"),
        ],
    )

    texts = scene.bot_texts(channel)
    refusal = next(t for t in texts if t.startswith("📎 Not passed to the agent"))
    assert "`screenshot.png`: only text files are read" in refusal
    assert "`huge.txt`" in refusal and "more than the" in refusal
    assert "`bad.txt`: not UTF-8 text" in refusal
    assert "ok.txt" not in refusal
    text = first_user_text(scene)
    assert "[attached file ok.txt]" in text
    assert "screenshot" not in text and "xxxx" not in text


async def test_only_unreadable_files_are_refused_and_nothing_reaches_the_agent(
    scene_factory: SceneFactory,
) -> None:
    scene: Scene = await scene_factory([text_turn("unused")])
    channel = await scene.create_agent("ada")

    await scene.ana.send(channel, "", attachments=[("photo.jpg", b"\xff\xd8\xff")])

    assert scene.server.requests == []
    assert any("`photo.jpg`: only text files are read" in t for t in scene.bot_texts(channel))
