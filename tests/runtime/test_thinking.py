"""Extended thinking: switched per agent by the config, the user sees the agent's text and
tool activity whatever blocks carry them, and thinking blocks go back to the API unmodified
with their signatures (the fake refuses an edited one, as the API does)."""

from __future__ import annotations

from typing import Any

import anthropic
import pytest

from plancord.agent.agent_settings import AgentOverrides, ThinkingSettings
from plancord.agent.runtime import RuntimeSettings
from plancord.core.planning import Phase
from tests.fakes.anthropic_server import (
    FakeAnthropicServer,
    Reply,
    Text,
    Thinking,
    ToolCall,
    text_turn,
)
from tests.fakes.bodies import assistant, base_body, text, user
from tests.runtime.conftest import MODEL, Harness


def thinking_settings(**agents: AgentOverrides) -> RuntimeSettings:
    return RuntimeSettings(
        default_model=MODEL, thinking=ThinkingSettings(enabled=False), agents=agents
    )


EXTENDED = "claude-haiku-4-5"
"""A model with extended thinking only: ``thinking: true`` is ``enabled`` with a budget."""


async def test_a_thinking_conversation_with_tool_calls_shows_the_text(make_harness: Any) -> None:
    """Display ``omitted``, as plancord asks: the reasoning comes back empty, with its
    signature, and goes back to the API exactly so; the channel sees the text blocks."""
    harness: Harness = await make_harness(
        [
            Reply(
                (
                    Thinking(""),
                    Text("Let me look."),
                    ToolCall("glob", {"pattern": "*"}),
                ),
                stop_reason="tool_use",
            ),
            Reply((Thinking(""), Text("There is a README.")), "end_turn"),
        ],
        runtime_settings=thinking_settings(ada=AgentOverrides(model=EXTENDED, thinking=True)),
    )
    await harness.say("what is here?")

    assert harness.channel.said == ["Let me look.", "There is a README."]
    assert harness.channel.activity_lines == ["glob(*)"]
    first, second = harness.server.requests
    assert first["thinking"] == {"type": "enabled", "budget_tokens": 4096, "display": "omitted"}
    assert first["max_tokens"] > 4096
    # The thinking block went back exactly as the API sent it.
    sent_back = second["messages"][1]["content"][0]
    assert sent_back == harness.server.responses[0]["content"][0]
    assert harness.server.rejections == []


async def test_thinking_is_off_unless_the_agent_or_config_turns_it_on(make_harness: Any) -> None:
    harness: Harness = await make_harness(
        [text_turn("plain")],
        runtime_settings=thinking_settings(
            ada=AgentOverrides(model=EXTENDED), bea=AgentOverrides(thinking=True)
        ),
    )
    await harness.say("hi")
    assert harness.server.requests[0]["model"] == EXTENDED
    assert "thinking" not in harness.server.requests[0]


async def test_the_config_model_of_an_agent_is_used(make_harness: Any) -> None:
    harness: Harness = await make_harness(
        [text_turn("ok")],
        runtime_settings=thinking_settings(ada=AgentOverrides(model="claude-other-fake-model")),
    )
    await harness.say("hi")
    assert harness.server.requests[0]["model"] == "claude-other-fake-model"


async def test_an_edited_thinking_block_is_refused() -> None:
    async with FakeAnthropicServer(
        [Reply((Thinking("secret plan"), Text("hi")), "end_turn"), text_turn("unused")]
    ) as server:
        client = server.client()
        body = base_body()
        first = await client.messages.create(**body)
        reply = first.to_param()
        edited = dict(reply["content"][0])  # type: ignore[index]
        edited["thinking"] = "a different plan"
        body["messages"] += [assistant(edited, {"type": "text", "text": "hi"}), user(text("go"))]
        with pytest.raises(anthropic.BadRequestError, match="Invalid `signature`"):
            await client.messages.create(**body)
    assert len(server.rejections) == 1


async def test_the_config_role_of_an_agent_decides_its_default_phase(make_harness: Any) -> None:
    """ada was created without a role; the config's agents.ada.role (coordinator) applies."""
    harness: Harness = await make_harness(
        [text_turn("planning")],
        runtime_settings=thinking_settings(ada=AgentOverrides(role="coordinator")),
    )
    assert (await harness.store.get_agent("ada")).role is None
    await harness.say("refactor everything")
    assert (await harness.store.load_state("ada")).phase is Phase.GATHERING
