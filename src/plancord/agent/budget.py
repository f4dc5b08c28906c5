"""A plan's budget: before each model call of an executing plan, what the plan has cost so
far (planning and execution, from the usage recorded per call) is held against
``plan_mode.budget_usd`` / ``budget_tokens``. Spent, execution ends like any completion, by
policy and audited as such, with the steps so far kept, a notice in the channel and a note
for the model; no further model call is made for the plan.

The check sits between calls, so the call that crosses the line finishes (its tool calls are
answered, keeping the conversation whole); the budget bounds what is spent after it.
"""

from __future__ import annotations

from collections.abc import Mapping

from plancord.agent.conversation_writer import ConversationWriter
from plancord.agent.host_prompts import HOST
from plancord.core.cost import Price, budget_spent, cost_of
from plancord.core.planning import Actor, Phase
from plancord.core.ports import Clock, SettingsProvider
from plancord.core.service import PlanningService
from plancord.storage.conversations import ConversationStore


class BudgetGuard:
    """Consulted by the tool loop before each model call."""

    def __init__(
        self,
        *,
        plan_settings: SettingsProvider,
        planning: PlanningService,
        conversations: ConversationStore,
        writer: ConversationWriter,
        clock: Clock,
        prices: Mapping[str, Price],
    ) -> None:
        self._plan_settings = plan_settings
        self._planning = planning
        self._conversations = conversations
        self._writer = writer
        self._clock = clock
        self._prices = prices

    async def stops(self, agent: str) -> bool:
        """True when an executing plan's budget is spent; execution has then been ended."""
        settings = await self._plan_settings.plan_mode_for(agent)
        if settings.budget_usd is None and settings.budget_tokens is None:
            return False
        state = (await self._planning.status(agent)).state
        if state.phase is not Phase.EXECUTING:
            return False
        since = state.entered_at or state.approved_at
        if since is None:
            return False
        calls = await self._conversations.usage_between(agent, since, self._clock.now())
        why = budget_spent(
            cost_of(calls, self._prices),
            dollars=settings.budget_usd,
            tokens=settings.budget_tokens,
        )
        if why is None:
            return False
        await self._planning.complete(agent, Actor.policy("budget"), f"Execution stopped: {why}.")
        note = (
            f"{HOST} Execution stopped: {why}. Plan mode has ended with the steps so far "
            "kept; do not continue the plan."
        )
        await self._writer.add_user_blocks(agent, [{"type": "text", "text": note}])
        await self._writer.say(
            agent,
            f"💸 Execution stopped: {why}. The steps finished so far are kept; send a "
            "message to go on, or raise the budget and plan the rest.",
        )
        return True
