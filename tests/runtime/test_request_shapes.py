"""The ``thinking``/``output_config`` fields and betas each model gets, as its documentation
says it takes them: the table of shapes, the request the runtime builds from the config, and
the properties no combination of settings may break (never a type the model refuses, never
``display: "summarized"``, never a sampling parameter)."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from plancord.agent.agent_settings import AgentOverrides, ThinkingSettings
from plancord.agent.runtime import RuntimeSettings
from plancord.llm.models import (
    EFFORTS,
    MODEL_CAPABILITIES,
    MODEL_LIMITS,
    RETIRED_MODELS,
    capabilities_of,
    retired_model_message,
)
from plancord.llm.thinking import mapping_notes, thinking_fields
from tests.fakes.anthropic_server import text_turn
from tests.runtime.conftest import Harness

UPDATES = ("thinking-display-updates-2026-08-18",)
BINDING = "thinking-binding-controls-2026-08-01"
ADAPTIVE_UPDATES = {"type": "adaptive", "display": "updates"}
ADAPTIVE_OMITTED = {"type": "adaptive", "display": "omitted"}


SHAPES = [
    # (model, thinking, effort) -> (thinking field, output_config, betas)
    ("claude-sonnet-5-5", None, None, ADAPTIVE_UPDATES, None, UPDATES),
    ("claude-sonnet-5-5", True, "medium", ADAPTIVE_UPDATES, {"effort": "medium"}, UPDATES),
    ("claude-sonnet-5-5", False, None, {"type": "between_tools"}, None, ()),
    ("claude-sonnet-5-5", False, "low", {"type": "between_tools"}, {"effort": "low"}, ()),
    # between_tools refuses xhigh/max: thinking adaptive, as the docs say to.
    ("claude-sonnet-5-5", False, "max", ADAPTIVE_UPDATES, {"effort": "max"}, UPDATES),
    ("claude-opus-5-5", None, None, ADAPTIVE_UPDATES, None, UPDATES),
    ("claude-opus-5-5", False, "low", ADAPTIVE_UPDATES, {"effort": "low"}, UPDATES),
    ("claude-fable-5-2", False, None, ADAPTIVE_UPDATES, None, UPDATES),
    ("claude-haiku-5-5", None, None, ADAPTIVE_OMITTED, None, ()),
    ("claude-haiku-5-5", False, "high", {"type": "disabled"}, {"effort": "high"}, ()),
    ("claude-haiku-5-5", False, "xhigh", ADAPTIVE_OMITTED, {"effort": "xhigh"}, ()),
    ("claude-sonnet-5", False, None, {"type": "disabled"}, None, ()),
    ("claude-opus-4-8", None, "xhigh", None, {"effort": "xhigh"}, ()),
    ("claude-opus-4-8", True, None, ADAPTIVE_OMITTED, None, ()),
    # Opus 4.6 predates xhigh: the nearest lower level.
    ("claude-opus-4-6", True, "xhigh", ADAPTIVE_OMITTED, {"effort": "high"}, ()),
    ("claude-sonnet-4-6", False, None, None, None, ()),
    (
        "claude-haiku-4-5",
        True,
        "high",
        {"type": "enabled", "budget_tokens": 4096, "display": "omitted"},
        None,
        (),
    ),
    ("claude-haiku-4-5", None, None, None, None, ()),
    # An id the table does not know gets nothing it might refuse.
    ("claude-unknown-9", True, "high", None, None, ()),
]


@pytest.mark.parametrize(("model", "thinking", "effort", "field", "config", "betas"), SHAPES)
def test_each_model_gets_the_shape_its_docs_give(
    model: str,
    thinking: bool | None,
    effort: str | None,
    field: dict[str, Any] | None,
    config: dict[str, Any] | None,
    betas: tuple[str, ...],
) -> None:
    shape = thinking_fields(model, thinking=thinking, effort=effort, budget_tokens=4096)
    assert shape == (field, config, betas)


def test_drop_block_is_asked_only_where_thinking_is_adaptive_and_bound() -> None:
    bound = thinking_fields(
        "claude-sonnet-5-5",
        thinking=None,
        effort=None,
        budget_tokens=0,
        drop_mismatched_thinking=True,
    )
    assert bound.thinking == {
        **ADAPTIVE_UPDATES,
        "block_binding": {"prefix_mismatch_behavior": "drop_block"},
    }
    assert bound.betas == (*UPDATES, BINDING)
    off = thinking_fields(
        "claude-sonnet-5-5",
        thinking=False,
        effort=None,
        budget_tokens=0,
        drop_mismatched_thinking=True,
    )
    assert off.thinking == {"type": "between_tools"} and off.betas == ()
    unbound = thinking_fields(
        "claude-opus-4-8",
        thinking=True,
        effort=None,
        budget_tokens=0,
        drop_mismatched_thinking=True,
    )
    assert unbound.thinking == ADAPTIVE_OMITTED


@pytest.mark.parametrize("model", sorted(MODEL_CAPABILITIES))
def test_no_setting_produces_what_the_model_refuses(model: str) -> None:
    caps = capabilities_of(model)
    for thinking, effort in itertools.product((None, True, False), (None, *EFFORTS)):
        field, config, betas = thinking_fields(
            model, thinking=thinking, effort=effort, budget_tokens=2048
        )
        if field is not None:
            assert field["type"] in caps.thinking_types
            assert field.get("display") in (None, "updates", "omitted")
            if field["type"] in ("disabled", "between_tools") and caps.off_efforts:
                assert (config or {}).get("effort", caps.default_effort) in caps.off_efforts
            if field.get("display") == "updates":
                assert UPDATES[0] in betas
        if config is not None:
            assert set(config) == {"effort"} and config["effort"] in caps.effort_levels
        assert not {"temperature", "top_p", "top_k"} & set(field or {})


def test_the_table_has_limits_for_every_model_and_no_retired_model() -> None:
    assert set(MODEL_CAPABILITIES) == set(MODEL_LIMITS)
    served = [m for m in MODEL_LIMITS if retired_model_message(m) is not None]
    assert served == []
    assert MODEL_LIMITS["claude-sonnet-5-5"].max_output_tokens == 128_000
    assert MODEL_LIMITS["claude-sonnet-5-5"].context_window_tokens == 1_000_000
    for model, caps in MODEL_CAPABILITIES.items():
        assert caps.effort == bool(caps.effort_levels), model
        assert caps.default_effort is None or caps.default_effort in caps.effort_levels, model


def test_a_deprecated_model_is_served_until_its_date() -> None:
    from datetime import date

    assert "claude-opus-4-5" in RETIRED_MODELS
    assert retired_model_message("claude-opus-4-5", date(2027, 1, 21)) is None
    assert retired_model_message("claude-opus-4-5", date(2027, 1, 22)) == (
        "claude-opus-4-5 was retired on January 22, 2027; use claude-opus-5-5 "
        "(set anthropic.model or agents.<name>.model)"
    )
    assert retired_model_message("claude-sonnet-5-5") is None


def test_what_is_sent_differently_is_said() -> None:
    assert mapping_notes("claude-opus-5-5", thinking=False, effort=None) == [
        "claude-opus-5-5 always thinks; thinking: false cannot turn it off"
    ]
    assert mapping_notes("claude-sonnet-5-5", thinking=False, effort="xhigh") == [
        "claude-sonnet-5-5 turns thinking off only at effort low, medium, high; at 'xhigh' it "
        "thinks adaptively"
    ]
    assert mapping_notes("claude-opus-4-6", thinking=None, effort="xhigh") == [
        "claude-opus-4-6 has no effort 'xhigh'; 'high' is sent"
    ]
    assert mapping_notes("claude-sonnet-5-5", thinking=None, effort="high") == []


def settings(model: str, **agent: Any) -> RuntimeSettings:
    return RuntimeSettings(
        thinking=ThinkingSettings(enabled=None, budget_tokens=4096, effort="medium"),
        agents={"ada": AgentOverrides(model=model, **agent)},
    )


async def built(harness: Harness) -> Any:
    """The request the runtime would send for ada's next turn."""
    message = {"role": "user", "content": [{"type": "text", "text": "hi"}]}
    await harness.conversations.append("ada", message, harness.clock.now())
    return await harness.runtime.requests.build_request("ada")


