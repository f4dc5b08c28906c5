"""The fake Anthropic server under its test-suite name, plus the ``fake_anthropic`` fixture.

The server lives in ``plancord.testing.anthropic_server`` so ``plancord demo`` can use it from
an installed package; the fixture stays here because it needs pytest-asyncio.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest_asyncio

from plancord.testing.anthropic_server import (
    MAX_CACHE_BREAKPOINTS,
    TOOL_NAME_PATTERN,
    TOOL_USE_ID_PATTERN,
    AssistantBlock,
    ErrorReply,
    FakeAnthropicServer,
    FakeAnthropicServers,
    JsonObject,
    PromptCache,
    Rejection,
    Reply,
    RequestRejected,
    Script,
    ScriptFunction,
    SimulatedUsage,
    StopReason,
    Text,
    Thinking,
    ToolCall,
    Turn,
    canonical_json,
    check_headers,
    error_turn,
    estimate_tokens,
    max_tokens_turn,
    prompt_parts,
    refusal_turn,
    stream_events,
    text_turn,
    tool_turn,
    validate_request,
)

__all__ = [
    "MAX_CACHE_BREAKPOINTS",
    "TOOL_NAME_PATTERN",
    "TOOL_USE_ID_PATTERN",
    "AssistantBlock",
    "ErrorReply",
    "FakeAnthropicServer",
    "FakeAnthropicServers",
    "JsonObject",
    "PromptCache",
    "Rejection",
    "Reply",
    "RequestRejected",
    "Script",
    "ScriptFunction",
    "SimulatedUsage",
    "StopReason",
    "Text",
    "Thinking",
    "ToolCall",
    "Turn",
    "canonical_json",
    "check_headers",
    "error_turn",
    "estimate_tokens",
    "fake_anthropic",
    "max_tokens_turn",
    "prompt_parts",
    "refusal_turn",
    "stream_events",
    "text_turn",
    "tool_turn",
    "validate_request",
]


@pytest_asyncio.fixture
async def fake_anthropic() -> AsyncIterator[FakeAnthropicServers]:
    """`server = await fake_anthropic.start([text_turn("hi")])`; stopped after the test.

    Import it into a conftest to use it: `from tests.fakes.anthropic_server import
    fake_anthropic`.
    """
    servers = FakeAnthropicServers()
    try:
        yield servers
    finally:
        await servers.stop_all()
