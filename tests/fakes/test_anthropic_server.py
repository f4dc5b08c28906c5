"""The fake Anthropic server, exercised through the real `AsyncAnthropic` client."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import anthropic
import pytest
from anthropic import AsyncAnthropic, Omit
from anthropic.types import Message, TextBlock, ToolUseBlock

from plancord.testing.anthropic_server import thinking_signature
from tests.fakes import anthropic_server
from tests.fakes.anthropic_server import (
    FakeAnthropicServer,
    FakeAnthropicServers,
    Reply,
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
from tests.fakes.bodies import (
    EPHEMERAL,
    GLOB,
    MODEL,
    SYSTEM,
    VIEW,
    Body,
    assistant,
    base_body,
    cached_body,
    post,
    text,
    tool_result,
    tool_use,
    usage_of,
    user,
)

fake_anthropic = anthropic_server.fake_anthropic


@pytest.fixture
async def server() -> AsyncIterator[FakeAnthropicServer]:
    async with FakeAnthropicServer([text_turn("fine")]) as running:
        yield running


@pytest.fixture
def client(server: FakeAnthropicServer) -> AsyncAnthropic:
    return server.client()


async def test_text_turn_round_trip_parses_into_message() -> None:
    async with FakeAnthropicServer([text_turn("hello")]) as server:
        client = AsyncAnthropic(base_url=server.url, api_key="test-key", max_retries=0)
        try:
            message = await client.messages.create(
                model=MODEL,
                max_tokens=64,
                system=[{"type": "text", "text": SYSTEM}],
                messages=[{"role": "user", "content": "hi"}],
            )
        finally:
            await client.close()

    assert isinstance(message, Message)
    assert message.id.startswith("msg_")
    assert message.type == "message"
    assert message.role == "assistant"
    assert message.model == MODEL
    assert message.content == [TextBlock(type="text", text="hello")]
    assert message.stop_reason == "end_turn"
    assert message.stop_sequence is None
    assert message.usage.output_tokens > 0
    assert message.usage.input_tokens == server.usages[0].input_tokens > 0
    assert server.requests == [
        {
            "model": MODEL,
            "max_tokens": 64,
            "system": [{"type": "text", "text": SYSTEM}],
            "messages": [{"role": "user", "content": "hi"}],
        }
    ]
    wire = server.responses[0]
    assert set(wire) == {
        "id",
        "type",
        "role",
        "model",
        "content",
        "stop_reason",
        "stop_sequence",
        "usage",
    }
    assert wire["usage"] == server.usages[0].as_json()
    assert set(wire["usage"]) == {
        "input_tokens",
        "output_tokens",
        "cache_creation_input_tokens",
        "cache_read_input_tokens",
    }


async def test_tool_turn_then_tool_results_round_trip() -> None:
    script = [
        tool_turn(
            ToolCall("view", {"path": "README.md"}),
            ToolCall("glob", {"pattern": "*.py"}),
            text="Let me look.",
        ),
        text_turn("README.md describes plancord."),
    ]
    async with FakeAnthropicServer(script) as server:
        client = server.client()
        body = base_body()
        first = await client.messages.create(**body)

        assert first.stop_reason == "tool_use"
        assert isinstance(first.content[0], TextBlock)
        uses = [block for block in first.content if isinstance(block, ToolUseBlock)]
        assert [(use.name, use.input) for use in uses] == [
            ("view", {"path": "README.md"}),
            ("glob", {"pattern": "*.py"}),
        ]
        assert all(use.id.startswith("toolu_") for use in uses)
        assert len({use.id for use in uses}) == 2

        body["messages"] += [
            first.to_param(),
            user(*(tool_result(use.id, f"result of {use.name}") for use in uses)),
        ]
        second = await client.messages.create(**body)

    assert second.content == [TextBlock(type="text", text="README.md describes plancord.")]
    assert server.rejections == []
    assert len(server.requests) == 2


async def test_script_function_sees_the_tool_results() -> None:
    seen_results: list[str] = []

    def agent(request: dict[str, Any]) -> Turn:
        last = request["messages"][-1]["content"]
        results = [b for b in last if isinstance(b, dict) and b["type"] == "tool_result"]
        if not results:
            return tool_turn(ToolCall("view", {"path": "README.md"}, id="toolu_readme"))
        seen_results.extend(str(result["content"]) for result in results)
        return text_turn(f"The file says: {results[0]['content']}")

    async with FakeAnthropicServer(agent) as server:
        client = server.client()
        body = base_body()
        first = await client.messages.create(**body)
        body["messages"] += [first.to_param(), user(tool_result("toolu_readme", "# plancord"))]
        second = await client.messages.create(**body)

    assert seen_results == ["# plancord"]
    assert second.content == [TextBlock(type="text", text="The file says: # plancord")]


async def test_async_script_function_is_awaited() -> None:
    async def agent(request: dict[str, Any]) -> Turn:
        return text_turn(f"{len(request['messages'])} message(s)")

    async with FakeAnthropicServer(agent) as server:
        message = await server.client().messages.create(**base_body())

    assert message.content == [TextBlock(type="text", text="1 message(s)")]


async def test_script_function_error_is_reported_not_retried() -> None:
    def broken(request: dict[str, Any]) -> Turn:
        raise KeyError("no such tool")

    async with FakeAnthropicServer(broken) as server:
        with pytest.raises(anthropic.InternalServerError, match="script function raised"):
            await server.client(max_retries=2).messages.create(**base_body())

    assert len(server.requests) == 1
    assert isinstance(server.script_errors[0], KeyError)


async def test_refusal_max_tokens_and_thinking_turns_parse() -> None:
    script = [
        refusal_turn("I can't help with that.", category="cyber"),
        max_tokens_turn("The plan has three st"),
        Reply((Thinking("The user wants a summary."), Text("Summary."))),
    ]
    async with FakeAnthropicServer(script) as server:
        client = server.client()
        refused = await client.messages.create(**base_body())
        cut = await client.messages.create(**{**base_body(), "max_tokens": 7})
        thought = await client.messages.create(**base_body())

    assert refused.stop_reason == "refusal"
    assert refused.stop_details is not None
    assert refused.stop_details.category == "cyber"
    assert cut.stop_reason == "max_tokens"
    assert cut.content == [TextBlock(type="text", text="The plan has three st")]
    assert cut.usage.output_tokens == 7
    assert [block.type for block in thought.content] == ["thinking", "text"]


def without(key: str) -> Callable[[Body], None]:
    def mutate(body: Body) -> None:
        del body[key]

    return mutate


def setting(key: str, value: Any) -> Callable[[Body], None]:
    def mutate(body: Body) -> None:
        body[key] = value

    return mutate


def conversation(*messages: Body) -> Callable[[Body], None]:
    return setting("messages", list(messages))


def tool_changed(**changes: Any) -> Callable[[Body], None]:
    def mutate(body: Body) -> None:
        body["tools"][0].update(changes)

    return mutate


def tool_without(key: str) -> Callable[[Body], None]:
    def mutate(body: Body) -> None:
        del body["tools"][0][key]

    return mutate


def without_tools_but_tool_choice(body: Body) -> None:
    del body["tools"]
    body["tool_choice"] = {"type": "any"}


def cache_marks(count: int) -> Callable[[Body], None]:
    def mutate(body: Body) -> None:
        body["system"] = [text(f"part {n}", cache_control=EPHEMERAL) for n in range(count)]

    return mutate


ASKED = user(text("Read README.md"))
VIEWED = assistant(text("Reading."), tool_use("toolu_1", path="README.md"))

VIOLATIONS: list[tuple[str, Callable[[Body], None], str]] = [
    ("model missing", without("model"), "model: Field required"),
    ("max_tokens missing", without("max_tokens"), "max_tokens: Field required"),
    ("max_tokens zero", setting("max_tokens", 0), "max_tokens: Input should be greater than"),
    ("max_tokens not int", setting("max_tokens", "64"), "max_tokens: Input should be a valid int"),
    ("messages missing", without("messages"), "messages: Field required"),
    ("messages empty", setting("messages", []), "messages: at least one message is required"),
    ("unknown parameter", setting("temperture", 0.5), "temperture: Extra inputs are not permitted"),
    (
        "first message from assistant",
        conversation(assistant(text("Hi")), user(text("Hi"))),
        'first message must use the "user" role',
    ),
    (
        "two user messages in a row",
        conversation(ASKED, user(text("Please?"))),
        'roles must alternate between "user" and "assistant", but found multiple "user" roles',
    ),
    (
        "two assistant messages in a row",
        conversation(ASKED, assistant(text("One")), assistant(text("Two"))),
        'found multiple "assistant" roles in a row',
    ),
    (
        "system role in messages",
        conversation({"role": "system", "content": "Be brief."}, ASKED),
        'Unexpected role "system"',
    ),
    (
        "content neither string nor list",
        conversation({"role": "user", "content": 42}),
        "messages.0.content: Input should be a valid string or a valid list",
    ),
    (
        "empty content",
        conversation(user()),
        "messages.0: all messages must have non-empty content",
    ),
    (
        "unknown block type",
        conversation(user({"type": "video", "url": "x"})),
        "messages.0.content.0: Input tag 'video' found using 'type' does not match",
    ),
    (
        "tool_use in a user message",
        conversation(user(tool_use("toolu_1"))),
        "`tool_use` blocks are not allowed in user messages",
    ),
    ("empty text block", conversation(user(text(""))), "text content blocks must be non-empty"),
    (
        "whitespace text block",
        conversation(user(text("  \n"))),
        "text content blocks must contain non-whitespace text",
    ),
    (
        "tool_use not answered",
        conversation(ASKED, VIEWED, user(text("Never mind"))),
        "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: "
        "toolu_1",
    ),
    (
        "prefill with pending tool_use",
        conversation(ASKED, VIEWED),
        "messages.1: `tool_use` ids were found without `tool_result` blocks",
    ),
    (
        "tool_result after text",
        conversation(ASKED, VIEWED, user(text("Here:"), tool_result("toolu_1"))),
        "messages.2: Did not find 1 `tool_result` block(s) at the beginning of this message",
    ),
    (
        "tool_result without tool_use",
        conversation(ASKED, assistant(text("Done.")), user(tool_result("toolu_9"))),
        "messages.2.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_9",
    ),
    (
        "tool_use ids not unique",
        conversation(
            ASKED,
            assistant(tool_use("toolu_1"), tool_use("toolu_1", path="x")),
            user(tool_result("toolu_1")),
        ),
        "messages.1.content.1: `tool_use` ids must be unique",
    ),
    (
        "tool_use id malformed",
        conversation(ASKED, assistant(tool_use("toolu 1")), user(tool_result("toolu 1"))),
        "messages.1.content.0.tool_use.id: String should match pattern",
    ),
    (
        "empty text inside tool_result",
        conversation(ASKED, VIEWED, user(tool_result("toolu_1", [text("")]))),
        "text content blocks must be non-empty",
    ),
    (
        "final assistant ends with whitespace",
        conversation(ASKED, assistant(text("The answer is "))),
        "final assistant content cannot end with trailing whitespace",
    ),
    (
        "tool name with a dot",
        tool_changed(name="fs.view"),
        "tools.0.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'",
    ),
    (
        "tool name too long",
        tool_changed(name="v" * 65),
        "tools.0.custom.name: String should match pattern",
    ),
    ("tool names not unique", tool_changed(name="glob"), "tools: Tool names must be unique."),
    (
        "tool without input_schema",
        tool_without("input_schema"),
        "tools.0.custom.input_schema: Field required",
    ),
    (
        "input_schema not an object schema",
        tool_changed(input_schema={"type": "string"}),
        "tools.0.custom.input_schema.type: Input should be 'object'",
    ),
    (
        "system block not text",
        setting("system", [{"type": "image", "source": {"type": "url", "url": "x"}}]),
        "system.0.type: Input should be 'text'",
    ),
    ("system text empty", setting("system", [text("")]), "system: text content blocks must be"),
    (
        "five cache_control blocks",
        cache_marks(5),
        "A maximum of 4 blocks with cache_control may be provided. Found 5.",
    ),
    (
        "cache_control of unknown type",
        tool_changed(cache_control={"type": "persistent"}),
        "tools.0.custom.cache_control.type: Input should be 'ephemeral'",
    ),
    (
        "cache_control with unknown ttl",
        tool_changed(cache_control={"type": "ephemeral", "ttl": "2h"}),
        "cache_control.ttl: Input should be '5m' or '1h'",
    ),
    (
        "cache_control with extra key",
        tool_changed(cache_control={"type": "ephemeral", "scope": "org"}),
        "cache_control.scope: Extra inputs are not permitted",
    ),
    (
        "1h breakpoint after a 5m one",
        setting(
            "system",
            [
                text("stable", cache_control=EPHEMERAL),
                text("longer", cache_control={"type": "ephemeral", "ttl": "1h"}),
            ],
        ),
        "ttl='1h' must not come after a block with ttl='5m'",
    ),
    (
        "tool_choice without tools",
        without_tools_but_tool_choice,
        "tool_choice may only be specified while providing tools",
    ),
    (
        "tool_choice naming an unknown tool",
        setting("tool_choice", {"type": "tool", "name": "bash"}),
        "tool_choice.tool.name: tool 'bash' is not one of the `tools`",
    ),
]


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [pytest.param(mutate, expected, id=name) for name, mutate, expected in VIOLATIONS],
)
async def test_rule_violation_is_a_bad_request(
    server: FakeAnthropicServer,
    client: AsyncAnthropic,
    mutate: Callable[[Body], None],
    expected: str,
) -> None:
    body = base_body()
    mutate(body)

    with pytest.raises(anthropic.BadRequestError) as raised:
        await post(client, body)

    assert raised.value.status_code == 400
    error = raised.value.body
    assert isinstance(error, dict)
    assert error["type"] == "error"
    assert error["error"]["type"] == "invalid_request_error"
    assert expected in error["error"]["message"]
    assert [rejection.message for rejection in server.rejections] == [error["error"]["message"]]
    assert server.turns_served == 0


async def test_rejected_request_does_not_consume_a_turn(
    server: FakeAnthropicServer, client: AsyncAnthropic
) -> None:
    with pytest.raises(anthropic.BadRequestError):
        await post(client, {**base_body(), "messages": []})

    message = await post(client, base_body())

    assert message.content == [TextBlock(type="text", text="fine")]
    assert len(server.requests) == 2


@pytest.mark.parametrize(
    "messages",
    [
        pytest.param([ASKED, assistant(text("The answer is"))], id="assistant prefill"),
        pytest.param([ASKED, {"role": "assistant", "content": ""}], id="empty final assistant"),
        pytest.param(
            [ASKED, VIEWED, user(tool_result("toolu_1", is_error=True), text("Go on"))],
            id="tool_result then text",
        ),
        pytest.param(
            [
                ASKED,
                VIEWED,
                user(tool_result("toolu_1", [text("# plancord", cache_control=EPHEMERAL)])),
            ],
            id="cache_control inside tool_result",
        ),
        pytest.param(
            [
                ASKED,
                assistant(
                    {
                        "type": "thinking",
                        "thinking": "Look first.",
                        "signature": thinking_signature("Look first."),
                    },
                    tool_use("toolu_1", path="README.md"),
                ),
                user(tool_result("toolu_1")),
            ],
            id="thinking before tool_use",
        ),
    ],
)
async def test_valid_conversations_are_accepted(
    server: FakeAnthropicServer, client: AsyncAnthropic, messages: list[Body]
) -> None:
    await post(client, {**base_body(), "messages": messages})

    assert server.rejections == []


async def test_missing_api_key_is_an_authentication_error(
    server: FakeAnthropicServer, client: AsyncAnthropic
) -> None:
    with pytest.raises(anthropic.AuthenticationError) as raised:
        await client.messages.create(**base_body(), extra_headers={"Authorization": Omit()})

    assert raised.value.status_code == 401
    assert server.rejections[0].error_type == "authentication_error"
    assert server.turns_served == 0


async def test_key_given_as_x_api_key_is_accepted(
    server: FakeAnthropicServer, client: AsyncAnthropic
) -> None:
    await client.messages.create(
        **base_body(), extra_headers={"Authorization": Omit(), "x-api-key": "test-key"}
    )

    assert server.rejections == []


async def test_wrong_api_key_is_rejected_when_the_server_expects_one() -> None:
    async with FakeAnthropicServer([text_turn("hi")], api_key="sk-right") as server:
        with pytest.raises(anthropic.AuthenticationError, match="invalid x-api-key"):
            await server.client(api_key="sk-wrong").messages.create(**base_body())
        message = await server.client(api_key="sk-right").messages.create(**base_body())

    assert message.content == [TextBlock(type="text", text="hi")]


async def test_missing_anthropic_version_is_a_bad_request(client: AsyncAnthropic) -> None:
    with pytest.raises(anthropic.BadRequestError, match="anthropic-version: header is required"):
        await client.messages.create(**base_body(), extra_headers={"anthropic-version": Omit()})


@pytest.mark.parametrize("limit", [None, 200_000])
async def test_a_request_over_the_size_limit_is_refused_413_as_the_api_does(
    limit: int | None,
) -> None:
    """The API's front refuses a Messages request over 32 MB with 413 ``request_too_large``
    and the API's error shape; a body under the limit is served."""
    async with FakeAnthropicServer([text_turn("fits")]) as server:
        if limit is not None:
            server.max_request_bytes = limit
        size = server.max_request_bytes + 1
        body = base_body()
        body["messages"] = [user(text("x" * size))]
        with pytest.raises(anthropic.APIStatusError) as raised:
            await server.client(max_retries=0).messages.create(**body)
        message = await server.client().messages.create(**base_body())

    assert raised.value.status_code == 413
    assert raised.value.body == {
        "type": "error",
        "error": {
            "type": "request_too_large",
            "message": "Request exceeds the maximum allowed number of bytes.",
        },
        "request_id": raised.value.body["request_id"],  # type: ignore[index]
    }
    assert [r.error_type for r in server.rejections] == ["request_too_large"]
    assert message.content == [TextBlock(type="text", text="fits")]


