"""A loopback Anthropic Messages API that plays scripted assistant turns.

Its parts live in ``plancord.testing.fake_api``, one concept a module (the script, the
request and conversation rules, the prompt cache, the model limits, the server); this module
is their public face. It ships inside the package, not only with the tests, because
``plancord demo`` plays the model with it: the demo runs offline, with no API key.

plancord reaches the model through the real `anthropic` SDK. Mocking the SDK would let a
malformed conversation (an unanswered `tool_use`, a fifth cache breakpoint, an empty text
block) pass every test and fail only against the real API. This server speaks the wire
protocol instead: it rejects what the Messages API rejects, with the same status codes and
error JSON, answers with scripted turns in exactly the API's response shape (plain JSON, or
server-sent events when the request asks for `stream`), and simulates prompt-cache
accounting so the placement of cache breakpoints can be tested.

    async with FakeAnthropicServer([text_turn("hello")]) as server:
        client = server.client()
        message = await client.messages.create(model=..., max_tokens=..., messages=[...])

Token counts are a deterministic estimate, `ceil(bytes / 4)` of the canonical JSON of each
prompt part; the prompt is tools, then system, then message blocks, in order. A block that
carries `cache_control` is a breakpoint. For each breakpoint the server looks back over at
most `cache_lookback_blocks` block boundaries (the real API looks back about 20) for the
longest prefix it cached earlier: that prefix is `cache_read_input_tokens`. The rest, up to
the last breakpoint, is `cache_creation_input_tokens`, and every breakpoint prefix of the
request is then cached. What follows the last breakpoint is `input_tokens`. Prefixes are
keyed by the model and their content without the `cache_control` markers, so a change to the
tools or the system prompt invalidates everything after it, and a breakpoint that moves
forward each turn still finds the previous turn's prefix. A prefix shorter than
`min_cacheable_tokens` (by default the model's floor) is neither written nor read.

What the service accepts per model and API version is one table
(``fake_api.service_rules``, ``fake_api.version_rules``), each row naming its documentation
page. On a model with preserved thinking (``claude-sonnet-5-5``) a thinking block sent back
is bound to its model and its prefix (``fake_api.thinking_binding``), and a model that
thinks by default begins every reply with a thinking block (``fake_api.reply_shaping``).
The test model ids keep the old, lax rules (``LAX_TEST_RULE``).
"""

from __future__ import annotations

from plancord.testing.fake_api.limits import check_model
from plancord.testing.fake_api.prompt_cache import (
    PromptCache,
    SimulatedUsage,
    canonical_json,
    estimate_tokens,
    prompt_parts,
)
from plancord.testing.fake_api.review_turns import finding, malformed_review_turn, review_turn
from plancord.testing.fake_api.rules import RequestRejected
from plancord.testing.fake_api.script import (
    AssistantBlock,
    ErrorReply,
    Reply,
    Script,
    ScriptFunction,
    Text,
    Thinking,
    ToolCall,
    Turn,
    error_turn,
    max_tokens_turn,
    refusal_turn,
    text_turn,
    tool_turn,
)
from plancord.testing.fake_api.server import (
    FakeAnthropicServer,
    FakeAnthropicServers,
    Rejection,
)
from plancord.testing.fake_api.service_rules import (
    LAX_TEST_RULE,
    MODEL_RULES,
    RETIRED_MODELS,
    ModelRule,
    ModelTable,
    RetiredModel,
)
from plancord.testing.fake_api.streaming import stream_events
from plancord.testing.fake_api.thinking_binding import thinking_signature
from plancord.testing.fake_api.validation import check_headers, validate_request
from plancord.testing.fake_api.version_rules import (
    THINKING_BINDING_BETA,
    RequestContext,
)
from plancord.testing.fake_api.wire import (
    FAKE_MODELS,
    MAX_CACHE_BREAKPOINTS,
    TOOL_NAME_PATTERN,
    TOOL_USE_ID_PATTERN,
    JsonObject,
    StopReason,
)

__all__ = [
    "FAKE_MODELS",
    "LAX_TEST_RULE",
    "MAX_CACHE_BREAKPOINTS",
    "MODEL_RULES",
    "RETIRED_MODELS",
    "THINKING_BINDING_BETA",
    "TOOL_NAME_PATTERN",
    "TOOL_USE_ID_PATTERN",
    "AssistantBlock",
    "ErrorReply",
    "FakeAnthropicServer",
    "FakeAnthropicServers",
    "JsonObject",
    "ModelRule",
    "ModelTable",
    "PromptCache",
    "Rejection",
    "Reply",
    "RequestContext",
    "RequestRejected",
    "RetiredModel",
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
    "check_model",
    "error_turn",
    "estimate_tokens",
    "finding",
    "malformed_review_turn",
    "max_tokens_turn",
    "prompt_parts",
    "refusal_turn",
    "review_turn",
    "stream_events",
    "text_turn",
    "thinking_signature",
    "tool_turn",
    "validate_request",
]
