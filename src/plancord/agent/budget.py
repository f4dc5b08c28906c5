"""A plan's budget, one for whoever spends it.

``plan_mode.budget_usd`` / ``budget_tokens`` bound what one plan may cost, planning and
execution together, from the usage recorded per call. ``PlanBudget.spent`` answers whether
it is spent, and every model call made for a plan asks it first: the agent's own (through
``BudgetGuard``, consulted by the tool loop), each ``explore`` sub-agent's and the
reviewer's. Once spent no new call starts; calls already in flight finish (their tool calls
are answered, keeping the conversation whole), so the overshoot is at most the calls in
flight when the line was crossed. A spent budget while executing ends execution like any
completion, by policy and audited as such, with the steps so far kept, a notice in the
channel and a note for the model; while planning the turn ends with a notice and the plan
stays open (raise the budget to go on, or cancel).
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


class PlanBudget:
    """What a plan has spent against its budget; asked before each model call for it."""

    def __init__(
        self,
        *,
        plan_settings: SettingsProvider,
        planning: PlanningService,
        conversations: ConversationStore,
        clock: Clock,
        prices: Mapping[str, Price],
    ) -> None:
        self._plan_settings = plan_settings
        self._planning = planning
        self._conversations = conversations
        self._clock = clock
        self._prices = prices

    async def spent(self, agent: str) -> str | None:
        """Why ``agent``'s current plan may make no further model call, or None while it has
        budget left (or no budget, or no plan)."""
        settings = await self._plan_settings.plan_mode_for(agent)
        if settings.budget_usd is None and settings.budget_tokens is None:
            return None
        state = (await self._planning.status(agent)).state
        if state.phase is Phase.INACTIVE:
            return None
        since = state.entered_at or state.approved_at
        if since is None:
            return None
        calls = await self._conversations.usage_between(agent, since, self._clock.now())
        return budget_spent(
            cost_of(calls, self._prices),
            dollars=settings.budget_usd,
            tokens=settings.budget_tokens,
        )


class BudgetGuard:
    """Consulted by the tool loop before each of the agent's own model calls."""

    def __init__(
        self,
        *,
        budget: PlanBudget,
        planning: PlanningService,
        writer: ConversationWriter,
    ) -> None:
        self._budget = budget
        self._planning = planning
        self._writer = writer

    async def stops(self, agent: str) -> bool:
        """True when the plan's budget is spent: execution has then been ended, or the
        planning turn is to end; either way the channel has been told."""
        why = await self._budget.spent(agent)
        if why is None:
            return False
        phase = (await self._planning.status(agent)).state.phase
        if phase is not Phase.EXECUTING:
            await self._writer.say(
                agent,
                f"💸 Planning paused: {why}. No further model call is made for this plan; "
                "raise the budget to go on, or cancel the plan.",
            )
            return True
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
