"""Which process carries out an intent, and whether it still can.

Why this exists: an open intent (``core.intents``) is either being carried out right now or
was left by a process that is gone (killed, stopped past its lease, or one whose database
write failed after git ran). Only the second may be finished or undone by someone else, and
finishing a live one would run git twice at once. The owner is the process's lease
(``lease.ProcessLease``): an intent whose owner's lease is live belongs to that process,
wherever it runs; one whose lease expired or was given up is an orphan. Of this process's
own, an intent no task of this service is carrying out is an orphan too (its record
failed, its task was killed).
"""

from __future__ import annotations

from plancord.agent.execution.lease import ProcessLease


class IntentCarrier:
    """One service's intents under its process's lease, and those it carries out now. The
    result decisions and the approvals' starts each hold one."""

    def __init__(self, lease: ProcessLease) -> None:
        self.lease = lease
        self._running: set[str] = set()

    async def owner(self) -> str:
        """The owner id a new intent is opened under (the lease taken if it was not)."""
        return await self.lease.owner_now()

    def carrying(self, intent_id: str) -> None:
        """The service carries the intent out from now on."""
        self._running.add(intent_id)

    def finished(self, intent_id: str) -> None:
        """The service no longer carries the intent out (done, undone, or left open)."""
        self._running.discard(intent_id)

    async def live_owners(self) -> set[str]:
        """The owners whose lease is live now, by the database's clock."""
        return set(await self.lease.live())

    def is_orphan(self, intent_id: str, owner: str, live: set[str]) -> bool:
        """Whether the open intent ``intent_id`` of ``owner`` is nobody's to carry out,
        ``live`` being the live leases' owners."""
        if intent_id in self._running:
            return False
        return self.lease.live_here(owner) or owner not in live
