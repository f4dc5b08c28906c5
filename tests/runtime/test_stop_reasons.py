"""Every stop reason the Messages API documents, and its context-too-long error, handled
through the real client against the fake server."""

from __future__ import annotations

from typing import Any

from plancord.agent.runtime import CONTINUE_PROMPT, RESUME_PROMPT
from tests.fakes.anthropic_server import (
    Reply,
    Text,
    Thinking,
    ToolCall,
    error_turn,
    text_turn,
)
from tests.runtime.conftest import Harness, last_user

TOO_LONG = "prompt is too long: 210000 tokens > 200000 maximum"


def last_user_texts(harness: Harness, index: int) -> list[str]:
    return [
        b["text"]
        for b in last_user(harness.server.requests[index])["content"]
        if b.get("type") == "text"
    ]


async def test_a_prompt_too_long_compacts_and_succeeds(make_harness: Any) -> None:
    harness: Harness = await make_harness(
        [
            text_turn("Hello."),
            error_turn(400, message=TOO_LONG),
            text_turn("ana greeted the agent."),
            text_turn("Here is the answer."),
        ]
    )
    await harness.say("hi")
    await harness.say("a question")

    assert harness.channel.said == ["Hello.", "Here is the answer."]
    summary_request, retried = harness.server.requests[2], harness.server.requests[3]
    assert "Summarise the conversation" in summary_request["system"][0]["text"]
    first = retried["messages"][0]["content"][0]["text"]
    assert first.startswith("[plancord] Summary of the earlier conversation:")
    assert "ana: a question" in last_user_texts(harness, 3)


async def test_a_second_too_long_reports_it(make_harness: Any) -> None:
    harness: Harness = await make_harness(
        [
            text_turn("Hello."),
            error_turn(400, message=TOO_LONG),
            text_turn("summary"),
            error_turn(400, message=TOO_LONG),
        ]
    )
    await harness.say("hi")
    await harness.say("a question")
    assert "too long for the model" in harness.channel.said[-1]


async def test_pause_turn_is_sent_back_to_continue(make_harness: Any) -> None:
    harness: Harness = await make_harness(
        [Reply((Text("Working on it"),), stop_reason="pause_turn"), text_turn("Finished.")]
    )
    await harness.say("go")
    assert harness.channel.said == ["Working on it", "Finished."]
    second = harness.server.requests[1]["messages"]
    assert second[-2]["role"] == "assistant"
    assert RESUME_PROMPT in last_user_texts(harness, 1)


async def test_context_window_exceeded_compacts_then_continues(make_harness: Any) -> None:
    harness: Harness = await make_harness(
        [
            text_turn("Hello."),
            Reply((Text("Part one"),), stop_reason="model_context_window_exceeded"),
            text_turn("the summary"),
            text_turn("Part two."),
        ]
    )
    await harness.say("hi")
    await harness.say("write a lot")
    assert harness.channel.said == ["Hello.", "Part one", "Part two."]
    assert CONTINUE_PROMPT in last_user_texts(harness, 3)
    assert "Summarise the conversation" in harness.server.requests[2]["system"][0]["text"]


async def test_stop_sequence_is_an_answer_and_an_unknown_reason_is_named(
    make_harness: Any,
) -> None:
    harness: Harness = await make_harness(
        [
            Reply((Text("Stopped at the sequence"),), stop_reason="stop_sequence"),
            Reply((Text("odd"), ToolCall("git_status", {})), stop_reason="brand_new"),  # type: ignore[arg-type]
        ]
    )
    await harness.say("one")
    await harness.say("two")
    assert harness.channel.said[0] == "Stopped at the sequence"
    assert "does not know: 'brand_new'" in harness.channel.said[-1]
    # The unknown stop's tool call never ran and was not kept unanswered.
    assert harness.channel.activity_lines == []
    stored = await harness.conversations.load("ada")
    assert not any(b.get("type") == "tool_use" for m in stored for b in m["content"])


async def test_a_reply_cut_off_while_thinking_is_not_kept(make_harness: Any) -> None:
    harness: Harness = await make_harness(
        [Reply((Thinking("Let me consider"),), stop_reason="max_tokens"), text_turn("Answer.")]
    )
    await harness.say("hard question")
    assert "whole output budget" in harness.channel.said[-1]
    stored = await harness.conversations.load("ada")
    assert [m["role"] for m in stored] == ["user", "system"]  # the question, the regime
    await harness.say("try again")
    assert harness.channel.said[-1] == "Answer."
    assert harness.server.rejections == []
