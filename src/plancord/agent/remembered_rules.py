"""Remembered rules at work: what a call is as rules see it, which rule applies, what "Allow
always" on its card would remember, and making, listing and revoking members' rules.

Why one object: the dispatch (before every call), the permission card's "Allow always", the
``/agent rules`` command and ``plancord rules`` all need the same answers, and a rule made or
revoked by any of them must be what the next call in every process reads. So nothing here
keeps a rule in memory: the operator's come from the config, members' from the store, read
at each call.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta

from plancord.core.call_rules import (
    FILE_TOOLS,
    CallFacts,
    CallRule,
    RuleScope,
    RuleTier,
    applicable,
    workspace_path,
)
from plancord.core.decider import Decider
from plancord.core.gate import GateDecision
from plancord.core.kinds import Permission
from plancord.core.ports import Clock
from plancord.core.shell.readonly.argv_prefix import simple_argv
from plancord.storage.call_rules import CallRuleStore, StoredRule, new_rule_id


class RememberedRules:
    def __init__(
        self, store: CallRuleStore, clock: Clock, operator_rules: Sequence[CallRule] = ()
    ) -> None:
        self.store = store
        self._clock = clock
        self.operator_rules = tuple(operator_rules)

    @staticmethod
    def facts(agent: str, tool: str, detail: str, *, shell: bool) -> CallFacts:
        """The call as rules see it; ``tool`` is the tool whose permission it needs."""
        if shell:
            return CallFacts(agent, tool, argv=simple_argv(detail))
        if tool in FILE_TOOLS:
            return CallFacts(agent, tool, path=workspace_path(detail))
        return CallFacts(agent, tool)

    async def applicable(self, facts: CallFacts) -> CallRule | None:
        """The rule deciding ``facts`` now (operator's or a member's); None: none does."""
        now = self._clock.now()
        members = await self.store.in_force(facts.agent, facts.tool, now)
        return applicable((*self.operator_rules, *members), facts, now)

    @staticmethod
    def scope_for(facts: CallFacts, *, shell: bool) -> RuleScope | None:
        """What "Allow always" on this call's card would cover; None when it cannot be
        remembered (a shell line that is more than one plain command, a path outside the
        workspace)."""
        if shell:
            return RuleScope(facts.tool, argv=facts.argv) if facts.argv else None
        if facts.tool in FILE_TOOLS:
            return RuleScope(facts.tool, path=facts.path) if facts.path else None
        return RuleScope(facts.tool)

    async def remember(
        self,
        agent: str,
        scope: RuleScope,
        decision: Permission,
        by: str,
        lasts: timedelta | None = None,
    ) -> CallRule:
        """Keep a member's rule made by ``by`` (an audit label) now, for ``lasts`` (None:
        until revoked)."""
        now = self._clock.now()
        rule = CallRule(
            id=new_rule_id(),
            tier=RuleTier.MEMBER,
            decision=decision,
            agent=agent,
            scope=scope,
            created_by=by,
            created_at=now,
            expires_at=now + lasts if lasts is not None else None,
        )
        return await self.store.add(rule)

    async def listed(self, agent: str | None = None) -> list[StoredRule]:
        return await self.store.listed(agent)

    async def revoke(self, rule_id: str, by: str, agent: str | None = None) -> StoredRule | None:
        """Revoke a member's rule (of ``agent``, when given); the rule as it was, or None
        when there is no such rule in force."""
        stored = await self.store.get(rule_id)
        if stored is None or (agent is not None and stored.rule.agent != agent):
            return None
        if not await self.store.revoke(rule_id, by, self._clock.now()):
            return None
        return stored

    def now_status(self, stored: StoredRule) -> str:
        return stored.status(self._clock.now())


def remember_scope(
    rules: RememberedRules | None, facts: CallFacts | None, decision: GateDecision, shell: bool
) -> RuleScope | None:
    """What the card's "Allow always" would remember: only for a call the permission
    profile holds (never a drift, a confirm-each-edit, or an operator rule's ask)."""
    if rules is None or facts is None or decision.decider is not Decider.PROFILE:
        return None
    return RememberedRules.scope_for(facts, shell=shell)


def applies_text(decision: GateDecision) -> str:
    if decision.rule is not None:
        return f"{decision.rule.label()}: {decision.rule.describe()}"
    if decision.decider is Decider.DRIFT:
        return "the drift policy: the call is outside the approved plan's current step"
    if decision.decider is Decider.GATE:
        return "the approval: every edit is confirmed"
    return "no remembered rule covers this call; the agent's permission profile asks"


async def rules_lines(rules: RememberedRules, agent: str | None) -> list[str]:
    """The rules for ``agent`` (every agent's when None), one line each: the operator's
    first (they rank over members'), then members' with who made them and their status."""
    lines = [
        f"{rule.id} · operator · {rule.describe()}"
        for rule in rules.operator_rules
        if agent is None or rule.agent in (None, agent)
    ]
    for stored in await rules.listed(agent):
        rule = stored.rule
        made = f"{rule.created_at:%Y-%m-%d %H:%M} UTC" if rule.created_at else "?"
        lines.append(
            f"{rule.id} · member · {rule.describe()} · made by {rule.created_by} at {made} · "
            f"{rules.now_status(stored)}"
        )
    return lines
