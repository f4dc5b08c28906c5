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