async def test_exhausted_script_answers_500_and_is_recorded() -> None:
    async with FakeAnthropicServer([text_turn("only one")]) as server:
        client = server.client(max_retries=2)
        await client.messages.create(**base_body())
        with pytest.raises(anthropic.InternalServerError, match="script exhausted after 1 turn"):
            await client.messages.create(**base_body())

    assert server.script_exhausted
    assert server.unscripted == [server.requests[1]]
    assert len(server.requests) == 2


@pytest.mark.parametrize(
    ("status", "error_class", "error_type"),
    [
        (529, anthropic.OverloadedError, "overloaded_error"),
        (500, anthropic.InternalServerError, "api_error"),
        (429, anthropic.RateLimitError, "rate_limit_error"),
    ],
)
async def test_error_turn_raises_without_retries(
    status: int, error_class: type[anthropic.APIStatusError], error_type: str
) -> None:
    async with FakeAnthropicServer([error_turn(status)]) as server:
        with pytest.raises(error_class) as raised:
            await server.client(max_retries=0).messages.create(**base_body())

    assert raised.value.status_code == status
    error = raised.value.body
    assert isinstance(error, dict)
    assert error["error"]["type"] == error_type
    assert len(server.requests) == 1


async def test_error_turns_are_retried_by_the_sdk_then_succeed() -> None:
    script: list[Turn] = [error_turn(529), error_turn(500), text_turn("third time lucky")]
    async with FakeAnthropicServer(script) as server:
        message = await server.client(max_retries=2).messages.create(**base_body())

    assert message.content == [TextBlock(type="text", text="third time lucky")]
    assert len(server.requests) == 3
    assert server.requests[0] == server.requests[2]
    assert len(server.usages) == 1


