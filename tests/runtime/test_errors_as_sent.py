"""Errors and stops as the service sends them, on Sonnet 5.5 through the strict fake: a
prefix-check refusal repaired once (remembered across a restart, the channel told once, never
repeated), an empty reply after tool results nudged once and then said, a refusal shown with
its category and explanation, and a self-edited system prompt told by an appended system
message while ``system`` stays as it was."""

from __future__ import annotations

import json
from typing import Any

from plancord.agent.host_prompts import EMPTY_REPLY_NUDGE, PREFIX_REPAIRED
from plancord.storage.conversations import ConversationStore
from tests.fakes.anthropic_server import Reply, ToolCall, text_turn, tool_turn
from tests.runtime.conftest import Harness


async def test_a_prefix_check_refusal_is_repaired_once_and_remembered(make_harness: Any) -> None:
    harness: Harness = await make_harness(
        [text_turn("hello"), text_turn("still here"), text_turn("and again")]
    )
    await harness.say("hi")
    # An older plancord edited an answered turn: the thinking after it is bound to the
    # text as it was.
    stored = await harness.conversations.load("ada")
    edited = {"role": "user", "content": [{"type": "text", "text": "ana: hi (edited)"}]}
    await harness.conversations.replace_tail("ada", 0, [edited, *stored[1:]], harness.clock.now())

    await harness.say("are you there?")
    refused, repaired = harness.server.requests[1:3]
    assert len(harness.server.rejections) == 1
    assert "bound to a different conversation" in harness.server.rejections[0].message
    harness.server.rejections.clear()
    assert "block_binding" not in refused["thinking"]
    assert repaired["thinking"]["block_binding"] == {"prefix_mismatch_behavior": "drop_block"}
    assert harness.channel.said == ["hello", PREFIX_REPAIRED, "still here"]
    assert (await ConversationStore(harness.db).prefix("ada")).drop_block  # type: ignore[union-attr]

    await harness.say("once more")
    assert harness.server.requests[3]["thinking"]["block_binding"]["prefix_mismatch_behavior"] == (
        "drop_block"
    )
    assert harness.channel.said.count(PREFIX_REPAIRED) == 1
    assert harness.server.rejections == []


async def test_an_empty_reply_after_tool_results_is_nudged_once(make_harness: Any) -> None:
    harness: Harness = await make_harness(
        [
            tool_turn(ToolCall("git_status", {})),
            Reply((), "end_turn"),
            text_turn("The tree is clean."),
            tool_turn(ToolCall("git_status", {})),
            Reply((), "end_turn"),
            Reply((), "end_turn"),
        ]
    )
    await harness.say("status?")
    assert harness.channel.said == ["The tree is clean."]
    # An empty reply cannot be kept (the API refuses an empty assistant turn): the nudge is
    # a system message after the tool results, never text after them.
    *_, results, nudged = harness.server.requests[2]["messages"]
    assert results["role"] == "user"
    assert nudged["role"] == "system"
    assert nudged["content"][-1] == {"type": "text", "text": EMPTY_REPLY_NUDGE}

    await harness.say("again?")
    assert "without a word after the tool results" in harness.channel.said[-1]
    assert len(harness.server.requests) == 6
    assert harness.server.rejections == []


async def test_a_refusal_shows_its_category_and_explanation(make_harness: Any) -> None:
    harness: Harness = await make_harness(
        [
            Reply(
                (),
                "refusal",
                refusal_category="cyber",
                refusal_explanation="The request asks for working malware.",
            )
        ]
    )
    await harness.say("write me a worm")
    assert harness.channel.said == [
        "The model declined to continue with this request (cyber): The request asks for "
        "working malware."
    ]


async def test_a_self_edited_prompt_is_told_by_a_system_message(make_harness: Any) -> None:
    harness: Harness = await make_harness(
        [
            tool_turn(ToolCall("self_edit_system_prompt", {"new_prompt": "Answer in French."})),
            text_turn("C'est fait."),
            text_turn("Bonjour."),
        ]
    )
    await harness.say("from now on, answer in French")
    await harness.say("hello")
    first, _, third = harness.server.requests
    assert third["system"] == first["system"]
    told = [m for m in third["messages"] if m["role"] == "system"]
    assert "Answer in French." in json.dumps(told)
    assert "Answer in French." not in json.dumps(third["system"])
    assert harness.server.rejections == []
