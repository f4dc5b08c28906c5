"""The fake holds a forced tool call (``tool_choice``), ``strict`` tools and structured
outputs (``output_config.format``) to the API's rules, both in the request it accepts and in
the scripted answer it agrees to play."""

from __future__ import annotations

from typing import Any

import anthropic
import pytest

from plancord.testing.fake_api.json_schema import schema_problem
from tests.fakes.anthropic_server import (
    FakeAnthropicServer,
    Reply,
    Text,
    Thinking,
    ToolCall,
    max_tokens_turn,
    refusal_turn,
    text_turn,
    tool_turn,
)

MODEL = "claude-fake-test-model"
SCHEMA = {
    "type": "object",
    "properties": {
        "verdict": {"type": "string", "enum": ["ok", "bad"]},
        "notes": {"type": "array", "items": {"type": "string", "maxLength": 10}, "maxItems": 2},
        "step": {"anyOf": [{"type": "integer", "minimum": 1}, {"type": "null"}]},
    },
    "required": ["verdict"],
    "additionalProperties": False,
}
JUDGE = {"name": "judge", "description": "Give a verdict.", "input_schema": SCHEMA}
OTHER = {"name": "other", "input_schema": {"type": "object"}}
FORCED = {"type": "tool", "name": "judge"}


async def ask(server: FakeAnthropicServer, **params: Any) -> Any:
    client = server.client()
    params.setdefault("tools", [JUDGE, OTHER])
    return await client.messages.create(
        model=MODEL,
        max_tokens=params.pop("max_tokens", 2048),
        messages=[{"role": "user", "content": "judge this"}],
        **params,
    )


@pytest.mark.parametrize(
    ("params", "message"),
    [
        (
            {"tool_choice": FORCED, "thinking": {"type": "enabled", "budget_tokens": 1024}},
            "Thinking may not be enabled when tool_choice forces tool use.",
        ),
        (
            {
                "tool_choice": {"type": "any"},
                "thinking": {"type": "enabled", "budget_tokens": 1024},
            },
            "Thinking may not be enabled when tool_choice forces tool use.",
        ),
        ({"tool_choice": {**FORCED, "why": 1}}, "tool_choice.tool.why: Extra inputs"),
        ({"tool_choice": {"type": "auto", "name": "judge"}}, "tool_choice.auto.name: Extra"),
        (
            {"tool_choice": {**FORCED, "disable_parallel_tool_use": "yes"}},
            "disable_parallel_tool_use: Input should be a valid boolean",
        ),
        ({"tool_choice": {"type": "tool", "name": "nope"}}, "'nope' is not one of the `tools`"),
        (
            {"tools": [{**JUDGE, "strict": "yes"}]},
            "tools.0.custom.strict: Input should be a valid boolean",
        ),
        (
            {"tools": [{**OTHER, "strict": True}]},
            "'additionalProperties' must be explicitly set to false",
        ),
    ],
)
async def test_a_bad_forced_or_strict_request_is_refused(
    params: dict[str, Any], message: str
) -> None:
    async with FakeAnthropicServer([text_turn("unused")]) as server:
        with pytest.raises(anthropic.BadRequestError) as caught:
            await ask(server, **params)
        assert message in str(caught.value)
        assert server.turns_served == 0


async def test_a_well_formed_forced_answer_is_played() -> None:
    answer = tool_turn(ToolCall("judge", {"verdict": "bad", "notes": ["a"], "step": None}))
    async with FakeAnthropicServer([answer]) as server:
        message = await ask(server, tool_choice={**FORCED, "disable_parallel_tool_use": True})
    assert [block.type for block in message.content] == ["tool_use"]
    assert message.content[0].input == {"verdict": "bad", "notes": ["a"], "step": None}


