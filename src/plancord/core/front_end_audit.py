"""What a front end reports that the audit log keeps, written by the core.

Why this exists: a front end renders and reports; it does not write the audit log, whose
rows the core builds in its formats. When the Discord edge posts a deleted card again it
reports it here (``card_reposted``), and the row is the core's, as it would be for any other
front end that keeps its cards alive.
"""

from __future__ import annotations

import logging

from plancord.core.errors import PlancordError
from plancord.core.planning import Actor, AuditAction, AuditEntry
from plancord.core.ports import AuditLog, Clock

log = logging.getLogger(__name__)


class FrontEndAudit:
    """Audits what a front end did on its own to keep a decision reachable."""

    def __init__(self, audit: AuditLog, clock: Clock) -> None:
        self._audit = audit
        self._clock = clock

    async def card_reposted(
        self, agent: str, card: str, what: str, deleted_by: str | None, url: str
    ) -> None:
        """``agent``'s ``card`` (``what`` it is) was deleted (by ``deleted_by``, when the
        server says) and posted again at ``url``. A store that fails is logged."""
        entry = AuditEntry(
            at=self._clock.now(),
            agent=agent,
            actor=Actor.policy("discord").label,
            action=AuditAction.CARD_REPOSTED,
            detail={"card": card, "what": what, "deleted_by": deleted_by, "url": url},
        )
        try:
            await self._audit.append_audit(entry)
        except PlancordError:
            log.warning("could not audit a card posted again", exc_info=True)
