"""What each model accepts: its output-token ceiling and its context window.

The Messages API refuses a request whose ``max_tokens`` exceeds the model's ceiling (a 400
that would fail every turn of an agent configured with a large ``max_tokens``), so the
runtime bounds ``max_tokens`` per model before sending. The fake Messages API server uses
the same table to refuse unknown model ids and oversized ``max_tokens`` as the service does.

A model missing from the table is not refused here: models are released faster than this
table is updated, so an unknown id is sent with ``max_tokens`` bounded by
``UNKNOWN_MODEL_MAX_TOKENS``, which every current model accepts, and the API decides.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ModelLimits:
    max_output_tokens: int
    context_window_tokens: int = 200_000


@dataclass(frozen=True, slots=True)
class ModelCapabilities:
    """What a model takes in a request and how it answers, as the API documents it.

    The runtime shapes every request from this (never from the model id's spelling), so a
    model that arrives is one row of the table."""

    thinking_types: frozenset[str] = frozenset({"enabled", "disabled"})
    """The ``thinking.type`` values the model accepts."""
    thinks_by_default: bool = False
    """Whether the model thinks (adaptively) when the request has no ``thinking``."""
    preserved_thinking: bool = False
    """Whether thinking blocks sent back are prefix-checked (bound to their conversation)."""
    forced_tool_choice: bool = True
    """Whether ``tool_choice`` ``any``/``tool`` is accepted."""
    system_messages: bool = False
    """Whether ``role: "system"`` entries are accepted inside ``messages``."""
    effort: bool = False
    """Whether ``output_config.effort`` is accepted."""
    structured_outputs: bool = False
    """Whether ``output_config.format`` (a JSON schema the answer follows) is accepted."""


CONSERVATIVE = ModelCapabilities(
    thinking_types=frozenset(),
    forced_tool_choice=False,
)
"""For a model id not in the table: send nothing a model might refuse (no ``thinking``
parameter, no forced tool choice, no system messages, no effort, no structured outputs)."""


UNKNOWN_MODEL_MAX_TOKENS = 8192

MODEL_LIMITS: dict[str, ModelLimits] = {
    "claude-sonnet-5-5": ModelLimits(64_000),
    "claude-opus-4-6": ModelLimits(128_000),
    "claude-sonnet-4-6": ModelLimits(128_000),
    "claude-opus-4-5": ModelLimits(64_000),
    "claude-opus-4-5-20251101": ModelLimits(64_000),
    "claude-sonnet-4-5": ModelLimits(64_000),
    "claude-sonnet-4-5-20250929": ModelLimits(64_000),
    "claude-haiku-4-5": ModelLimits(64_000),
    "claude-haiku-4-5-20251001": ModelLimits(64_000),
    "claude-opus-4-1": ModelLimits(32_000),
    "claude-opus-4-1-20250805": ModelLimits(32_000),
    "claude-opus-4-0": ModelLimits(32_000),
    "claude-opus-4-20250514": ModelLimits(32_000),
    "claude-sonnet-4-0": ModelLimits(64_000),
    "claude-sonnet-4-20250514": ModelLimits(64_000),
    "claude-3-7-sonnet-20250219": ModelLimits(64_000),
    "claude-3-5-haiku-20241022": ModelLimits(8_192),
    "claude-3-haiku-20240307": ModelLimits(4_096),
}


def limits_of(model: str) -> ModelLimits | None:
    return MODEL_LIMITS.get(model)


def bounded_max_tokens(model: str, wanted: int) -> int:
    """``wanted``, lowered to what ``model`` accepts."""
    limits = limits_of(model)
    ceiling = limits.max_output_tokens if limits else UNKNOWN_MODEL_MAX_TOKENS
    return max(1, min(wanted, ceiling))


MODEL_CAPABILITIES: dict[str, ModelCapabilities] = {
    # Filled from the models pages (see the module docstring); one row per model id.
    "claude-sonnet-5-5": ModelCapabilities(
        thinking_types=frozenset({"adaptive", "between_tools"}),
        thinks_by_default=True,
        preserved_thinking=True,
        forced_tool_choice=False,
        system_messages=True,
        effort=True,
        structured_outputs=True,
    ),
}


def capabilities_of(model: str) -> ModelCapabilities:
    """What ``model`` takes; ``CONSERVATIVE`` for an id the table does not know."""
    return MODEL_CAPABILITIES.get(model, CONSERVATIVE)
