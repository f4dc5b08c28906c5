"""What each model accepts: its output-token ceiling, its context window, how it thinks, and
when it was retired.

The Messages API refuses a request whose ``max_tokens`` exceeds the model's ceiling, a
``thinking`` type or an effort the model does not take, and every request to a retired id;
each of those would fail every turn of an agent. So the runtime shapes every request from
this table (never from the model id's spelling), and the fake Messages API server refuses
what the table says the service refuses. A model that arrives is one row.

Sources (pages under https://platform.claude.com/docs/en/, read 2026-12-01): the models
overview and each model's page (``models/<model>/overview``: context window, max output,
thinking, default effort), ``models/sonnet-5-5/whats-new-sonnet-5-5`` and its migration
guide (``between_tools``, forced tool use, system messages), ``build-with-claude/effort``
(levels per model), ``build-with-claude/thinking-tool-workflows`` (forced tool use under
adaptive thinking: refused by Opus 5.5, Sonnet 5.5, Fable 5.1, Mythos 5.1),
``build-with-claude/preserved-thinking/fix-bound-to-a-different-conversation`` (the
prefix-checked models), ``about-claude/model-deprecations`` (retirements); and the SDK
2.15.0 (``types/model_param.py``: the ids it knows; ``_data/deprecated_models.py``: dates).

A model missing from the table is not refused here: models are released faster than this
table is updated, so an unknown id is sent with ``max_tokens`` bounded by
``UNKNOWN_MODEL_MAX_TOKENS`` and nothing it might refuse (``CONSERVATIVE``), and the API
decides.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from plancord.llm.retired_models import RETIRED_MODELS, Retirement, retired_model_message

__all__ = [
    "CONSERVATIVE",
    "EFFORTS",
    "MODEL_CAPABILITIES",
    "MODEL_LIMITS",
    "RETIRED_MODELS",
    "UNKNOWN_MODEL_MAX_TOKENS",
    "ModelCapabilities",
    "ModelLimits",
    "Retirement",
    "bounded_max_tokens",
    "capabilities_of",
    "limits_of",
    "retired_model_message",
]

EFFORTS: tuple[str, ...] = ("low", "medium", "high", "xhigh", "max")
"""``output_config.effort`` values, lowest first (sdk/types/output_config_param.py)."""

_ALL = frozenset(EFFORTS)
_UP_TO_HIGH = frozenset({"low", "medium", "high"})
_NO_XHIGH = frozenset({"low", "medium", "high", "max"})


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
    effort_levels: frozenset[str] = frozenset()
    """The ``output_config.effort`` values accepted (empty when ``effort`` is False)."""
    default_effort: str | None = None
    """The effort the API applies when the request names none."""
    off_efforts: frozenset[str] = frozenset()
    """The efforts at which the model's "thinking off" type (``disabled``, or
    ``between_tools`` on Sonnet 5.5) is accepted; empty: every effort, or no effort."""
    progress_display: bool = False
    """Whether ``thinking.display: "updates"`` (beta ``thinking-display-updates-2026-08-18``)
    is accepted: the short progress updates written between tool calls come back as text in
    their thinking blocks, the reasoning stays omitted."""

    @property
    def off_type(self) -> str | None:
        """The ``thinking.type`` that turns thinking off, or None when it cannot be."""
        for kind in ("disabled", "between_tools"):
            if kind in self.thinking_types:
                return kind
        return None


CONSERVATIVE = ModelCapabilities(
    thinking_types=frozenset(),
    forced_tool_choice=False,
)
"""For a model id not in the table: send nothing a model might refuse (no ``thinking``
parameter, no forced tool choice, no system messages, no effort, no structured outputs)."""


UNKNOWN_MODEL_MAX_TOKENS = 8192

_1M = 1_000_000

MODEL_LIMITS: dict[str, ModelLimits] = {
    # models/<model>/overview: "Context window · Max output".
    "claude-fable-5-2": ModelLimits(128_000, _1M),
    "claude-mythos-5-2": ModelLimits(128_000, _1M),  # shares Fable 5.2's specifications
    "claude-opus-5-5": ModelLimits(128_000, _1M),
    "claude-sonnet-5-5": ModelLimits(128_000, _1M),
    "claude-haiku-5-5": ModelLimits(128_000, _1M),
    "claude-fable-5-1": ModelLimits(128_000, _1M),
    "claude-mythos-5-1": ModelLimits(128_000, _1M),
    "claude-fable-5": ModelLimits(128_000, _1M),
    "claude-mythos-5": ModelLimits(128_000, _1M),
    "claude-opus-5": ModelLimits(128_000, _1M),
    "claude-sonnet-5": ModelLimits(128_000, _1M),
    "claude-opus-4-8": ModelLimits(128_000, _1M),
    "claude-opus-4-7": ModelLimits(128_000, _1M),
    "claude-opus-4-6": ModelLimits(128_000),  # 1M behind the context-1m beta only
    "claude-sonnet-4-6": ModelLimits(64_000),
    "claude-opus-4-5": ModelLimits(64_000),  # deprecated: retires 2027-01-22
    "claude-opus-4-5-20251101": ModelLimits(64_000),
    "claude-haiku-4-5": ModelLimits(64_000),
    "claude-haiku-4-5-20251001": ModelLimits(64_000),
}


def limits_of(model: str) -> ModelLimits | None:
    return MODEL_LIMITS.get(model)


def bounded_max_tokens(model: str, wanted: int) -> int:
    """``wanted``, lowered to what ``model`` accepts."""
    limits = limits_of(model)
    ceiling = limits.max_output_tokens if limits else UNKNOWN_MODEL_MAX_TOKENS
    return max(1, min(wanted, ceiling))


def _always_thinking(default_effort: str, *, progress_display: bool) -> ModelCapabilities:
    """Fable 5.x, Mythos 5.x and Opus 5.5: "Adaptive (always on)" (models overview), thinking
    blocks prefix-checked (preserved thinking), forced tool use refused."""
    return ModelCapabilities(
        thinking_types=frozenset({"adaptive"}),
        thinks_by_default=True,
        preserved_thinking=True,
        forced_tool_choice=False,
        effort=True,
        structured_outputs=True,
        effort_levels=_ALL,
        default_effort=default_effort,
        progress_display=progress_display,
    )


def _adaptive_by_default(default_effort: str, *, off_efforts: frozenset[str]) -> ModelCapabilities:
    """Sonnet 5, Opus 5: adaptive thinking on by default, ``disabled`` accepted at efforts up
    to ``high``, ``enabled`` refused (models/sonnet-5/overview; migration guide table)."""
    return ModelCapabilities(
        thinking_types=frozenset({"adaptive", "disabled"}),
        thinks_by_default=True,
        effort=True,
        structured_outputs=True,
        effort_levels=_ALL,
        default_effort=default_effort,
        off_efforts=off_efforts,
    )


def _adaptive_on_request(levels: frozenset[str], *, enabled: bool) -> ModelCapabilities:
    """Opus 4.6 to 4.8, Sonnet 4.6: no thinking unless asked; ``adaptive`` (and, before 4.7,
    the deprecated ``enabled``) on request; effort levels per ``build-with-claude/effort``."""
    types = {"adaptive", "disabled"} | ({"enabled"} if enabled else set())
    return ModelCapabilities(
        thinking_types=frozenset(types),
        effort=True,
        structured_outputs=True,
        effort_levels=levels,
        default_effort="high",
    )


_OPUS_4_5 = ModelCapabilities(
    thinking_types=frozenset({"enabled", "disabled"}),
    effort=True,
    structured_outputs=True,
    effort_levels=_UP_TO_HIGH,
    default_effort="high",
)
_HAIKU_4_5 = ModelCapabilities(thinking_types=frozenset({"enabled", "disabled"}))
_FABLE_5 = replace(_always_thinking("high", progress_display=False), preserved_thinking=False)

MODEL_CAPABILITIES: dict[str, ModelCapabilities] = {
    # Thinking "Adaptive (always on)", default effort high; progress-update display on
    # Sonnet 5.5, Opus 5.5 and Fable 5.x (the SDK's beta display "updates").
    "claude-fable-5-2": _always_thinking("high", progress_display=True),
    "claude-mythos-5-2": _always_thinking("high", progress_display=True),
    "claude-fable-5-1": _always_thinking("high", progress_display=True),
    "claude-mythos-5-1": _always_thinking("high", progress_display=True),
    # models/opus-5-5/overview: "Adaptive (always on)", default effort medium.
    "claude-opus-5-5": _always_thinking("medium", progress_display=True),
    # models/sonnet-5-5/whats-new-sonnet-5-5: adaptive by default, "between_tools" the lowest
    # setting (low/medium/high effort only), "disabled" and forced tool use 400,
    # mid-conversation system messages accepted; default effort high.
    "claude-sonnet-5-5": replace(
        _always_thinking("high", progress_display=True),
        thinking_types=frozenset({"adaptive", "between_tools"}),
        system_messages=True,
        off_efforts=_UP_TO_HIGH,
    ),
    # models/haiku-5-5/overview: adaptive thinking with effort, default medium, thinking
    # blocks bound like the other 5.5 models; thinking can be turned off at effort <= high.
    # Forced tool use is not documented as accepted, so it is not sent.
    "claude-haiku-5-5": replace(
        _always_thinking("medium", progress_display=False),
        thinking_types=frozenset({"adaptive", "disabled"}),
        off_efforts=_UP_TO_HIGH,
    ),
    # models/fable-5/overview: legacy; always-on adaptive, no conversation check yet
    # (Fable 5.1 is the first model with preserved thinking). Mythos 5 shares its specs.
    "claude-fable-5": _FABLE_5,
    "claude-mythos-5": _FABLE_5,
    # models/opus-5/overview, models/sonnet-5/overview: legacy, adaptive by default.
    "claude-opus-5": _adaptive_by_default("high", off_efforts=_UP_TO_HIGH),
    "claude-sonnet-5": _adaptive_by_default("high", off_efforts=_UP_TO_HIGH),
    # models/opus-4-8/overview, opus-4-7: legacy; "enabled" refused from 4.7 on; xhigh added.
    "claude-opus-4-8": _adaptive_on_request(_ALL, enabled=False),
    "claude-opus-4-7": _adaptive_on_request(_ALL, enabled=False),
    # Opus 4.6 and Sonnet 4.6 predate xhigh; "enabled" still accepted (deprecated).
    "claude-opus-4-6": _adaptive_on_request(_NO_XHIGH, enabled=True),
    "claude-sonnet-4-6": _adaptive_on_request(_NO_XHIGH, enabled=True),
    # models/opus-4-5/overview: extended thinking (enabled + budget_tokens), effort
    # low/medium/high. Deprecated, retires 2027-01-22 (see retired_models).
    "claude-opus-4-5": _OPUS_4_5,
    "claude-opus-4-5-20251101": _OPUS_4_5,
    # models/haiku-4-5/overview: "Extended" thinking, "Default effort: Not supported".
    "claude-haiku-4-5": _HAIKU_4_5,
    "claude-haiku-4-5-20251001": _HAIKU_4_5,
}


def capabilities_of(model: str) -> ModelCapabilities:
    """What ``model`` takes; ``CONSERVATIVE`` for an id the table does not know."""
    return MODEL_CAPABILITIES.get(model, CONSERVATIVE)
