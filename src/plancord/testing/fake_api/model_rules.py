"""The request rules that depend on the model (a ``ModelRule`` row of ``service_rules``):
thinking types and their fields, effort, structured outputs, forced tool use, sampling
parameters and prefill. Messages quote the service's documented errors where a page gives
one (docs/models/sonnet-5-5/migration-guide, .../whats-new-sonnet-5-5); the others follow
the API's validation style."""

from __future__ import annotations

from typing import Any

from plancord.testing.fake_api.json_schema import strict_schema_problem
from plancord.testing.fake_api.rules import reject, tags
from plancord.testing.fake_api.service_rules import EFFORTS, ModelRule
from plancord.testing.fake_api.version_rules import (
    SAMPLING_PARAMETERS,
    THINKING_BINDING_BETA,
    THINKING_DISPLAY_UPDATES_BETA,
    RequestContext,
)
from plancord.testing.fake_api.wire import JsonObject

THINKING_TYPES = frozenset({"enabled", "disabled", "adaptive", "between_tools"})
_THINKING_FIELDS = {
    "enabled": frozenset({"type", "budget_tokens", "display"}),
    "disabled": frozenset({"type"}),
    "adaptive": frozenset({"type", "display", "block_binding"}),
    "between_tools": frozenset({"type"}),
}
_DISPLAYS = {"enabled": ("summarized", "omitted"), "adaptive": ("summarized", "omitted", "updates")}
PREFIX_BEHAVIORS = ("error", "drop_block")
DEFAULT_EFFORT = "high"
"""docs/build-with-claude/effort: the default on the Claude API."""

DISABLED_ON_BETWEEN_TOOLS_MODELS = (
    'To turn thinking off on this model, send "thinking": {"type": "between_tools"} instead '
    'of {"type": "disabled"}. The model does not think before responding. The short updates '
    "it writes between tool calls come back as thinking blocks."
)
ENABLED_REFUSED = (
    '"thinking.type.enabled" is not supported for this model. Use "thinking.type.adaptive" '
    'and "output_config.effort" to control thinking behavior.'
)
FORCED_TOOL_CHOICE_REFUSED = 'tool_choice: type "tool" and "any" are not supported for this model.'
PREFILL_REFUSED = (
    "This model does not support assistant message prefill. The conversation must end with a "
    "user message."
)


def check_model_rules(
    body: JsonObject, rule: ModelRule, context: RequestContext, *, count_tokens: bool = False
) -> None:
    """Refuse what ``rule``'s model does not take, as the service answers it."""
    _check_thinking(body, rule, context)
    _check_output_config(body.get("output_config"), rule)
    _check_between_tools_effort(body)
    _check_forced_tool_choice(body.get("tool_choice"), rule)
    if count_tokens:
        return
    _check_sampling(body, rule)
    _check_prefill(body.get("messages"), rule)


def thinking_type(body: JsonObject) -> str | None:
    thinking = body.get("thinking")
    return str(thinking["type"]) if isinstance(thinking, dict) and "type" in thinking else None


def effort_of(body: JsonObject) -> str:
    config = body.get("output_config")
    effort = config.get("effort") if isinstance(config, dict) else None
    return str(effort) if isinstance(effort, str) else DEFAULT_EFFORT


def prefix_mismatch_behavior(body: JsonObject) -> str:
    """``thinking.block_binding.prefix_mismatch_behavior``; ``"error"`` when unset."""
    thinking = body.get("thinking")
    binding = thinking.get("block_binding") if isinstance(thinking, dict) else None
    behavior = binding.get("prefix_mismatch_behavior") if isinstance(binding, dict) else None
    return str(behavior) if isinstance(behavior, str) else "error"


def _check_thinking(body: JsonObject, rule: ModelRule, context: RequestContext) -> None:
    thinking = body.get("thinking")
    if thinking is None:
        return
    if not isinstance(thinking, dict):
        raise reject("thinking: Input should be a valid dictionary")
    kind = thinking.get("type")
    if kind not in THINKING_TYPES:
        raise reject(
            f"thinking: Input tag '{kind}' found using 'type' does not match any of the "
            f"expected tags: {tags(THINKING_TYPES)}"
        )
    if kind not in rule.thinking_types:
        raise reject(_type_refusal(str(kind), rule))
    for key in thinking:
        if key not in _THINKING_FIELDS[kind]:
            raise reject(f"thinking.{kind}.{key}: Extra inputs are not permitted")
    _check_display(thinking, str(kind), context)
    if kind == "enabled":
        _check_budget(thinking, body.get("max_tokens"))
    if "block_binding" in thinking:
        _check_block_binding(thinking["block_binding"], context)


def _type_refusal(kind: str, rule: ModelRule) -> str:
    if kind == "enabled" and "adaptive" in rule.thinking_types:
        return ENABLED_REFUSED
    if kind == "disabled" and "between_tools" in rule.thinking_types:
        return DISABLED_ON_BETWEEN_TOOLS_MODELS
    return f'"thinking.type.{kind}" is not supported for this model.'