async def test_second_call_with_the_same_prefix_reads_the_cache() -> None:
    async with FakeAnthropicServer([text_turn("one"), text_turn("two")]) as server:
        client = server.client()
        first = usage_of(await client.messages.create(**cached_body()))
        second = usage_of(await client.messages.create(**cached_body()))

    fresh, written, read = first
    assert written > 0
    assert read == 0
    assert fresh > 0
    assert second == (fresh, 0, written)


async def test_changing_the_tools_invalidates_the_cache() -> None:
    async with FakeAnthropicServer([text_turn("one"), text_turn("two")]) as server:
        client = server.client()
        _, first_written, _ = usage_of(await client.messages.create(**cached_body()))
        changed = cached_body()
        changed["tools"][1]["description"] = "List files matching a glob pattern."
        _, written, read = usage_of(await client.messages.create(**changed))

    assert read == 0
    assert written > first_written


async def test_another_model_does_not_share_the_cache() -> None:
    async with FakeAnthropicServer([text_turn("one"), text_turn("two")]) as server:
        client = server.client()
        first = usage_of(await client.messages.create(**cached_body()))
        other_model = {**cached_body(), "model": "claude-other-fake-model"}
        second = usage_of(await client.messages.create(**other_model))

    assert second == first


async def test_changing_the_system_keeps_the_tools_breakpoint() -> None:
    async with FakeAnthropicServer([text_turn("one"), text_turn("two")]) as server:
        client = server.client()
        body = cached_body()
        body["tools"][-1]["cache_control"] = EPHEMERAL
        await client.messages.create(**body)
        body["system"] = [text("A different system prompt.", cache_control=EPHEMERAL)]
        _, written, read = usage_of(await client.messages.create(**body))

    tools_tokens = sum(anthropic_server.estimate_tokens({"tool": tool}) for tool in (VIEW, GLOB))
    assert read == tools_tokens
    assert written > 0


