"""The conversation writer on its own, over a real conversation store: user content merges
into a trailing user message, empty assistant text is dropped, and a channel that fails to
take a line does not stop the turn."""

from __future__ import annotations

import logging

import pytest

from plancord.agent.conversation_writer import ConversationWriter
from plancord.agent.sessions import AgentSession
from plancord.storage.backend import Backend
from plancord.storage.conversations import ConversationStore
from tests.conftest import ManualClock
from tests.runtime.conftest import ChannelRecorder


def text(value: str) -> dict[str, str]:
    return {"type": "text", "text": value}


class BrokenChannel(ChannelRecorder):
    async def say(self, agent: str, text: str) -> None:
        raise RuntimeError("the channel is gone")


async def test_user_content_merges_into_a_trailing_user_message(
    db: Backend, agent: str, clock: ManualClock
) -> None:
    conversations = ConversationStore(db)
    writer = ConversationWriter(conversations, ChannelRecorder(), clock)
    await writer.add_user_blocks(agent, [text("ana: hello")])
    await writer.add_user_blocks(agent, [text("ana: and this")])
    await writer.add_user_blocks(agent, [])
    await writer.add_assistant(agent, [text("  "), {"type": "thinking", "thinking": "hm"}])
    await writer.add_assistant(agent, [text("\n")])
    session = AgentSession(agent)
    session.joining.append(text("bea: me too"))
    await writer.flush_inbox(session)

    assert await conversations.load(agent) == [
        {"role": "user", "content": [text("ana: hello"), text("ana: and this")]},
        {"role": "assistant", "content": [{"type": "thinking", "thinking": "hm"}]},
        {"role": "user", "content": [text("bea: me too")]},
    ]
    assert session.joining == []


async def test_a_line_the_channel_refuses_is_logged_not_raised(
    db: Backend, agent: str, clock: ManualClock, caplog: pytest.LogCaptureFixture
) -> None:
    writer = ConversationWriter(ConversationStore(db), BrokenChannel(), clock)
    with caplog.at_level(logging.ERROR):
        await writer.say(agent, "Stopped.")
    assert "could not deliver a message" in caplog.text
    channel = ChannelRecorder()
    await ConversationWriter(ConversationStore(db), channel, clock).say(agent, "Stopped.")
    assert channel.said == ["Stopped."]


async def test_the_prefix_and_system_messages_are_kept_on_either_engine(
    db: Backend, agent: str, clock: ManualClock
) -> None:
    """A conversation keeps its frozen system and tools, its ``drop_block`` mark and its
    ``role: "system"`` messages across a reopen; starting it anew forgets the prefix."""
    conversations = ConversationStore(db)
    system = [{"type": "text", "text": "You are ada.", "cache_control": {"type": "ephemeral"}}]
    tools = [{"name": "view", "description": "d", "input_schema": {"type": "object"}}]
    assert await conversations.prefix(agent) is None
    frozen = await conversations.freeze_prefix(agent, system, tools, clock.now())
    again = await conversations.freeze_prefix(agent, [text("other")], [], clock.now())
    assert frozen == again
    assert (again.system, again.tools, again.drop_block) == (system, tools, False)
    await conversations.set_drop_block(agent)
    writer = ConversationWriter(conversations, ChannelRecorder(), clock)
    await writer.add_user_blocks(agent, [text("ana: hi")])
    assert await writer.add_instruction(agent, [text("<plancord-regime>x")], system_messages=True)
    await writer.add_user_blocks(agent, [text("ana: more")])
    reopened = ConversationStore(db)
    assert (await reopened.prefix(agent)) == frozen.__class__(system, tools, True)
    assert await reopened.load(agent) == [
        {"role": "user", "content": [text("ana: hi"), text("ana: more")]},
        {"role": "system", "content": [text("<plancord-regime>x")]},
    ]
    await reopened.restart(agent, [{"role": "user", "content": [text("summary")]}], clock.now())
    assert await reopened.prefix(agent) is None
    assert len(await reopened.load(agent)) == 1


async def test_a_reply_is_kept_exactly_as_it_came(
    db: Backend, agent: str, clock: ManualClock
) -> None:
    conversations = ConversationStore(db)
    writer = ConversationWriter(conversations, ChannelRecorder(), clock)
    await writer.add_user_blocks(agent, [text("ana: hi")])
    empty_thought = {"type": "thinking", "thinking": "", "signature": "c2ln"}
    reply = [empty_thought, text("hello"), {"type": "redacted_thinking", "data": "xyz"}]
    await writer.add_assistant(agent, reply)
    assert (await conversations.load(agent))[-1] == {"role": "assistant", "content": reply}
