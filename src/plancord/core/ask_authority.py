"""The authority (``core.authority``) asked about a click on an ask, with what it reads.

Why this exists: a permission request, a drift ask, a checkpoint or a question is decided
by whoever clicks its card, and a front end must not load the state and the settings and
apply the approver policy itself (a second front end would have to do it again, and the
fallback when the store fails would drift apart). ``AskAuthority`` loads what the answer
reads (who asked for the work, the agent's settings, the agent), asks ``judge`` (only
administrators when that cannot be loaded: fail closed), audits a refusal, and writes the
row of every ask's outcome in the authority's one format.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any, Protocol

from plancord.core.agents import AgentRecord
from plancord.core.authority import (
    Act,
    AuditPlace,
    Decision,
    Refusal,
    Standing,
    Subject,
    decision_row,
    describe_ask_deciders,
    judge,
    refused_row,
)
from plancord.core.errors import PlancordError
from plancord.core.planning import Actor, AuditAction, AuditEntry, PlanningState
from plancord.core.ports import Clock, SettingsProvider

log = logging.getLogger(__name__)


class AskRecords(Protocol):
    """What the ask authority reads and writes in the store."""

    async def load_state(self, agent: str) -> PlanningState: ...

    async def get_agent(self, name: str) -> AgentRecord: ...

    async def append_audit(self, entry: AuditEntry) -> None: ...


class AskAuthority:
    """Judges clicks on asks and records how each ask ended."""

    def __init__(self, store: AskRecords, settings: SettingsProvider, clock: Clock) -> None:
        self._store = store
        self._settings = settings
        self._clock = clock

    async def judge(
        self,
        actor: Actor,
        subject: Subject,
        act: Act,
        agent: str,
        requested_by: str | None,
        detail: Mapping[str, Any] | None = None,
    ) -> Decision | Refusal:
        """May ``actor`` take ``act`` on ``agent``'s ask, which ``requested_by`` is the
        requester of? A refusal is audited (with ``detail``: which ask) before it returns."""
        standing = await self._standing(agent, requested_by, subject)
        verdict = judge(actor, subject, act, standing)
        if isinstance(verdict, Refusal):
            await self._append(refused_row(verdict, AuditPlace(agent), self._clock.now(), detail))
        return verdict

    async def deciders(self, agent: str) -> str:
        """Who may decide ``agent``'s permission requests, drift asks and checkpoints, in
        words, from the policy in force now (``describe_ask_deciders``): what its card says."""
        try:
            settings = await self._settings.plan_mode_for(agent)
        except PlancordError as exc:
            log.warning("who may decide for %s cannot be read: %s", agent, exc)
            return describe_ask_deciders(None)
        return describe_ask_deciders(settings)

    async def record(
        self,
        action: AuditAction,
        actor: Actor,
        agent: str,
        detail: Mapping[str, Any],
        *,
        subject: Subject = Subject.PERMISSION,
        reason: str | None = None,
    ) -> None:
        """Audit how an ask ended (allowed, denied, timed out, not shown, expired); a store
        that fails is logged, never raised: the outcome stands."""
        row = decision_row(
            action, actor, AuditPlace(agent), self._clock.now(), detail, subject=subject
        )
        if reason is not None:
            row = row.model_copy(update={"detail": {**row.detail, "reason": reason}})
        await self._append(row)

    async def _standing(
        self, agent: str, requested_by: str | None, subject: Subject
    ) -> Standing | None:
        try:
            state = await self._store.load_state(agent)
            settings = await self._settings.plan_mode_for(agent)
            record = await self._store.get_agent(agent)
        except PlancordError as exc:
            log.warning("who may decide for %s cannot be read: %s", agent, exc)
            return None
        if subject is not Subject.QUESTION:
            # The ask's own requester; the name only when it is the plan's requester too.
            same = state.requested_by == requested_by
            state = state.model_copy(
                update={
                    "requested_by": requested_by,
                    "requested_by_name": state.requested_by_name if same else None,
                }
            )
        return Standing(state, settings, record)

    async def _append(self, entry: AuditEntry) -> None:
        try:
            await self._store.append_audit(entry)
        except PlancordError as exc:
            log.warning("could not audit %s for %s: %s", entry.action, entry.agent, exc)
