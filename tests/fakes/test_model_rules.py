"""The fake refuses what the real service refuses about models: unknown ids (404), a
``max_tokens`` above the model's ceiling, a prompt longer than its context window; and a
script cannot make it repeat a ``tool_use`` id, which the real API never does."""

from __future__ import annotations

import anthropic
import pytest

from plancord.llm.models import ModelLimits
from tests.fakes.anthropic_server import FakeAnthropicServer, ToolCall, text_turn, tool_turn
from tests.fakes.bodies import base_body, post


async def test_an_unknown_model_id_is_not_found() -> None:
    async with FakeAnthropicServer([text_turn("unused")]) as server:
        with pytest.raises(anthropic.NotFoundError, match="model: claude-nonexistent"):
            await server.client().messages.create(**{**base_body(), "model": "claude-nonexistent"})
    assert server.rejections[0].status == 404
    assert server.turns_served == 0


async def test_max_tokens_above_the_model_ceiling_is_refused() -> None:
    async with FakeAnthropicServer([text_turn("ok")]) as server:
        body = {**base_body(), "model": "claude-haiku-4-5", "max_tokens": 128_000}
        with pytest.raises(anthropic.BadRequestError, match="maximum allowed number of output"):
            await post(server.client(), body)
        body["max_tokens"] = 64_000
        await post(server.client(), body)
    assert len(server.rejections) == 1


async def test_a_prompt_longer_than_the_context_window_is_too_long() -> None:
    models = {"claude-tiny": ModelLimits(max_output_tokens=100, context_window_tokens=400)}
    async with FakeAnthropicServer([text_turn("ok")], models=models) as server:
        body = {**base_body(), "model": "claude-tiny", "max_tokens": 100}
        body["messages"][0]["content"][0]["text"] = "word " * 2000
        with pytest.raises(anthropic.BadRequestError, match="prompt is too long"):
            await server.client().messages.create(**body)


async def test_a_script_cannot_repeat_a_tool_use_id() -> None:
    call = ToolCall("view", {"path": "a"}, id="toolu_same")
    async with FakeAnthropicServer([tool_turn(call), tool_turn(call)]) as server:
        client = server.client()
        await client.messages.create(**base_body())
        with pytest.raises(anthropic.InternalServerError, match="reuses tool_use id"):
            await client.messages.create(**base_body())
    assert len(server.script_errors) == 1
