"""How the model's thinking shows in a reply, for the request's thinking settings.

A script says what the model wrote; this decides which blocks carry it, as the service
returns them (docs/models/sonnet-5-5/migration-guide, "Thinking runs by default", "Turn off
up-front thinking", "Text between tool calls is returned in thinking blocks"):

* A model that thinks by default (``ModelRule.thinks_by_default``), asked with no
  ``thinking`` or with ``adaptive``, begins every reply with a thinking block; a script
  that scripts none gets one (an empty reply, a refusal before any output, stays empty).
  At ``display: "omitted"`` (the default there) its text is empty and only the signature
  carries it; ``"summarized"`` returns the text; ``"updates"`` (beta) returns only the
  progress updates' text.
* On a model whose notes between tool calls come back as progress updates
  (``progress_updates_in_thinking``), a ``Text`` before a tool call that is longer than a
  sentence or two comes back as a ``thinking`` block (empty at ``"omitted"``); a shorter
  remark stays ``text``.
* ``between_tools`` does no up-front thinking: no block is added, and the progress updates
  come back as thinking blocks with their text.
* Otherwise (``enabled``, ``disabled``, a model that does not think by default, the test
  models) the script's blocks are played as written; ``display: "omitted"`` empties a
  scripted thinking block's text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from plancord.testing.fake_api.model_rules import thinking_type
from plancord.testing.fake_api.script import AssistantBlock, Text, Thinking, ToolCall
from plancord.testing.fake_api.service_rules import ModelRule
from plancord.testing.fake_api.wire import JsonObject

UP_FRONT_SUMMARY = "Thinking about what was asked before answering."
"""The summary of the thinking a script did not write, at ``display: "summarized"``."""

_SENTENCE_END = re.compile(r"[.!?](?=\s|$)")


@dataclass(frozen=True)
class ThinkingPlan:
    """How one request's replies carry thinking."""

    mode: Literal["scripted", "adaptive", "between_tools"]
    display: str
    progress_updates: bool

    def _shown(self, text: str, *, update: bool) -> str:
        if self.mode == "between_tools" or self.display == "summarized":
            return text
        if self.display == "updates" and update:
            return text
        return ""

    def shape(self, blocks: tuple[AssistantBlock, ...]) -> tuple[AssistantBlock, ...]:
        """The blocks the reply holds, thinking text already as the display shows it."""
        if self.mode == "scripted":
            return tuple(
                Thinking(self._shown(b.thinking, update=False), b.signature)
                if isinstance(b, Thinking) and self.display == "omitted"
                else b
                for b in blocks
            )
        shaped: list[AssistantBlock] = []
        if self.mode == "adaptive" and blocks and not isinstance(blocks[0], Thinking):
            shaped.append(Thinking(self._shown(UP_FRONT_SUMMARY, update=False)))
        for position, block in enumerate(blocks):
            if isinstance(block, Thinking):
                up_front = position == 0 and self.mode == "adaptive"
                shaped.append(
                    Thinking(self._shown(block.thinking, update=not up_front), block.signature)
                )
            elif isinstance(block, Text) and self._is_update(block, blocks[position + 1 :]):
                shaped.append(Thinking(self._shown(block.text, update=True)))
            else:
                shaped.append(block)
        return tuple(shaped)

    def _is_update(self, text: Text, after: tuple[AssistantBlock, ...]) -> bool:
        followed_by_call = any(isinstance(b, ToolCall) for b in after)
        return (
            self.progress_updates
            and followed_by_call
            and len(_SENTENCE_END.findall(text.text.strip())) > 2
        )


def thinking_plan(body: JsonObject, rule: ModelRule) -> ThinkingPlan:
    kind = thinking_type(body)
    thinking = body.get("thinking")
    display = thinking.get("display") if isinstance(thinking, dict) else None
    shown = str(display) if isinstance(display, str) else rule.default_display
    if kind == "between_tools":
        return ThinkingPlan("between_tools", shown, rule.progress_updates_in_thinking)
    if kind == "adaptive" or (kind is None and rule.thinks_by_default):
        return ThinkingPlan("adaptive", shown, rule.progress_updates_in_thinking)
    return ThinkingPlan("scripted", shown, progress_updates=False)
