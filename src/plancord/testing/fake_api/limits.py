"""Per-model limits the service enforces: the model must exist, and max_tokens and the prompt
must fit it."""

from __future__ import annotations

from collections.abc import Mapping

from plancord.llm.models import ModelLimits
from plancord.testing.fake_api.prompt_cache import prompt_parts
from plancord.testing.fake_api.rules import RequestRejected, reject
from plancord.testing.fake_api.wire import JsonObject


def check_model(body: JsonObject, models: Mapping[str, ModelLimits]) -> None:
    """The model must exist, and ``max_tokens`` and the prompt must fit it."""
    model = body["model"]
    limits = models.get(model)
    if limits is None:
        raise RequestRejected(f"model: {model}", status=404)
    max_tokens = body.get("max_tokens")
    if isinstance(max_tokens, int) and max_tokens > limits.max_output_tokens:
        raise reject(
            f"max_tokens: {max_tokens} > {limits.max_output_tokens}, which is the maximum "
            f"allowed number of output tokens for {model}"
        )
    prompt = sum(part.tokens for part in prompt_parts(body))
    if prompt > limits.context_window_tokens:
        raise reject(
            f"prompt is too long: {prompt} tokens > {limits.context_window_tokens} maximum"
        )