async def test_the_request_follows_the_config_per_model(make_harness: Any) -> None:
    harness: Harness = await make_harness(
        [text_turn("unused")], runtime_settings=settings("claude-sonnet-5-5")
    )
    request = await built(harness)
    assert request.model == "claude-sonnet-5-5"
    assert request.thinking == ADAPTIVE_UPDATES
    assert request.output_config == {"effort": "medium"}
    assert request.betas == UPDATES


async def test_an_agent_that_turns_thinking_off_gets_between_tools(make_harness: Any) -> None:
    harness: Harness = await make_harness(
        [text_turn("unused")],
        runtime_settings=settings("claude-sonnet-5-5", thinking=False, effort="low"),
    )
    request = await built(harness)
    assert request.thinking == {"type": "between_tools"}
    assert request.output_config == {"effort": "low"}
    assert request.betas == ()


async def test_extended_thinking_reaches_the_api_with_room_for_the_answer(
    make_harness: Any,
) -> None:
    """Through the bot and the real client: Haiku 4.5 has extended thinking only, so
    ``thinking: true`` is ``enabled`` with the budget, ``max_tokens`` above it, display
    omitted, and no effort (the model takes none)."""
    harness: Harness = await make_harness(
        [text_turn("plain")],
        runtime_settings=settings("claude-haiku-4-5", thinking=True),
    )
    await harness.say("hi")
    sent = harness.server.requests[0]
    assert sent["thinking"] == {"type": "enabled", "budget_tokens": 4096, "display": "omitted"}
    assert sent["max_tokens"] > 4096
    assert "output_config" not in sent
    assert not {"temperature", "top_p", "top_k"} & sent.keys()
    assert harness.server.rejections == []
    assert harness.channel.said == ["plain"]


def test_the_conversation_s_effort_wins_over_an_edited_config() -> None:
    edited = ThinkingSettings(enabled=False, effort="high")
    shape = edited.request_fields("claude-sonnet-5-5", None, conversation_effort="low")
    assert shape == ({"type": "between_tools"}, {"effort": "low"}, ())
    assert edited.request_fields("claude-sonnet-5-5", None).output_config == {"effort": "high"}
