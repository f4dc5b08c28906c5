"""The fake refuses what the service refuses on today's models and API version, with the
service's error shape (status, ``error.type``, message) through the real client, and accepts
what it accepts: each rule of ``fake_api.service_rules`` and ``fake_api.version_rules``."""

from __future__ import annotations

from typing import Any

import anthropic
import pytest

from plancord.testing.fake_api.model_rules import (
    DISABLED_ON_BETWEEN_TOOLS_MODELS,
    ENABLED_REFUSED,
    FORCED_TOOL_CHOICE_REFUSED,
    PREFILL_REFUSED,
)
from tests.fakes.anthropic_server import FakeAnthropicServer, text_turn
from tests.fakes.bodies import (
    MODEL,
    STRICT_MODEL,
    Body,
    assistant,
    base_body,
    post,
    strict_body,
    text,
    tool_result,
    tool_use,
    user,
)

ASKED = user(text("Read README.md"))
VIEWED = assistant(text("Reading."), tool_use("toolu_1", path="README.md"))
SYSTEM_NOTE = {"role": "system", "content": "The workspace is read-only now."}
OLD_VERSION = {"anthropic-version": "2023-06-01"}
STRUCTURED = {
    "type": "json_schema",
    "schema": {
        "type": "object",
        "properties": {"verdict": {"type": "string"}},
        "required": ["verdict"],
        "additionalProperties": False,
    },
}


async def _refused(body: Body, headers: dict[str, str] | None = None) -> tuple[int, str, str]:
    async with FakeAnthropicServer([text_turn("unused")]) as server:
        client = server.client(default_headers=headers or {})
        with pytest.raises(anthropic.APIStatusError) as raised:
            await post(client, body)
    assert server.turns_served == 0
    error: Any = raised.value.body
    return raised.value.status_code, error["error"]["type"], error["error"]["message"]


async def _accepted(body: Body, headers: dict[str, str] | None = None) -> None:
    # A structured-output request is answered with JSON its schema takes, as the service does.
    answer = '{"verdict": "fine"}' if "format" in body.get("output_config", {}) else "fine"
    async with FakeAnthropicServer([text_turn(answer)]) as server:
        await post(server.client(default_headers=headers or {}), body)
    assert server.rejections == []