def _check_display(thinking: JsonObject, kind: str, context: RequestContext) -> None:
    display = thinking.get("display")
    if display is None:
        return
    allowed = _DISPLAYS[kind]
    if display not in allowed:
        raise reject(
            f"thinking.{kind}.display: Input should be "
            + " or ".join(f"'{value}'" for value in allowed)
        )
    if display == "updates" and not context.has(THINKING_DISPLAY_UPDATES_BETA):
        raise reject(
            f'thinking.{kind}.display: "updates" requires the '
            f"`{THINKING_DISPLAY_UPDATES_BETA}` value in the `anthropic-beta` header."
        )


def _check_budget(thinking: JsonObject, max_tokens: object) -> None:
    budget = thinking.get("budget_tokens")
    if not isinstance(budget, int) or budget < 1024:
        raise reject(
            "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024"
        )
    if isinstance(max_tokens, int) and budget >= max_tokens:
        raise reject("`max_tokens` must be greater than `thinking.budget_tokens`")


def _check_block_binding(binding: object, context: RequestContext) -> None:
    where = "thinking.adaptive.block_binding"
    if not context.has(THINKING_BINDING_BETA):
        raise reject(
            f"{where}: This field requires the `{THINKING_BINDING_BETA}` value in the "
            "`anthropic-beta` header."
        )
    if binding is None:
        return
    if not isinstance(binding, dict):
        raise reject(f"{where}: Input should be a valid dictionary")
    for key, value in binding.items():
        if key != "prefix_mismatch_behavior":
            raise reject(f"{where}.{key}: Extra inputs are not permitted")
        if value is not None and value not in PREFIX_BEHAVIORS:
            raise reject(f"{where}.{key}: Input should be 'error' or 'drop_block'")


def _check_output_config(config: object, rule: ModelRule) -> None:
    if config is None:
        return
    if not isinstance(config, dict):
        raise reject("output_config: Input should be a valid dictionary")
    for key in config:
        if key not in ("effort", "format"):
            raise reject(f"output_config.{key}: Extra inputs are not permitted")
    effort = config.get("effort")
    if effort is not None:
        if effort not in EFFORTS:
            raise reject(
                "output_config.effort: Input should be "
                + ", ".join(f"'{level}'" for level in EFFORTS[:-1])
                + f" or '{EFFORTS[-1]}'"
            )
        if not rule.efforts:
            raise reject("output_config.effort: effort is not supported for this model.")
        if effort not in rule.efforts:
            raise reject(f"output_config.effort: '{effort}' is not supported for this model.")
    if config.get("format") is not None:
        _check_format(config["format"], rule)


def _check_format(format_: object, rule: ModelRule) -> None:
    where = "output_config.format"
    if not isinstance(format_, dict):
        raise reject(f"{where}: Input should be a valid dictionary")
    if format_.get("type") != "json_schema":
        raise reject(f"{where}.type: Input should be 'json_schema'")
    for key in format_:
        if key not in ("type", "schema"):
            raise reject(f"{where}.{key}: Extra inputs are not permitted")
    schema: Any = format_.get("schema")
    if not isinstance(schema, dict):
        raise reject(f"{where}.schema: Field required")
    if not rule.structured_outputs:
        raise reject(f"{where}: structured outputs are not supported for this model.")
    problem = strict_schema_problem(schema, f"{where}.schema")
    if problem is not None:
        raise reject(problem)


def _check_between_tools_effort(body: JsonObject) -> None:
    """whats-new-sonnet-5-5: ``between_tools`` runs at low, medium and high effort only."""
    if thinking_type(body) != "between_tools":
        return
    effort = effort_of(body)
    if effort in ("xhigh", "max"):
        raise reject(
            f'thinking.between_tools: not supported at effort "{effort}". To run at "xhigh" '
            'or "max", use adaptive thinking: omit `thinking` or send {"type": "adaptive"}.'
        )


def _check_forced_tool_choice(choice: object, rule: ModelRule) -> None:
    forced = isinstance(choice, dict) and choice.get("type") in ("any", "tool")
    if forced and not rule.forced_tool_choice:
        raise reject(FORCED_TOOL_CHOICE_REFUSED)


def _check_sampling(body: JsonObject, rule: ModelRule) -> None:
    """docs/about-claude/model-deprecations: a non-default value is a 400 on 4.7+ models."""
    if rule.sampling_parameters:
        return
    for name in SAMPLING_PARAMETERS:
        value = body.get(name)
        if value is None or (name == "temperature" and value == 1):
            continue
        raise reject(f"`{name}` is deprecated for this model.")


def _check_prefill(messages: object, rule: ModelRule) -> None:
    if rule.prefill or not isinstance(messages, list) or not messages:
        return
    last = messages[-1]
    if isinstance(last, dict) and last.get("role") == "assistant":
        raise reject(PREFILL_REFUSED)
