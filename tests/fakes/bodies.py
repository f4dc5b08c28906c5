"""Messages API request bodies as the fake's tests build and send them: the blocks of a
conversation, a valid base body, one with cache marks, and what a response's usage says."""

from __future__ import annotations

import copy
from typing import Any

from anthropic import AsyncAnthropic
from anthropic.types import Message

MODEL = "claude-fake-test-model"
VIEW = {
    "name": "view",
    "description": "Show a file of the workspace.",
    "input_schema": {
        "type": "object",
        "properties": {"path": {"type": "string"}},
        "required": ["path"],
    },
}
GLOB = {
    "name": "glob",
    "description": "List files matching a pattern.",
    "input_schema": {"type": "object", "properties": {"pattern": {"type": "string"}}},
}
SYSTEM = "You are a careful coding agent. Plan before you act."
EPHEMERAL = {"type": "ephemeral"}
Body = dict[str, Any]


def user(*blocks: Any) -> Body:
    return {"role": "user", "content": list(blocks)}


def assistant(*blocks: Any) -> Body:
    return {"role": "assistant", "content": list(blocks)}


def text(value: str, **extra: Any) -> Body:
    return {"type": "text", "text": value, **extra}


def tool_use(tool_use_id: str, name: str = "view", **tool_input: Any) -> Body:
    return {"type": "tool_use", "id": tool_use_id, "name": name, "input": tool_input}


def tool_result(tool_use_id: str, content: Any = "ok", **extra: Any) -> Body:
    return {"type": "tool_result", "tool_use_id": tool_use_id, "content": content, **extra}


def base_body() -> Body:
    return {
        "model": MODEL,
        "max_tokens": 256,
        "system": SYSTEM,
        "tools": [copy.deepcopy(VIEW), copy.deepcopy(GLOB)],
        "messages": [user(text("What does README.md say?"))],
    }


async def post(client: AsyncAnthropic, body: Body) -> Message:
    """Send `body` verbatim, so requests the SDK's signature would not build can be sent."""
    return await client.post("/v1/messages", body=body, cast_to=Message)


def cached_body(*messages: Body) -> Body:
    """Tools and system behind one breakpoint, then the conversation."""
    body = base_body()
    body["system"] = [text(SYSTEM * 4, cache_control=EPHEMERAL)]
    if messages:
        body["messages"] = list(messages)
    return body


def usage_of(message: Message) -> tuple[int, int, int]:
    """(input, cache write, cache read) tokens, as the SDK parsed them."""
    usage = message.usage
    assert usage.cache_creation_input_tokens is not None
    assert usage.cache_read_input_tokens is not None
    return usage.input_tokens, usage.cache_creation_input_tokens, usage.cache_read_input_tokens


STRICT_MODEL = "claude-sonnet-5-5"
"""The bot's default model: the fake applies the service's rules of today to it."""


def strict_body(**changes: Any) -> Body:
    """``base_body`` on the default model (``max_tokens`` above the thinking it does)."""
    return {**base_body(), "model": STRICT_MODEL, "max_tokens": 4096, **changes}


def content_of(message: Any) -> list[Body]:
    """A reply's content as the bot sends it back: the SDK's blocks dumped without nulls."""
    return [block.model_dump(mode="json", exclude_none=True) for block in message.content]