REFUSED: list[Any] = [
    pytest.param(
        strict_body(thinking={"type": "enabled", "budget_tokens": 2048}),
        ENABLED_REFUSED,
        id="enabled thinking on Sonnet 5.5",
    ),
    pytest.param(
        strict_body(thinking={"type": "disabled"}),
        DISABLED_ON_BETWEEN_TOOLS_MODELS,
        id="disabled thinking on Sonnet 5.5",
    ),
    pytest.param(
        strict_body(thinking={"type": "between_tools", "display": "summarized"}),
        "thinking.between_tools.display: Extra inputs are not permitted",
        id="between_tools takes no other field",
    ),
    pytest.param(
        strict_body(thinking={"type": "between_tools"}, output_config={"effort": "xhigh"}),
        'thinking.between_tools: not supported at effort "xhigh"',
        id="between_tools above high effort",
    ),
    pytest.param(
        strict_body(thinking={"type": "adaptive", "display": "updates"}),
        "requires the `thinking-display-updates-2026-08-18` value",
        id="display updates without its beta",
    ),
    pytest.param(
        strict_body(
            thinking={"type": "adaptive", "block_binding": {"prefix_mismatch_behavior": "x"}}
        ),
        "requires the `thinking-binding-controls-2026-08-01` value in the `anthropic-beta`",
        id="block_binding without its beta",
    ),
    pytest.param(
        strict_body(thinking={"type": "adaptive"}, model="claude-sonnet-4-5"),
        '"thinking.type.adaptive" is not supported for this model.',
        id="adaptive thinking on Sonnet 4.5",
    ),
    pytest.param(
        strict_body(tool_choice={"type": "tool", "name": "view"}),
        FORCED_TOOL_CHOICE_REFUSED,
        id="forced tool choice on Sonnet 5.5",
    ),
    pytest.param(
        strict_body(tool_choice={"type": "any"}),
        FORCED_TOOL_CHOICE_REFUSED,
        id="tool_choice any on Sonnet 5.5",
    ),
    pytest.param(
        strict_body(messages=[ASKED, assistant(text("The answer is"))]),
        PREFILL_REFUSED,
        id="prefill on Sonnet 5.5",
    ),
    pytest.param(
        strict_body(output_config={"effort": "extreme"}),
        "output_config.effort: Input should be 'low', 'medium', 'high', 'xhigh' or 'max'",
        id="an unknown effort",
    ),
    pytest.param(
        strict_body(model="claude-haiku-4-5", output_config={"effort": "low"}),
        "output_config.effort: effort is not supported for this model.",
        id="effort on Haiku 4.5",
    ),
    pytest.param(
        strict_body(output_config={"format": {"type": "json", "schema": {}}}),
        "output_config.format.type: Input should be 'json_schema'",
        id="an output format of another type",
    ),
    pytest.param(
        strict_body(output_config={"format": {"type": "json_schema"}}),
        "output_config.format.schema: Field required",
        id="an output format without a schema",
    ),
    pytest.param(
        strict_body(messages=[SYSTEM_NOTE, ASKED]),
        "messages.0: A system message cannot be the first entry in `messages`.",
        id="a system message first",
    ),
    pytest.param(
        strict_body(messages=[ASKED, VIEWED, SYSTEM_NOTE, user(tool_result("toolu_1"))]),
        "messages.2: A `system` message must immediately follow a `user` turn",
        id="a system message between tool_use and tool_result",
    ),
    pytest.param(
        strict_body(messages=[ASKED, SYSTEM_NOTE, user(text("And?"))]),
        "messages.1: A `system` message must immediately follow a `user` turn",
        id="a system message before a user turn",
    ),
    pytest.param(
        {**base_body(), "messages": [ASKED, assistant(text("Hi")), SYSTEM_NOTE]},
        'Unexpected role "system"',
        id="a system message to the test model",
    ),
    pytest.param(
        {**base_body(), "temperature": 1.0},
        "temperature: Extra inputs are not permitted",
        id="temperature in 2026-10-21",
    ),
    pytest.param(
        {**base_body(), "top_k": 5},
        "top_k: Extra inputs are not permitted",
        id="top_k in 2026-10-21",
    ),
    pytest.param(
        {
            **base_body(),
            "messages": [
                user(text("Quoted", citations=[{"type": "char_location", "cited_text": "x"}]))
            ],
        },
        "messages.0.content.0.text.citations: Extra inputs are not permitted",
        id="citations on user text in 2026-10-21",
    ),
    pytest.param(
        {**base_body(), "max_tokens": 128_001, "model": STRICT_MODEL},
        "max_tokens: 128001 > 128000, which is the maximum allowed number of output tokens",
        id="max_tokens above Sonnet 5.5's 128K",
    ),
]


@pytest.mark.parametrize(("body", "message"), REFUSED)
async def test_what_the_service_refuses_is_a_400(body: Body, message: str) -> None:
    status, error_type, said = await _refused(body)
    assert (status, error_type) == (400, "invalid_request_error")
    assert message in said


