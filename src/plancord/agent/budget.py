"""A plan's budget: before each model call of an executing plan, what the plan has cost so
far (planning and execution, from the usage recorded per call) is held against
``plan_mode.budget_usd`` / ``budget_tokens``. Spent, execution ends like any completion, by
policy and audited as such, with the steps so far kept, a notice in the channel and a note
for the model; no further model call is made for the plan.

The check sits between calls, so the call that crosses the line finishes (its tool calls are
answered, keeping the conversation whole); the budget bounds what is spent after it.
"""

from __future__ import annotations

from plancord.agent.runtime_base import HOST, RuntimeBase
from plancord.core.cost import budget_spent, cost_of
from plancord.core.planning import Actor, Phase


class BudgetGuard(RuntimeBase):
    async def _budget_stops(self, agent: str) -> bool:
        """True when an executing plan's budget is spent; execution has then been ended."""
        settings = await self.plan_settings.plan_mode_for(agent)
        if settings.budget_usd is None and settings.budget_tokens is None:
            return False
        state = (await self.planning.status(agent)).state
        if state.phase is not Phase.EXECUTING:
            return False
        since = state.entered_at or state.approved_at
        if since is None:
            return False
        calls = await self.conversations.usage_between(agent, since, self.clock.now())
        why = budget_spent(
            cost_of(calls, self.settings.prices),
            dollars=settings.budget_usd,
            tokens=settings.budget_tokens,
        )
        if why is None:
            return False
        await self.planning.complete(agent, Actor.policy("budget"), f"Execution stopped: {why}.")
        note = (
            f"{HOST} Execution stopped: {why}. Plan mode has ended with the steps so far "
            "kept; do not continue the plan."
        )
        await self._add_user_blocks(agent, [{"type": "text", "text": note}])
        await self._say(
            agent,
            f"💸 Execution stopped: {why}. The steps finished so far are kept; send a "
            "message to go on, or raise the budget and plan the rest.",
        )
        return True
