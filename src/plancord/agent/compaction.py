"""Compaction: older turns replaced by a summary when a conversation outgrows its window.

Why this is its own part: a summary rewrites history, and on a model with preserved thinking
every thinking block after a rewritten message is invalid. The summary is written by the
model from a transcript of the older turns; the newest turns are kept verbatim but without
their thinking blocks (the documented remedy for turns kept after a client-side summary),
the host's instructions among them are left out, and the result is a *new* conversation: its
prefix is frozen afresh on the next request (the current system prompt and every tool the
agent has, MCP tools that arrived included) and the regime is asserted again at its end.
"""

from __future__ import annotations

from plancord.agent.context import compaction_cut, text_of, transcript, without_thinking
from plancord.agent.host_prompts import HOST
from plancord.agent.instructions import REGIME_OPEN
from plancord.core.ports import Clock, ModelClient, ModelRequest
from plancord.llm.models import bounded_max_tokens
from plancord.storage.conversations import ConversationStore, Message

SUMMARY_PROMPT = (
    "Summarise the conversation below so an agent can continue the work without it: the task, "
    "decisions taken, files read or changed and what they contain that matters, open questions, "
    "and the current state. Be concise and concrete."
)
SUMMARY_MAX_TOKENS = 4096


def without_instructions(messages: list[Message]) -> list[Message]:
    """``messages`` without the host's system messages and regime blocks (the new
    conversation's prefix and its next regime say what they said)."""
    out: list[Message] = []
    for message in messages:
        if message["role"] == "system":
            continue
        content = [
            b
            for b in message["content"]
            if not (b.get("type") == "text" and str(b.get("text", "")).startswith(REGIME_OPEN))
        ]
        out.append({**message, "content": content or [{"type": "text", "text": "(host note)"}]})
    return out


class Compactor:
    def __init__(
        self, *, model: ModelClient, conversations: ConversationStore, clock: Clock
    ) -> None:
        self._model = model
        self._conversations = conversations
        self._clock = clock

    async def compact(self, agent: str, model: str, keep_tokens: int) -> bool:
        """Summarise all but the newest ``keep_tokens`` of the conversation; False when there
        is nothing to cut (the cut falls only before a plain user message, so no tool call is
        separated from its result)."""
        history = await self._conversations.load(agent)
        cut = compaction_cut(history, keep_tokens)
        if cut is None or cut < 2:
            return False
        request = ModelRequest(
            model=model,
            max_tokens=bounded_max_tokens(model, SUMMARY_MAX_TOKENS),
            system=[{"type": "text", "text": SUMMARY_PROMPT}],
            tools=[],
            messages=[
                {"role": "user", "content": [{"type": "text", "text": transcript(history[:cut])}]}
            ],
        )
        reply = await self._model.create(request)
        await self._conversations.record_usage(
            agent, request.model, reply.usage, reply.stop_reason, self._clock.now()
        )
        summary = text_of(reply.content) or "(no summary)"
        opening = f"{HOST} Summary of the earlier conversation:\n{summary}"
        kept = without_instructions(without_thinking(history[cut:]))
        compacted: list[Message] = [
            {"role": "user", "content": [{"type": "text", "text": opening}]},
            {"role": "assistant", "content": [{"type": "text", "text": "Understood; continuing."}]},
            *kept,
        ]
        await self._conversations.restart(agent, compacted, self._clock.now())
        return True
