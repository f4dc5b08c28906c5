"""Per-model limits the service enforces: the model must exist (and not be retired), and
``max_tokens`` and the prompt must fit it (``service_rules``)."""

from __future__ import annotations

from collections.abc import Mapping

from plancord.testing.fake_api.prompt_cache import prompt_parts
from plancord.testing.fake_api.rules import RequestRejected, reject
from plancord.testing.fake_api.service_rules import HasLimits, ModelRule, ModelTable
from plancord.testing.fake_api.wire import JsonObject


def model_rule(body: JsonObject, table: ModelTable) -> ModelRule:
    """The row of the request's model; a 404 for an unknown or retired id (the deprecations
    page documents no other error for a retired model)."""
    model = body["model"]
    rule = table.get(model)
    if rule is None:
        raise RequestRejected(f"model: {model}", status=404)
    return rule


def check_model(
    body: JsonObject, table: ModelTable | Mapping[str, ModelRule | HasLimits]
) -> ModelRule:
    """The model must be served, and ``max_tokens`` and the prompt must fit it."""
    rule = model_rule(body, table if isinstance(table, ModelTable) else ModelTable.of(table))
    model = body["model"]
    max_tokens = body.get("max_tokens")
    if isinstance(max_tokens, int) and max_tokens > rule.max_output_tokens:
        raise reject(
            f"max_tokens: {max_tokens} > {rule.max_output_tokens}, which is the maximum "
            f"allowed number of output tokens for {model}"
        )
    prompt = sum(part.tokens for part in prompt_parts(body))
    if prompt > rule.context_window_tokens:
        raise reject(f"prompt is too long: {prompt} tokens > {rule.context_window_tokens} maximum")
    return rule