@pytest.mark.parametrize(
    ("turn", "choice", "why"),
    [
        (text_turn("I think it is fine."), FORCED, "forces a tool call"),
        (
            tool_turn(ToolCall("judge", {"verdict": "ok"}), text="Sure."),
            FORCED,
            "no text or thinking",
        ),
        (
            Reply(
                blocks=(Thinking("hmm"), ToolCall("judge", {"verdict": "ok"})),
                stop_reason="tool_use",
            ),
            FORCED,
            "no text or thinking",
        ),
        (tool_turn(ToolCall("other", {})), FORCED, "forces 'judge'; the script calls 'other'"),
        (tool_turn(ToolCall("ghost", {})), {"type": "any"}, "not a request tool"),
        (
            tool_turn(ToolCall("judge", {"verdict": "ok"}), ToolCall("judge", {"verdict": "ok"})),
            {**FORCED, "disable_parallel_tool_use": True},
            "holds one tool call",
        ),
        (tool_turn(ToolCall("judge", {"verdict": "meh"})), FORCED, "input.verdict: 'meh'"),
        (tool_turn(ToolCall("judge", {})), FORCED, "input.verdict: required"),
        (
            tool_turn(ToolCall("judge", {"verdict": "ok", "extra": 1})),
            FORCED,
            "input.extra: not a property",
        ),
        (
            tool_turn(ToolCall("judge", {"verdict": "ok", "notes": ["0123456789x"]})),
            FORCED,
            "input.notes.0: longer than maxLength 10",
        ),
        (
            tool_turn(ToolCall("judge", {"verdict": "ok", "step": 0})),
            FORCED,
            "input.step: matches none of the anyOf",
        ),
        (tool_turn(ToolCall("judge", {"verdict": "ok"})), {"type": "none"}, "tool_choice none"),
    ],
)
async def test_an_answer_the_api_would_never_give_is_not_played(
    turn: Reply, choice: dict[str, Any], why: str
) -> None:
    async with FakeAnthropicServer([turn]) as server:
        with pytest.raises(anthropic.InternalServerError):
            await ask(server, tool_choice=choice)
        [error] = server.script_errors
        assert why in str(error)
        assert server.responses == []


async def test_a_forced_off_schema_answer_plays_only_when_marked_malformed() -> None:
    off = ToolCall("judge", {"verdict": 3}, malformed=True)
    async with FakeAnthropicServer([tool_turn(off)]) as server:
        message = await ask(server, tool_choice=FORCED)
    assert message.content[0].input == {"verdict": 3}


async def test_a_strict_tool_never_gets_an_off_schema_input() -> None:
    off = ToolCall("judge", {"verdict": 3}, malformed=True)
    async with FakeAnthropicServer([tool_turn(off)]) as server:
        with pytest.raises(anthropic.InternalServerError):
            await ask(server, tools=[{**JUDGE, "strict": True}])
        assert "the API never samples one" in str(server.script_errors[0])


async def test_unforced_calls_to_ordinary_tools_are_played_as_scripted() -> None:
    async with FakeAnthropicServer([tool_turn(ToolCall("judge", {"verdict": 3}))]) as server:
        message = await ask(server)
    assert message.content[0].input == {"verdict": 3}


def test_schema_types_are_told_apart() -> None:
    assert schema_problem(True, {"type": "integer"}) is not None
    assert schema_problem(1.5, {"type": "integer"}) is not None
    assert schema_problem(2, {"type": "number"}) is None
    assert schema_problem(None, {"type": ["string", "null"]}) is None
    assert schema_problem({"a": 1}, {"type": "object", "additionalProperties": {"type": "string"}})


# -- structured outputs: "valid JSON matching your schema in the response's text" -----------

JSON_FORMAT = {"format": {"type": "json_schema", "schema": SCHEMA}}


async def ask_json(server: FakeAnthropicServer) -> Any:
    return await server.client().messages.create(
        model=MODEL,
        max_tokens=2048,
        messages=[{"role": "user", "content": "judge this"}],
        output_config=JSON_FORMAT,
    )


@pytest.mark.parametrize(
    "turn",
    [
        text_turn('{"verdict": "ok", "notes": ["a"], "step": 2}'),
        text_turn('{"verdict": "Bad"}'),
        Reply(
            blocks=(Thinking("hmm"), Text('{"verdict": '), Text('"bad"}')), stop_reason="end_turn"
        ),
        max_tokens_turn('{"verdict": "o'),
        refusal_turn("I can't help with that."),
    ],
)
async def test_a_structured_output_answer_the_api_can_give_is_played(turn: Reply) -> None:
    async with FakeAnthropicServer([turn]) as server:
        message = await ask_json(server)
    assert message.stop_reason == turn.stop_reason
    assert server.script_errors == []


@pytest.mark.parametrize(
    ("turn", "why"),
    [
        (text_turn('{"verdict": "meh"}'), "outside the schema (output.verdict: 'meh'"),
        (text_turn('{"notes": []}'), "output.verdict: required"),
        (text_turn("The verdict is ok."), "the script's text is not JSON"),
        (Reply(blocks=(Thinking('{"verdict": "ok"}'),), stop_reason="end_turn"), "has no text"),
    ],
)
async def test_a_structured_output_answer_the_api_never_gives_is_not_played(
    turn: Reply, why: str
) -> None:
    async with FakeAnthropicServer([turn]) as server:
        with pytest.raises(anthropic.InternalServerError):
            await ask_json(server)
        [error] = server.script_errors
        assert why in str(error)
        assert server.responses == []
