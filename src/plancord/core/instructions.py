"""Who may instruct an agent, asked once for every path that reaches it.

Why this exists: a message in the agent's channel and ``/plan start`` both set the agent to
work, and each front end used to apply the access list itself and write its own refusal row.
``Instructions`` asks the authority (``core.authority``: the place, then the access list of
``core.access``) and audits a refusal in the authority's one format, so every path, and any
front end added later, refuses the same members the same way. A member refused again is not
audited again (they are told once; their messages never reach the model): the first refusal
of each member per agent stands for the rest while this process remembers it.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from dataclasses import dataclass

from plancord.core.agents import AgentRecord
from plancord.core.authority import (
    Act,
    AuditPlace,
    Decision,
    Refusal,
    Standing,
    Subject,
    judge,
    refused_row,
)
from plancord.core.errors import PlancordError
from plancord.core.planning import Actor, AuditEntry, PlanningState
from plancord.core.ports import AuditLog, Clock, SettingsProvider

log = logging.getLogger(__name__)

REMEMBERED_REFUSALS = 10_000
"""How many (agent, member) refusals are remembered, so a member is audited once."""


@dataclass(frozen=True, slots=True)
class Refused:
    """The member may not instruct the agent: ``refusal`` says why; ``again`` when they were
    refused before (already audited and told)."""

    refusal: Refusal
    again: bool


class Instructions:
    """Judges whether a member may instruct an agent and audits a refusal once."""

    def __init__(self, audit: AuditLog, settings: SettingsProvider, clock: Clock) -> None:
        self._audit = audit
        self._settings = settings
        self._clock = clock
        self._refused: OrderedDict[tuple[str, str], None] = OrderedDict()

    async def judge(self, agent: AgentRecord, actor: Actor) -> Decision | Refused:
        """May ``actor`` instruct ``agent`` (a message, ``/plan start``)? A refusal is
        audited the first time this member is refused by this agent."""
        settings = await self._settings.plan_mode_for(agent.name)
        standing = Standing(PlanningState(agent=agent.name), settings, agent)
        verdict = judge(actor, Subject.AGENT, Act.INSTRUCT, standing)
        if isinstance(verdict, Decision):
            return verdict
        key = (agent.name, actor.id)
        again = key in self._refused
        if not again:
            self._refused[key] = None
            while len(self._refused) > REMEMBERED_REFUSALS:
                self._refused.popitem(last=False)
            await self._append(refused_row(verdict, AuditPlace(agent.name), self._clock.now()))
        return Refused(verdict, again)

    async def _append(self, entry: AuditEntry) -> None:
        try:
            await self._audit.append_audit(entry)
        except PlancordError as exc:
            log.warning("could not audit %s for %s: %s", entry.action, entry.agent, exc)
