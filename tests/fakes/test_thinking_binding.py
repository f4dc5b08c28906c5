"""The prefix check on Sonnet 5.5 (docs/build-with-claude/preserved-thinking, .../prefix-checks):
a thinking block sent back is valid only if ``system``, ``tools`` and every earlier message
are what they were when it was produced, and no thinking block between others was left out
or moved. A mismatch is the documented 400 by default; ``drop_block`` (with its beta header)
drops the failing blocks and lists them in ``input_transformations``. Moving a cache
breakpoint is not a change; removing leading thinking blocks is allowed."""

from __future__ import annotations

import copy
from typing import Any

import anthropic
import pytest
from anthropic import AsyncAnthropic

from plancord.testing.fake_api.prefix_hash import MessagesHasher, system_hash, tools_hash
from plancord.testing.fake_api.thinking_binding import Binding, sign
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
    content_of,
    post,
    strict_body,
    text,
    tool_result,
    user,
)

BETA = "thinking-binding-controls-2026-08-01"
BOUND = (
    "Invalid `signature` in `thinking` block. The block is bound to a different conversation. "
    'Remove the block, or set `thinking.block_binding.prefix_mismatch_behavior` to "drop_block".'
)
NEEDS_HEADER = f"That setting requires the `{BETA}` value in the `anthropic-beta` header."
DROP = {"type": "adaptive", "block_binding": {"prefix_mismatch_behavior": "drop_block"}}
ROUNDS = 5


def _rounds() -> list[Reply]:
    calls = [tool_turn(ToolCall("view", {"path": f"f{n}.py"}), text="Next.") for n in range(ROUNDS)]
    return [*calls, text_turn("Done."), text_turn("Again."), text_turn("More.")]


async def _conversation(server: FakeAnthropicServer) -> Body:
    """Five tool rounds, append-only, each reply sent back as returned; the final answer too,
    and a new question: the body of the next request."""
    client = server.client()
    body = strict_body()
    for _ in range(ROUNDS + 1):
        reply = await post(client, body)
        body["messages"].append({"role": "assistant", "content": content_of(reply)})
        uses = [block for block in reply.content if block.type == "tool_use"]
        if uses:
            body["messages"].append(user(*(tool_result(use.id, "ok") for use in uses)))
    body["messages"].append(user(text("And now?")))
    return body


async def _refusal(server: FakeAnthropicServer, body: Body) -> str:
    with pytest.raises(anthropic.BadRequestError) as raised:
        await post(server.client(), body)
    error: Any = raised.value.body
    assert error["error"]["type"] == "invalid_request_error"
    return str(error["error"]["message"])


def _thinking_paths(body: Body) -> list[str]:
    return [
        f"messages.{i}.content.{j}"
        for i, message in enumerate(body["messages"])
        if isinstance(message["content"], list)
        for j, block in enumerate(message["content"])
        if block["type"] == "thinking"
    ]


async def test_an_append_only_conversation_of_five_tool_rounds_passes() -> None:
    async with FakeAnthropicServer(_rounds()) as server:
        body = await _conversation(server)
        await post(server.client(), body)
    assert server.rejections == []
    assert len(_thinking_paths(body)) == ROUNDS + 1
    first = server.responses[0]["content"][0]
    assert first["type"] == "thinking" and first["thinking"] == ""  # display "omitted"
    assert first["signature"]


def _change_system(body: Body) -> None:
    body["system"] = "You are a careless agent."


def _change_tool(body: Body) -> None:
    body["tools"][1]["description"] = "List every file."


def _change_earlier_message(body: Body) -> None:
    body["messages"][0]["content"][0]["text"] = "Read CHANGES.md"


def _remove_middle_thinking(body: Body) -> None:
    del body["messages"][3]["content"][0]


@pytest.mark.parametrize(
    ("change", "path", "what"),
    [
        (_change_system, "messages.1.content.0", "The `system` prompt differs"),
        (_change_tool, "messages.1.content.0", "The `tools` list differs"),
        (_change_earlier_message, "messages.1.content.0", "A message before the block differs"),
        (_remove_middle_thinking, "messages.5.content.0", "left out or moved"),
    ],
    ids=["system prompt", "a tool", "an earlier message", "an empty thinking block removed"],
)
async def test_a_changed_prefix_is_the_documented_400(change: Any, path: str, what: str) -> None:
    async with FakeAnthropicServer(_rounds()) as server:
        body = await _conversation(server)
        change(body)
        said = await _refusal(server, body)
    assert said.startswith(f"{path}: {BOUND} {NEEDS_HEADER}")
    assert what in said