async def moving_breakpoint_usage(server: FakeAnthropicServer) -> tuple[int, int]:
    """Cache one turn, then send the next with the breakpoint moved two blocks on.

    Returns what the first call wrote and what the second read.
    """
    client = server.client()
    first = await client.messages.create(
        **cached_body(user(text("Read README.md", cache_control=EPHEMERAL)))
    )
    second = await client.messages.create(
        **cached_body(
            user(text("Read README.md")),
            assistant(text("one")),
            user(text("Now summarise it.", cache_control=EPHEMERAL)),
        )
    )
    _, first_written, _ = usage_of(first)
    fresh, written, read = usage_of(second)
    assert fresh == 0
    assert written > 0
    return first_written, read


async def test_moving_breakpoint_reads_the_previous_turns_prefix() -> None:
    async with FakeAnthropicServer([text_turn("one"), text_turn("two")]) as server:
        written, read = await moving_breakpoint_usage(server)

    assert read == written


async def test_lookback_window_limits_how_far_back_a_hit_is_found() -> None:
    script = [text_turn("one"), text_turn("two")]
    async with FakeAnthropicServer(script, cache_lookback_blocks=1) as server:
        written, read = await moving_breakpoint_usage(server)

    first_user_block = anthropic_server.estimate_tokens(
        {"role": "user", "block": text("Read README.md")}
    )
    assert read == written - first_user_block


