"""How thinking comes back on a model that thinks by default (Sonnet 5.5), as its migration
guide says: every reply begins with a thinking block, empty at the default ``display``
("omitted") and summarised at ``"summarized"``; notes longer than a sentence or two before a
tool call come back as thinking blocks, shorter ones as text; ``between_tools`` does no
up-front thinking and returns those notes with their text. The test models play scripts as
written. And the top-level cache breakpoint lands on the last cacheable block."""

from __future__ import annotations

from typing import Any

import anthropic
import pytest

from plancord.testing.fake_api.prompt_cache import automatic_breakpoint
from plancord.testing.fake_api.reply_shaping import UP_FRONT_SUMMARY
from tests.fakes.anthropic_server import (
    FakeAnthropicServer,
    Reply,
    Text,
    Thinking,
    ToolCall,
    text_turn,
    tool_turn,
)
from tests.fakes.bodies import (
    EPHEMERAL,
    Body,
    assistant,
    base_body,
    content_of,
    post,
    strict_body,
    text,
    user,
)

NOTE = "I read the README. It names two modules. The second one holds the tests, so I look."
SHORT = "Looking."


def _kinds(reply: Any) -> list[tuple[str, str]]:
    return [
        (block.type, getattr(block, "thinking", getattr(block, "text", "")))
        for block in reply.content
        if block.type in ("thinking", "text")
    ]


async def _reply(turn: Reply, body: Body, **headers: str) -> Any:
    async with FakeAnthropicServer([turn]) as server:
        return await post(server.client(default_headers=headers), body)


async def test_every_reply_begins_with_an_empty_thinking_block_by_default() -> None:
    reply = await _reply(text_turn("Hello."), strict_body())
    assert _kinds(reply) == [("thinking", ""), ("text", "Hello.")]
    assert reply.content[0].signature


async def test_summarized_display_returns_the_thinking_text() -> None:
    body = strict_body(thinking={"type": "adaptive", "display": "summarized"})
    reply = await _reply(text_turn("Hello."), body)
    assert _kinds(reply) == [("thinking", UP_FRONT_SUMMARY), ("text", "Hello.")]
    scripted = Reply((Thinking("Which file?"), Text("Hello.")), "end_turn")
    assert _kinds(await _reply(scripted, body))[0] == ("thinking", "Which file?")


@pytest.mark.parametrize(
    ("thinking", "headers", "expected"),
    [
        (None, {}, [("thinking", ""), ("thinking", "")]),
        ({"type": "adaptive", "display": "summarized"}, {}, [("thinking", UP_FRONT_SUMMARY)]),
        (
            {"type": "adaptive", "display": "updates"},
            {"anthropic-beta": "thinking-display-updates-2026-08-18"},
            [("thinking", ""), ("thinking", NOTE)],
        ),
        ({"type": "between_tools"}, {}, [("thinking", NOTE)]),
    ],
    ids=["omitted", "summarized", "updates", "between_tools"],
)
async def test_a_long_note_before_a_tool_call_comes_back_as_thinking(
    thinking: Body | None, headers: dict[str, str], expected: list[tuple[str, str]]
) -> None:
    body = strict_body(**({"thinking": thinking} if thinking else {}))
    reply = await _reply(tool_turn(ToolCall("view", {"path": "tests"}), text=NOTE), body, **headers)
    kinds = _kinds(reply)
    if thinking and thinking.get("display") == "summarized":
        expected = [*expected, ("thinking", NOTE)]
    assert kinds == expected
    assert reply.content[-1].type == "tool_use"


async def test_a_short_remark_before_a_tool_call_stays_text() -> None:
    reply = await _reply(tool_turn(ToolCall("view", {"path": "a"}), text=SHORT), strict_body())
    assert _kinds(reply) == [("thinking", ""), ("text", SHORT)]
    body = strict_body(thinking={"type": "between_tools"})
    between = await _reply(tool_turn(ToolCall("view", {"path": "a"}), text=SHORT), body)
    assert _kinds(between) == [("text", SHORT)]


async def test_the_test_models_play_the_script_as_written() -> None:
    turn = tool_turn(ToolCall("view", {"path": "a"}), text=NOTE)
    assert _kinds(await _reply(turn, base_body())) == [("text", NOTE)]


async def test_streaming_delivers_the_default_thinking_block() -> None:
    async with FakeAnthropicServer([text_turn("Hello."), text_turn("Again.")]) as server:
        client = server.client()
        async with client.messages.stream(**strict_body()) as stream:
            streamed = await stream.get_final_message()
        body = strict_body()
        body["messages"] += [
            {"role": "assistant", "content": content_of(streamed)},
            user(text("And?")),
        ]
        await post(client, body)
    assert _kinds(streamed) == [("thinking", ""), ("text", "Hello.")]
    assert streamed.content[0].signature == server.responses[0]["content"][0]["signature"]
    assert server.rejections == []


async def test_the_automatic_breakpoint_skips_thinking_and_needs_a_slot() -> None:
    async with FakeAnthropicServer([text_turn("one"), text_turn("two")]) as server:
        client = server.client()
        body = strict_body(cache_control=EPHEMERAL)
        first = await post(client, body)
        body["messages"].append({"role": "assistant", "content": content_of(first)})
        body["messages"].append(user(text("Once more.", cache_control=EPHEMERAL)))
        await post(client, body)  # the same ttl on the last block: a no-op, not a 2nd slot
        assert server.rejections == []
        body["system"] = [text(f"part {n}", cache_control=EPHEMERAL) for n in range(3)]
        body["messages"][-1]["content"][0].pop("cache_control")
        body["messages"][0]["content"][0]["cache_control"] = EPHEMERAL
        with pytest.raises(anthropic.BadRequestError, match="needs a free breakpoint slot"):
            await post(client, body)


async def test_an_assistant_turn_ending_in_thinking_is_not_where_the_breakpoint_lands() -> None:
    thought = {"type": "thinking", "thinking": "", "signature": "x"}
    body = strict_body(messages=[user(text("Hi")), assistant(text("Yes."), thought)])
    assert automatic_breakpoint(body) == text("Yes.")