ACCEPTED: list[Any] = [
    pytest.param(strict_body(), id="no thinking field on Sonnet 5.5"),
    pytest.param(strict_body(thinking={"type": "adaptive"}), id="adaptive"),
    pytest.param(strict_body(thinking={"type": "adaptive", "display": "summarized"}), id="shown"),
    pytest.param(strict_body(thinking={"type": "between_tools"}), id="between_tools"),
    pytest.param(
        strict_body(thinking={"type": "between_tools"}, output_config={"effort": "high"}),
        id="between_tools at high effort",
    ),
    pytest.param(strict_body(output_config={"effort": "max"}), id="max effort, adaptive"),
    pytest.param(strict_body(output_config={"format": STRUCTURED}), id="structured output"),
    pytest.param(strict_body(tool_choice={"type": "auto"}), id="tool_choice auto"),
    pytest.param(strict_body(tool_choice={"type": "none"}), id="tool_choice none"),
    pytest.param(strict_body(messages=[ASKED, SYSTEM_NOTE]), id="a system message at the end"),
    pytest.param(
        strict_body(messages=[ASKED, SYSTEM_NOTE, assistant(text("Ok.")), user(text("Go"))]),
        id="a system message before an assistant turn",
    ),
    pytest.param(
        strict_body(
            messages=[ASKED, VIEWED, user(tool_result("toolu_1")), SYSTEM_NOTE, SYSTEM_NOTE]
        ),
        id="system messages after tool results",
    ),
    pytest.param(
        strict_body(messages=[ASKED, user(text("Please."))]),
        id="two user turns in a row (merged)",
    ),
    pytest.param({**base_body(), "max_tokens": 128_000, "model": STRICT_MODEL}, id="128K out"),
    pytest.param(
        {**base_body(), "messages": [user(text("Quoted", citations=[]))]},
        id="empty citations on user text",
    ),
    pytest.param(
        {**base_body(), "messages": [ASKED, assistant(text("The answer is"))]},
        id="prefill on the test model",
    ),
    pytest.param(
        {**base_body(), "thinking": {"type": "enabled", "budget_tokens": 1024}, "max_tokens": 2048},
        id="enabled thinking on the test model",
    ),
]


@pytest.mark.parametrize("body", ACCEPTED)
async def test_what_the_service_accepts_passes(body: Body) -> None:
    await _accepted(body)


async def test_forced_tool_choice_is_refused_when_counting_tokens_too() -> None:
    async with FakeAnthropicServer() as server:
        with pytest.raises(anthropic.BadRequestError, match="not supported for this model"):
            await server.client().messages.count_tokens(
                model=STRICT_MODEL,
                messages=[ASKED],
                tools=base_body()["tools"],
                tool_choice={"type": "any"},
            )


async def test_sampling_parameters_in_2023_06_01_depend_on_the_model() -> None:
    status, _, said = await _refused({**strict_body(), "temperature": 0.2}, OLD_VERSION)
    assert (status, said) == (400, "`temperature` is deprecated for this model.")
    await _accepted({**strict_body(), "temperature": 1.0}, OLD_VERSION)
    await _accepted({**base_body(), "temperature": 0.2}, OLD_VERSION)


async def test_an_unknown_api_version_is_refused() -> None:
    status, error_type, said = await _refused(base_body(), {"anthropic-version": "2024-01-01"})
    assert (status, error_type) == (400, "invalid_request_error")
    assert "anthropic-version: '2024-01-01' is not a valid version" in said


@pytest.mark.parametrize(
    "model", ["claude-opus-4-1", "claude-3-7-sonnet-20250219", "claude-sonnet-4-20250514"]
)
async def test_a_retired_model_is_not_found(model: str) -> None:
    status, error_type, said = await _refused({**base_body(), "model": model})
    assert (status, error_type, said) == (404, "not_found_error", f"model: {model}")


async def test_the_test_models_keep_the_old_rules() -> None:
    assert MODEL == "claude-fake-test-model"
    await _accepted({**base_body(), "thinking": {"type": "disabled"}})
    _, _, said = await _refused({**base_body(), "thinking": {"type": "adaptive"}})
    assert '"thinking.type.adaptive" is not supported' in said
    _, _, said = await _refused({**base_body(), "messages": [ASKED, user(text("More"))]})
    assert "roles must alternate" in said


async def test_the_prompt_cache_floor_is_the_models() -> None:
    """whats-new-sonnet-5-5: a 512-token minimum cacheable prompt; shorter is not cached."""
    async with FakeAnthropicServer([text_turn("one"), text_turn("two")]) as server:
        client = server.client()
        short = strict_body(system=[text("Be brief.", cache_control={"type": "ephemeral"})])
        long = strict_body(system=[text("Be brief. " * 300, cache_control={"type": "ephemeral"})])
        await post(client, short)
        await post(client, long)
    assert server.usages[0].cache_creation_input_tokens == 0
    assert server.usages[1].cache_creation_input_tokens > 512