async def test_prefix_below_the_minimum_is_not_cached() -> None:
    script = [text_turn("one"), text_turn("two")]
    async with FakeAnthropicServer(script, min_cacheable_tokens=100_000) as server:
        client = server.client()
        first = usage_of(await client.messages.create(**cached_body()))
        second = usage_of(await client.messages.create(**cached_body()))

    assert first == second
    assert second[1:] == (0, 0)


async def test_top_level_cache_control_caches_the_whole_prompt() -> None:
    async with FakeAnthropicServer([text_turn("one"), text_turn("two")]) as server:
        client = server.client()
        body = {**base_body(), "cache_control": EPHEMERAL}
        first = usage_of(await client.messages.create(**body))
        second = usage_of(await client.messages.create(**body))

    fresh, written, _ = first
    assert fresh == 0
    assert second == (0, 0, written)


async def test_usage_adds_up_to_count_tokens() -> None:
    async with FakeAnthropicServer([text_turn("one")]) as server:
        client = server.client()
        body = cached_body()
        counted = await client.messages.count_tokens(
            model=MODEL, system=body["system"], tools=body["tools"], messages=body["messages"]
        )
        message = await client.messages.create(**body)

    assert counted.input_tokens == sum(usage_of(message))
    assert counted.input_tokens == server.usages[0].total_input_tokens


