"""The Messages API's wire vocabulary the fake speaks: JSON objects, stop reasons, limits
and the model ids only the fake knows."""

from __future__ import annotations

import re
from typing import Any, Literal, TypeAlias

from plancord.llm.models import ModelLimits

JsonObject: TypeAlias = dict[str, Any]
StopReason: TypeAlias = Literal[
    "end_turn",
    "max_tokens",
    "stop_sequence",
    "tool_use",
    "pause_turn",
    "refusal",
    "model_context_window_exceeded",
]

MAX_CACHE_BREAKPOINTS = 4
FAKE_MODELS: dict[str, ModelLimits] = {
    "claude-fake-test-model": ModelLimits(64_000),
    "claude-other-fake-model": ModelLimits(64_000),
}
"""Model ids only this server knows, for tests that do not want to name a real model; the
rules they follow are ``service_rules.LAX_TEST_RULE``."""
TOOL_NAME_PATTERN = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
TOOL_USE_ID_PATTERN = re.compile(r"^[a-zA-Z0-9_-]+$")
