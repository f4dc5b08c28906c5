"""The ``thinking`` and ``output_config.effort`` fields of a request, and the betas they need,
shaped per model from the model table.

Why this exists: the config says what an operator wants ("think", "don't think", "this
effort"); each model takes a different spelling of it, and a spelling it refuses is a 400 on
every turn. This is the one place that turns the wish into the model's spelling:

- thinking on: ``adaptive`` where the model takes it, else ``enabled`` with ``budget_tokens``;
- thinking off: ``disabled`` where accepted (omitted on a model that does not think by
  default), ``between_tools`` on Sonnet 5.5 (its lowest setting); a model that always thinks,
  or an effort the off type refuses (``between_tools`` at ``xhigh``/``max``), thinks
  adaptively, as the docs say to;
- ``display`` is never ``summarized``: ``updates`` (beta) where the model writes its progress
  updates between tool calls into thinking blocks, else ``omitted``. So any text a thinking
  block carries is a progress update meant for a person, never reasoning (see
  ``llm/replies.py``);
- an effort is sent only to models that take it, lowered to the nearest level the model has;
- no sampling parameter is ever produced (2026-10-21 refuses them).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from plancord.llm.models import EFFORTS, ModelCapabilities, capabilities_of

MIN_THINKING_BUDGET = 1024
DISPLAY_UPDATES_BETA = "thinking-display-updates-2026-08-18"
"""sdk types/anthropic_beta_param.py; ``display: "updates"`` is a beta field
(sdk types/beta/beta_thinking_config_adaptive_param.py)."""
BINDING_CONTROLS_BETA = "thinking-binding-controls-2026-08-01"
"""preserved-thinking/fix-bound-to-a-different-conversation: the header that
``block_binding.prefix_mismatch_behavior`` needs."""


class ThinkingFields(NamedTuple):
    thinking: dict[str, Any] | None
    output_config: dict[str, Any] | None
    betas: tuple[str, ...]


def supported_effort(caps: ModelCapabilities, wanted: str | None) -> str | None:
    """``wanted`` if the model takes it, else the highest level it has below ``wanted``;
    None when the model takes no effort or none was asked."""
    if wanted is None or not caps.effort_levels:
        return None
    rank = EFFORTS.index(wanted)
    for level in reversed(EFFORTS[: rank + 1]):
        if level in caps.effort_levels:
            return level
    return None


def thinking_fields(
    model: str,
    *,
    thinking: bool | None,
    effort: str | None,
    budget_tokens: int,
    drop_mismatched_thinking: bool = False,
) -> ThinkingFields:
    """The request's ``thinking``, ``output_config`` and betas for ``model``.

    ``thinking`` None means the model's own default (Sonnet 5.5 thinks adaptively);
    ``drop_mismatched_thinking`` asks the API to drop thinking blocks that fail the prefix
    check instead of refusing the request: it applies to adaptive thinking only (the docs:
    a request that turned thinking off removes such blocks itself)."""
    caps = capabilities_of(model)
    level = supported_effort(caps, effort)
    output_config = {"effort": level} if level is not None else None
    if not caps.thinking_types:
        return ThinkingFields(None, output_config, ())
    think = caps.thinks_by_default if thinking is None else thinking
    if not think and _can_turn_off(caps, level or caps.default_effort):
        return ThinkingFields(_off_field(caps), output_config, ())
    if "adaptive" in caps.thinking_types:
        field: dict[str, Any] = {"type": "adaptive"}
        betas: list[str] = []
        if caps.progress_display:
            field["display"] = "updates"
            betas.append(DISPLAY_UPDATES_BETA)
        else:
            field["display"] = "omitted"
        if drop_mismatched_thinking and caps.preserved_thinking:
            field["block_binding"] = {"prefix_mismatch_behavior": "drop_block"}
            betas.append(BINDING_CONTROLS_BETA)
        return ThinkingFields(field, output_config, tuple(betas))
    if "enabled" in caps.thinking_types:
        budget = max(MIN_THINKING_BUDGET, budget_tokens)
        enabled = {"type": "enabled", "budget_tokens": budget, "display": "omitted"}
        return ThinkingFields(enabled, output_config, ())
    return ThinkingFields(None, output_config, ())


def _can_turn_off(caps: ModelCapabilities, effort: str | None) -> bool:
    """Whether the model has a "thinking off" type accepted at ``effort``."""
    if caps.off_type is None:
        return False
    return not (caps.off_efforts and effort is not None and effort not in caps.off_efforts)


def _off_field(caps: ModelCapabilities) -> dict[str, Any] | None:
    """The "thinking off" field; None where leaving ``thinking`` out already means off."""
    if caps.off_type == "disabled" and not caps.thinks_by_default:
        return None
    return {"type": caps.off_type}


def mapping_notes(model: str, *, thinking: bool | None, effort: str | None) -> list[str]:
    """What ``thinking_fields`` sends for ``model`` other than what the config literally
    asks, as sentences for ``plancord doctor`` (empty when it is sent as asked)."""
    caps = capabilities_of(model)
    notes: list[str] = []
    level = supported_effort(caps, effort)
    if effort is not None and level != effort:
        if level is None:
            notes.append(f"{model} takes no effort {effort!r}; none is sent")
        else:
            notes.append(f"{model} has no effort {effort!r}; {level!r} is sent")
    if thinking is False and caps.thinking_types:
        if caps.off_type is None:
            notes.append(f"{model} always thinks; thinking: false cannot turn it off")
        elif not _can_turn_off(caps, level or caps.default_effort):
            allowed = ", ".join(e for e in EFFORTS if e in caps.off_efforts)
            notes.append(
                f"{model} turns thinking off only at effort {allowed}; at {level!r} it thinks "
                "adaptively"
            )
    return notes