async def test_forgotten_cache_is_written_again() -> None:
    async with FakeAnthropicServer([text_turn("one"), text_turn("two")]) as server:
        client = server.client()
        first = usage_of(await client.messages.create(**cached_body()))
        server.cache.clear()
        second = usage_of(await client.messages.create(**cached_body()))

    assert second == first


async def test_streaming_delivers_the_same_message() -> None:
    turn = tool_turn(ToolCall("view", {"path": "docs/a very long path/README.md"}), text="Look.")
    async with FakeAnthropicServer([turn, turn]) as server:
        client = server.client()
        async with client.messages.stream(**base_body()) as stream:
            streamed = await stream.get_final_message()
        plain = await client.messages.create(**base_body())

    assert streamed.stop_reason == plain.stop_reason == "tool_use"
    assert [block.type for block in streamed.content] == ["text", "tool_use"]
    use = streamed.content[1]
    assert isinstance(use, ToolUseBlock)
    assert use.input == {"path": "docs/a very long path/README.md"}
    assert streamed.usage.output_tokens == plain.usage.output_tokens
    assert streamed.usage.input_tokens == plain.usage.input_tokens


async def test_unknown_path_is_not_found(client: AsyncAnthropic) -> None:
    with pytest.raises(anthropic.NotFoundError):
        await client.post("/v1/complete", body={}, cast_to=Message)


async def test_fixture_starts_and_stops_servers(fake_anthropic: FakeAnthropicServers) -> None:
    server = await fake_anthropic.start([text_turn("from the fixture")])
    more = await fake_anthropic.start()
    more.add_turns(text_turn("added later"))

    first = await server.client().messages.create(**base_body())
    second = await more.client().messages.create(**base_body())

    assert first.content == [TextBlock(type="text", text="from the fixture")]
    assert second.content == [TextBlock(type="text", text="added later")]