async def test_a_moved_breakpoint_and_dropped_leading_thinking_are_no_change() -> None:
    async with FakeAnthropicServer(_rounds()) as server:
        body = await _conversation(server)
        body["system"] = [text(body["system"], cache_control=EPHEMERAL)]
        body["messages"][-2]["content"][-1]["cache_control"] = EPHEMERAL
        body["cache_control"] = EPHEMERAL
        del body["messages"][1]["content"][0]  # the oldest thinking block
        await post(server.client(), body)
    assert server.rejections == []


async def test_drop_block_drops_the_failing_blocks_and_reports_them() -> None:
    async with FakeAnthropicServer(_rounds()) as server:
        body = await _conversation(server)
        _change_earlier_message(body)
        client: AsyncAnthropic = server.client()
        reply = await client.beta.messages.create(**{**body, "thinking": DROP}, betas=[BETA])
        dropped = [(t.path, t.reason) for t in reply.input_transformations or []]
        # Every block produced before the change is dropped; the reply's own is bound to the
        # changed conversation and goes back valid next time.
        assert dropped == [(path, "prefix_binding_mismatch") for path in _thinking_paths(body)]
        body["messages"].append({"role": "assistant", "content": content_of(reply)})
        body["messages"].append(user(text("Go on.")))
        again = await client.beta.messages.create(**{**body, "thinking": DROP}, betas=[BETA])
    assert len(again.input_transformations or []) == len(dropped)
    assert server.rejections == []


async def test_with_the_header_but_no_drop_block_the_400_does_not_ask_for_it() -> None:
    async with FakeAnthropicServer(_rounds()) as server:
        body = await _conversation(server)
        _change_system(body)
        with pytest.raises(anthropic.BadRequestError) as raised:
            await server.client().beta.messages.create(**body, betas=[BETA])
    said = str(raised.value)
    assert BOUND in said and NEEDS_HEADER not in said


async def test_an_edited_thinking_block_is_an_invalid_signature() -> None:
    async with FakeAnthropicServer(_rounds()) as server:
        body = await _conversation(server)
        body["messages"][1]["content"][0]["thinking"] = "I changed my mind."
        said = await _refusal(server, body)
    assert said == "messages.1.content.0: Invalid `signature` in `thinking` block"


def _opus_block(body: Body) -> Body:
    """A thinking block Claude Opus 5.5 produced for this very prefix."""
    hasher = MessagesHasher()
    hasher.open_message(body["messages"][0])
    for block in body["messages"][0]["content"]:
        hasher.add_block(block)
    hasher.open_message({"role": "assistant"})
    binding = Binding("claude-opus-5-5", system_hash(body), tools_hash(body), hasher.snapshot(), "")
    return {"type": "thinking", "thinking": "", "signature": sign("", binding)}


async def test_a_block_the_model_cannot_read_is_dropped_without_an_error() -> None:
    async with FakeAnthropicServer([text_turn("one"), text_turn("two")]) as server:
        body = strict_body()
        block = _opus_block(body)
        body["messages"] += [
            {"role": "assistant", "content": [block, text("Hello.")]},
            user(text("Hi again.")),
        ]
        await post(server.client(), copy.deepcopy(body))
        reply = await server.client().beta.messages.create(**body, betas=[BETA])
    assert [(t.path, t.reason) for t in reply.input_transformations or []] == [
        ("messages.1.content.0", "model_binding_mismatch")
    ]
    assert server.rejections == []


async def test_a_test_model_signature_is_no_record_of_the_conversation() -> None:
    async with FakeAnthropicServer(
        [Reply((Thinking("Look first."), Text("Hi.")), "end_turn"), text_turn("unused")]
    ) as server:
        lax = {**strict_body(), "model": "claude-fake-test-model", "max_tokens": 256}
        first = await post(server.client(), lax)
        body = strict_body()
        body["messages"] += [
            {"role": "assistant", "content": content_of(first)},
            user(text("More.")),
        ]
        said = await _refusal(server, body)
    assert "The block carries no record of this conversation." in said
