"""Model requests: the tool schemas for the phase, the request built from the stored
conversation and the regime, the call itself, and compaction when the context grows large."""

from __future__ import annotations

import logging
from typing import Any

from plancord.agent.context import (
    build_messages,
    compaction_cut,
    estimate_tokens,
    regime_text,
    repair_history,
    system_blocks,
    text_of,
    transcript,
)
from plancord.agent.dispatch import is_shell
from plancord.agent.host_prompts import HOST
from plancord.agent.oversize import without_largest_result
from plancord.agent.runtime_settings import RuntimeSettings
from plancord.agent.tools.base import Tool, ToolRegistry
from plancord.core.agents import AgentRecord
from plancord.core.errors import ContextTooLong, RequestTooLarge
from plancord.core.gate import ToolKind
from plancord.core.ports import (
    Clock,
    ModelClient,
    ModelReply,
    ModelRequest,
    SettingsProvider,
)
from plancord.core.service import PlanningService
from plancord.core.settings import ToolVisibility
from plancord.llm.models import bounded_max_tokens
from plancord.storage.conversations import ConversationStore, Message
from plancord.storage.store import SqlStore

log = logging.getLogger(__name__)

MIN_ANSWER_TOKENS = 1024
#: How many tool results one call removes, at most, from a conversation the API refuses.
MAX_RESULTS_REMOVED = 8
SUMMARY_PROMPT = (
    "Summarise the conversation below so an agent can continue the work without it: the task, "
    "decisions taken, files read or changed and what they contain that matters, open questions, "
    "and the current state. Be concise and concrete."
)


def shown_while_planning(tool: Tool[Any]) -> bool:
    """With ``tool_visibility: filter``: what the model is shown while planning (what the
    gate would not refuse outright; the shell stays, for read-only commands)."""
    return tool.kind is not ToolKind.MUTATING or is_shell(tool)


class ModelRequests:
    """Builds each request from the store and calls the model; compacts the conversation."""

    def __init__(
        self,
        *,
        store: SqlStore,
        conversations: ConversationStore,
        planning: PlanningService,
        plan_settings: SettingsProvider,
        model: ModelClient,
        registry: ToolRegistry,
        clock: Clock,
        settings: RuntimeSettings,
    ) -> None:
        self.store = store
        self.conversations = conversations
        self.planning = planning
        self.plan_settings = plan_settings
        self.model = model
        self.registry = registry
        self.clock = clock
        self.settings = settings

    async def tool_schemas(self, agent: str) -> list[dict[str, Any]]:
        """Identical in every phase with ``stable``; ``filter`` hides what the gate would refuse."""
        settings = await self.plan_settings.plan_mode_for(agent)
        registry = await self.registry.for_agent(agent)
        if settings.tool_visibility is ToolVisibility.STABLE:
            return registry.schemas()
        phase = (await self.store.load_state(agent)).phase
        if not phase.is_planning:
            return registry.schemas()
        return registry.schemas(shown_while_planning)

    async def build_request(self, agent: str, record: AgentRecord | None = None) -> ModelRequest:
        record = record or await self.store.get_agent(agent)
        status = await self.planning.status(agent)
        history = await self.conversations.load(agent)
        model = self.settings.model_for(agent, record)
        thinking, output_config, betas = self.settings.thinking.request_fields(
            model, self.settings.agents.get(agent)
        )
        wanted = self.settings.max_tokens
        if thinking is not None and "budget_tokens" in thinking:
            wanted = max(wanted, thinking["budget_tokens"] + MIN_ANSWER_TOKENS)
        return ModelRequest(
            model=model,
            max_tokens=bounded_max_tokens(model, wanted),
            thinking=thinking,
            output_config=output_config,
            betas=betas,
            system=system_blocks(record.system_prompt),
            tools=await self.tool_schemas(agent),
            messages=build_messages(history, regime_text(status.state, status.revision)),
        )

    async def call(self, agent: str) -> ModelReply:
        """One model call for the agent's next step, its usage recorded; the conversation
        is repaired first and compacted when it grows too large (or the API says so)."""
        history, changed = repair_history(await self.conversations.load(agent))
        if changed:
            await self.conversations.replace_all(agent, history, self.clock.now())
        record = await self.store.get_agent(agent)
        request = await self.build_request(agent, record)
        limit = self.settings.context_window_tokens * self.settings.compact_at_fraction
        too_big = estimate_tokens(request.messages) + estimate_tokens(request.tools) > limit
        if too_big and await self.compact(agent, record):
            request = await self.build_request(agent, record)
        compacted, removed = False, 0
        while True:
            try:
                reply = await self.model.create(request)
                break
            except ContextTooLong:
                if not compacted and await self.compact(agent, record, keep_fraction=0.05):
                    compacted = True
                elif removed >= MAX_RESULTS_REMOVED or not await self._remove_largest(agent):
                    raise
                else:
                    removed += 1
            except RequestTooLarge:
                if removed >= MAX_RESULTS_REMOVED or not await self._remove_largest(agent):
                    raise
                removed += 1
            request = await self.build_request(agent, record)
        await self.conversations.record_usage(
            agent, request.model, reply.usage, reply.stop_reason, self.clock.now()
        )
        return reply

    async def _remove_largest(self, agent: str) -> bool:
        """Replace the conversation's largest tool result by a note; False when none is
        large enough to be the reason the API refused it."""
        repaired = without_largest_result(await self.conversations.load(agent))
        if repaired is None:
            return False
        log.warning("agent %s: the model API refused the conversation; removed a result", agent)
        await self.conversations.replace_all(agent, repaired, self.clock.now())
        return True

    async def compact(
        self, agent: str, record: AgentRecord | None = None, *, keep_fraction: float | None = None
    ) -> bool:
        """Summarise older turns so the conversation fits; the regime is rebuilt every request.

        The newest turns are kept verbatim, thinking blocks and their signatures included,
        and the cut falls only before a plain user message, so no tool call is separated
        from its result and no thinking block is edited."""
        record = record or await self.store.get_agent(agent)
        history = await self.conversations.load(agent)
        fraction = self.settings.keep_recent_fraction if keep_fraction is None else keep_fraction
        keep = int(self.settings.context_window_tokens * fraction)
        cut = compaction_cut(history, keep)
        if cut is None or cut < 2:
            return False
        model = self.settings.model_for(agent, record)
        request = ModelRequest(
            model=model,
            max_tokens=bounded_max_tokens(model, min(4096, self.settings.max_tokens)),
            system=[{"type": "text", "text": SUMMARY_PROMPT}],
            tools=[],
            messages=[
                {"role": "user", "content": [{"type": "text", "text": transcript(history[:cut])}]}
            ],
        )
        reply = await self.model.create(request)
        await self.conversations.record_usage(
            agent, request.model, reply.usage, reply.stop_reason, self.clock.now()
        )
        summary = text_of(reply.content) or "(no summary)"
        compacted: list[Message] = [
            {
                "role": "user",
                "content": [
                    {
                        "type": "text",
                        "text": f"{HOST} Summary of the earlier conversation:\n{summary}",
                    }
                ],
            },
            {"role": "assistant", "content": [{"type": "text", "text": "Understood; continuing."}]},
            *history[cut:],
        ]
        await self.conversations.replace_all(agent, compacted, self.clock.now())
        return True
