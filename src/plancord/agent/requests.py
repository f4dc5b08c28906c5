"""Model requests: the conversation brought up to date (repaired, the host's instructions
appended), the request built from its frozen prefix and its messages as stored, the call
itself (a prefix-check refusal repaired once), and compaction when the context grows large.

Every request of a conversation sends the same ``system`` and ``tools`` (frozen with the
conversation), its messages exactly as stored, and the top-level automatic cache breakpoint
besides the fixed one on the system prompt: no earlier block is ever edited to move a
breakpoint (``plancord.agent.context``, ``plancord.agent.instructions``)."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from plancord.agent.compaction import Compactor
from plancord.agent.context import (
    EPHEMERAL,
    PlanningTools,
    estimate_tokens,
    regime_text,
    repair_history,
    settle_edit,
    system_blocks,
)
from plancord.agent.dispatch import is_shell
from plancord.agent.instructions import (
    added_tools,
    betas_for,
    instructions_block,
    merge_user,
    place,
    regime_due,
    told_prompt,
    tool_addition,
)
from plancord.agent.oversize import without_largest_result
from plancord.agent.runtime_settings import RuntimeSettings
from plancord.agent.tools.base import Tool, ToolRegistry
from plancord.core.agents import AgentRecord
from plancord.core.errors import ContextTooLong, RequestTooLarge, ThinkingPrefixMismatch
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
from plancord.llm.models import bounded_max_tokens, capabilities_of
from plancord.storage.conversations import ConversationPrefix, ConversationStore, Message
from plancord.storage.store import SqlStore

log = logging.getLogger(__name__)

MIN_ANSWER_TOKENS = 1024
#: How many tool results one call removes, at most, from a conversation the API refuses.
MAX_RESULTS_REMOVED = 8
OnRepair = Callable[[], Awaitable[None]]


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
        """Every tool the agent has now, in every phase (what a new conversation freezes)."""
        return (await self.registry.for_agent(agent)).schemas()

    async def planning_tools(self, agent: str, planning: bool) -> PlanningTools:
        """The agent's tools as the regime names them, by the kind each declares: those
        that run while planning, and with ``tool_visibility: filter``, while planning, those
        the regime says not to use (they stay declared, so ``tools`` never changes; the gate
        refuses them)."""
        registry = list(await self.registry.for_agent(agent))
        allowed = tuple(tool.name for tool in registry if tool.kind is not ToolKind.MUTATING)
        shell = any(is_shell(tool) for tool in registry)
        settings = await self.plan_settings.plan_mode_for(agent)
        if settings.tool_visibility is ToolVisibility.STABLE or not planning:
            return PlanningTools(allowed, shell)
        hidden = tuple(tool.name for tool in registry if not shown_while_planning(tool))
        return PlanningTools(allowed, shell, hidden)

    async def prefix(self, agent: str, record: AgentRecord) -> ConversationPrefix:
        """The conversation's frozen ``system`` and ``tools``, frozen now if it has none."""
        kept = await self.conversations.prefix(agent)
        if kept is not None:
            return kept
        return await self.conversations.freeze_prefix(
            agent, system_blocks(record.system_prompt), await self.tool_schemas(agent), self.now()
        )

    def now(self) -> Any:
        return self.clock.now()

    async def prepare(self, agent: str, record: AgentRecord) -> None:
        """Bring the stored conversation up to date for the next call: repaired if a restart
        cut it, then the host's instructions appended (a changed system prompt, tools that
        arrived, the regime when it changed or was told long ago)."""
        history = await self.conversations.load(agent)
        fixed, changed = repair_history(history)
        if changed:
            start, tail = settle_edit(history, fixed)
            await self.conversations.replace_tail(agent, start, tail, self.now())
            history = [*history[:start], *tail]
        prefix = await self.prefix(agent, record)
        caps = capabilities_of(self.settings.model_for(agent, record))
        blocks: list[dict[str, Any]] = []
        prompt = record.system_prompt.strip()
        told = told_prompt(history)
        if (system_blocks(prompt)[0]["text"] != prefix.system[0]["text"] and told is None) or (
            told is not None and told != prompt
        ):
            blocks.append({"type": "text", "text": instructions_block(prompt)})
        blocks += await self._arrived_tools(
            agent,
            prefix,
            history,
            system_messages=caps.system_messages,
            preserved=caps.preserved_thinking,
        )
        status = await self.planning.status(agent)
        tools = await self.planning_tools(agent, status.state.phase.is_planning)
        regime = regime_text(status.state, status.revision, tools)
        if regime_due(history, regime):
            blocks.append({"type": "text", "text": regime})
        if not blocks:
            return
        placement = place(history, blocks, system_messages=caps.system_messages)
        if placement is not None:
            await self.conversations.replace_tail(
                agent, placement.start, placement.tail, self.now()
            )

    async def _arrived_tools(
        self,
        agent: str,
        prefix: ConversationPrefix,
        history: list[Message],
        *,
        system_messages: bool,
        preserved: bool,
    ) -> list[dict[str, Any]]:
        """Tools the agent has now that the conversation never declared (an MCP server that
        started after it began): added by definition in a system message; on a model that
        takes none, declared in ``tools`` where that breaks no thinking, else left for the
        conversation's next start."""
        declared = {t["name"] for t in prefix.tools} | {t["name"] for t in added_tools(history)}
        arrived = [t for t in await self.tool_schemas(agent) if t["name"] not in declared]
        if not arrived:
            return []
        if system_messages:
            names = ", ".join(t["name"] for t in arrived)
            note = f"New tools are available from now on: {names}."
            return [{"type": "text", "text": note}, *(tool_addition(t) for t in arrived)]
        if not preserved:
            await self.conversations.set_tools(agent, [*prefix.tools, *arrived])
        return []

    async def answers_tool_results(self, agent: str) -> bool:
        """Whether the next call answers tool results (its newest user message holds some)."""
        history = await self.conversations.load(agent)
        users = [m for m in history if m["role"] == "user"]
        return bool(users) and any(b.get("type") == "tool_result" for b in users[-1]["content"])

    async def add_instruction(self, agent: str, text: str) -> None:
        """Append a host instruction now: a system message where the model takes one, else
        user text (a new message after the model's turn, or with the newest user message)."""
        record = await self.store.get_agent(agent)
        caps = capabilities_of(self.settings.model_for(agent, record))
        history = await self.conversations.load(agent)
        block = {"type": "text", "text": text}
        placement = place(history, [block], system_messages=caps.system_messages)
        if placement is None:
            placement = merge_user(history, [block])
        await self.conversations.replace_tail(agent, placement.start, placement.tail, self.now())

    async def build_request(self, agent: str, record: AgentRecord | None = None) -> ModelRequest:
        """The request for the agent's next call: the frozen prefix and the stored messages,
        exactly as they are."""
        record = record or await self.store.get_agent(agent)
        prefix = await self.prefix(agent, record)
        history = await self.conversations.load(agent)
        model = self.settings.model_for(agent, record)
        thinking, output_config, betas = self.settings.thinking.request_fields(
            model, self.settings.agents.get(agent), drop_mismatched_thinking=prefix.drop_block
        )
        wanted = self.settings.max_tokens
        if thinking is not None and "budget_tokens" in thinking:
            wanted = max(wanted, thinking["budget_tokens"] + MIN_ANSWER_TOKENS)
        return ModelRequest(
            model=model,
            max_tokens=bounded_max_tokens(model, wanted),
            thinking=thinking,
            output_config=output_config,
            system=prefix.system,
            tools=prefix.tools,
            messages=history,
            cache_control=dict(EPHEMERAL),
            betas=(*betas, *betas_for(history)),
        )

    async def call(self, agent: str, on_repair: OnRepair | None = None) -> ModelReply:
        """One model call for the agent's next step, its usage recorded; the conversation
        is brought up to date first and compacted when it grows too large (or the API says
        so). A refusal of a thinking block bound to another prefix is repaired once: the
        conversation asks the API to drop such blocks from then on (``on_repair`` tells the
        channel), and the call is made again."""
        record = await self.store.get_agent(agent)
        await self.prepare(agent, record)
        request = await self.build_request(agent, record)
        limit = self.settings.context_window_tokens * self.settings.compact_at_fraction
        too_big = estimate_tokens(request.messages) + estimate_tokens(request.tools) > limit
        if too_big and await self.compact(agent, record):
            await self.prepare(agent, record)
            request = await self.build_request(agent, record)
        compacted, removed, repaired = False, 0, False
        while True:
            try:
                reply = await self.model.create(request)
                break
            except ThinkingPrefixMismatch:
                if repaired or (await self.prefix(agent, record)).drop_block:
                    raise
                repaired = True
                log.warning("agent %s: a thinking block failed the prefix check", agent)
                await self.conversations.set_drop_block(agent)
                if on_repair is not None:
                    await on_repair()
            except ContextTooLong:
                if not compacted and await self.compact(agent, record, keep_fraction=0.05):
                    compacted = True
                    await self.prepare(agent, record)
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
        large enough to be the reason the API refused it. The turns after it lose their
        thinking blocks (bound to the result as it was)."""
        history = await self.conversations.load(agent)
        repaired = without_largest_result(history)
        if repaired is None:
            return False
        log.warning("agent %s: the model API refused the conversation; removed a result", agent)
        start, tail = settle_edit(history, repaired)
        await self.conversations.replace_tail(agent, start, tail, self.clock.now())
        return True

    async def compact(
        self, agent: str, record: AgentRecord | None = None, *, keep_fraction: float | None = None
    ) -> bool:
        """Summarise older turns so the conversation fits (``Compactor.compact``)."""
        record = record or await self.store.get_agent(agent)
        fraction = self.settings.keep_recent_fraction if keep_fraction is None else keep_fraction
        keep = int(self.settings.context_window_tokens * fraction)
        compactor = Compactor(model=self.model, conversations=self.conversations, clock=self.clock)
        return await compactor.compact(agent, self.settings.model_for(agent, record), keep)
