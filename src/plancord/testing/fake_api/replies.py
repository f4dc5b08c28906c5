"""A scripted reply as the Messages API's response: its blocks shaped by the request's
thinking settings (``reply_shaping``), ids given, thinking signed (``thinking_binding``),
usage accounted on what the model saw, stop details and input transformations added."""

from __future__ import annotations

from dataclasses import dataclass

from plancord.testing.fake_api.answers import check_answer
from plancord.testing.fake_api.prompt_cache import PromptCache, SimulatedUsage, estimate_tokens
from plancord.testing.fake_api.reply_shaping import thinking_plan
from plancord.testing.fake_api.script import AssistantBlock, Reply, Text, Thinking
from plancord.testing.fake_api.service_rules import ModelRule
from plancord.testing.fake_api.thinking_binding import (
    BindingOutcome,
    sign_reply,
    transformations_field,
)
from plancord.testing.fake_api.version_rules import RequestContext
from plancord.testing.fake_api.wire import JsonObject


@dataclass(frozen=True)
class ReplyRequest:
    """One request being answered: its body, its model's row, its headers' context, and what
    the binding check left of it."""

    body: JsonObject
    rule: ModelRule
    context: RequestContext
    binding: BindingOutcome


class ReplyRenderer:
    """Turns scripted replies into response messages; owns the ids it hands out."""

    def __init__(self, cache: PromptCache) -> None:
        self._cache = cache
        self._served_tool_use_ids: set[str] = set()
        self._id_counters: dict[str, int] = {}

    def next_id(self, prefix: str) -> str:
        number = self._id_counters.get(prefix, 0) + 1
        self._id_counters[prefix] = number
        return f"{prefix}_fake{number:016d}"

    def _block(self, block: AssistantBlock) -> JsonObject:
        if isinstance(block, Text):
            return {"type": "text", "text": block.text}
        if isinstance(block, Thinking):
            return {"type": "thinking", "thinking": block.thinking, "signature": block.signature}
        tool_use_id = block.id or self.next_id("toolu")
        if tool_use_id in self._served_tool_use_ids:
            raise ValueError(
                f"the script reuses tool_use id {tool_use_id!r}; the API never repeats one"
            )
        self._served_tool_use_ids.add(tool_use_id)
        return {
            "type": "tool_use",
            "id": tool_use_id,
            "name": block.name,
            "input": dict(block.input),
        }

    def render(self, reply: Reply, request: ReplyRequest) -> tuple[JsonObject, SimulatedUsage]:
        """The response message for ``reply``; ``ValueError`` if the API could not send it."""
        body = request.body
        check_answer(reply, body)
        shaped = thinking_plan(body, request.rule).shape(reply.blocks)
        content = [self._block(block) for block in shaped]
        sign_reply(content, body, request.rule, request.binding)
        if reply.output_tokens is not None:
            output_tokens = reply.output_tokens
        elif reply.stop_reason == "max_tokens":
            output_tokens = body["max_tokens"]
        else:
            output_tokens = max(1, estimate_tokens(content))
        usage = self._cache.account(
            request.binding.body, output_tokens, model_floor=request.rule.min_cacheable_tokens
        )
        message: JsonObject = {
            "id": self.next_id("msg"),
            "type": "message",
            "role": "assistant",
            "model": body["model"],
            "content": content,
            "stop_reason": reply.stop_reason,
            "stop_sequence": None,
            "usage": usage.as_json(),
            **transformations_field(request.binding, request.context),
        }
        if reply.stop_reason == "refusal":
            message["stop_details"] = {
                "type": "refusal",
                "category": reply.refusal_category,
                "explanation": reply.refusal_explanation,
            }
        return message, usage
