"""The intents of one results service: each decision opened before git runs, completed (or
undone) after, and the ones a gone process left finished or undone from what git shows.

Why this exists apart from ``results``: the card's actions (``ExecutionResults``) decide who
may do what and run git; this object owns what makes them transactions (``core.intents``):
the process's owner name, the intents it is carrying out right now, and the recovery of the
others. Opening an intent is the database's compare-and-set, so the loser of two approvals
at once learns here who is deciding, and runs no git.
"""

from __future__ import annotations

import contextlib
import logging
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime

from plancord.agent.execution.branch import ExecutionBranch
from plancord.agent.execution.intent_owner import IntentCarrier
from plancord.agent.execution.lease import GitGuard, ProcessLease
from plancord.agent.execution.recovery import IntentRecovery
from plancord.agent.home import AgentHomes
from plancord.core.errors import StorageError
from plancord.core.execution import ExecutionRecord, ResultState
from plancord.core.intents import DecisionNotRecorded, Recovered, ResultIntent, describe
from plancord.core.planning import Actor, AuditEntry
from plancord.core.ports import Clock
from plancord.core.results import ResultAction
from plancord.storage.backend import Backend
from plancord.storage.executions import ExecutionStore
from plancord.storage.result_intents import ResultIntentStore
from plancord.storage.step_commits import StepCommitStore

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class NotOpened:
    """Why a decision was not opened (nothing of it ran): ``why`` for the audit row,
    ``answer`` for the member; ``recovered`` when an earlier decision was finished or
    undone first."""

    why: str
    answer: str
    recovered: Recovered | None = None


class DecisionIntents:
    """Opens, completes and recovers the intents of one results service."""

    def __init__(
        self,
        *,
        db: Backend,
        executions: ExecutionStore,
        commits: StepCommitStore,
        homes: AgentHomes,
        clock: Clock,
        lease: ProcessLease,
    ) -> None:
        self.store = ResultIntentStore(db)
        self._executions = executions
        self._clock = clock
        self._homes = homes
        self._lease = lease
        self._carrier = IntentCarrier(lease)
        self._recovery = IntentRecovery(
            intents=self.store,
            executions=executions,
            commits=commits,
            homes=homes,
            clock=clock,
            lease=lease,
        )

    def branch(self, intent: ResultIntent) -> ExecutionBranch:
        """The agent's branch for carrying ``intent`` out: each git command first confirms
        the intent's lease (``lease.GitGuard``)."""
        guard = GitGuard(self._lease, intent.owner, intent.agent)
        return self._homes.of(intent.agent).branch.guarded(guard)

    def holding(self, agent: str) -> contextlib.AbstractAsyncContextManager[str]:
        """Hold git in ``agent``'s workspace while a decision runs it."""
        return self._lease.holding(agent)

    async def open(
        self, record: ExecutionRecord, actor: Actor, action: ResultAction, detail: dict[str, object]
    ) -> ResultIntent | NotOpened:
        """Open the intent of ``action`` on ``record``'s result at the version its card
        showed, before git runs; ``finished`` must follow it. When another decision is
        open: one whose process is gone (or this service's own, whose record failed) is
        finished or undone first; a live one wins."""
        intent = ResultIntent(
            id=uuid.uuid4().hex,
            plan_id=record.plan_id,
            agent=record.agent,
            version=record.result_version,
            action=action,
            actor=actor.label,
            actor_name=actor.name,
            detail={"revision": record.revision, **detail},
            owner=await self._carrier.owner(),
            opened_at=self._clock.now(),
        )
        self._carrier.carrying(intent.id)
        claim = await self.store.open(intent)
        if claim.opened:
            return intent
        self._carrier.finished(intent.id)
        other = claim.in_the_way
        if other is not None and await self._orphan(other):
            recovered = await self._recovery.recover(other, await self._carrier.owner())
            if recovered is not None:
                return NotOpened(
                    why=f"an earlier decision was finished first: {recovered.text}",
                    answer=(
                        f"Nothing new was done: {recovered.text} Use the newest completion card."
                    ),
                    recovered=recovered,
                )
        if other is not None:
            why = f"{describe(other)} of this result is already under way"
        else:
            now = await self._executions.get(record.plan_id)
            state = now.outcome if now is not None and not now.waiting else None
            by = f" by {now.decided_by_name}" if now is not None and now.decided_by_name else ""
            why = (
                f"the result was already {state}{by}"
                if state
                else "the card is out of date (the result changed since)"
            )
        return NotOpened(why=why, answer=f"Nothing changed: {why}.")

    def finished(self, intent: ResultIntent) -> None:
        """This service no longer carries ``intent`` out (done, undone, or left open)."""
        self._carrier.finished(intent.id)

    async def refused(self, intent: ResultIntent, why: str, entry: AuditEntry) -> None:
        """Git refused the action (nothing changed): the intent undone with its audit row.
        Should that not be written, the intent stays open and is undone later."""
        try:
            await self.store.undone(intent, self._clock.now(), why, entry)
        except Exception:
            log.warning(
                "the refused %s of %s stays open", intent.action, intent.plan_id, exc_info=True
            )

    async def decided(
        self, intent: ResultIntent, state: ResultState, outcome: str, entry: AuditEntry, said: str
    ) -> None:
        """Git merged or discarded: the record, its audit row and the intent completed in one
        transaction; ``DecisionNotRecorded`` (saying ``said``) when it cannot be written."""
        await self._completed(
            said, lambda now: self.store.decided(intent, state, now, outcome, entry)
        )

    async def rolled_back(
        self, intent: ResultIntent, kept: int, pinned: str, entry: AuditEntry, said: str
    ) -> None:
        await self._completed(
            said, lambda now: self.store.rolled_back(intent, kept, pinned, now, entry)
        )

    async def pushed(
        self, intent: ResultIntent, outcome: str, entry: AuditEntry, said: str
    ) -> None:
        await self._completed(said, lambda now: self.store.done(intent, now, outcome, entry))

    async def orphans(self) -> list[ResultIntent]:
        """The open intents no live process is carrying out, oldest first."""
        found = await self.store.open_intents()
        live = await self._carrier.live_owners() if found else set()
        return [i for i in found if self._carrier.is_orphan(i.id, i.owner, live)]

    async def recover(self, intent: ResultIntent) -> Recovered | None:
        """Finish or undo an orphan (``recovery``); None when another process took it (or
        its owner's lease turned out live)."""
        return await self._recovery.recover(intent, await self._carrier.owner())

    async def _orphan(self, intent: ResultIntent) -> bool:
        live = await self._carrier.live_owners()
        return self._carrier.is_orphan(intent.id, intent.owner, live)

    async def _completed(
        self, said: str, write: Callable[[datetime], Awaitable[bool | None]]
    ) -> None:
        try:
            recorded = await write(self._clock.now())
        except Exception as exc:
            log.warning("a decision git carried out could not be recorded", exc_info=exc)
            raise not_recorded(said, exc) from exc
        if recorded is False:
            # Nothing moves a result's version while its intent is open; a process that
            # writes without intents (an older plancord beside this one) could.
            log.error("a decision git carried out found its result's record moved on")
            raise DecisionNotRecorded(
                f"{said} Git did this, but the result's record had moved on meanwhile; the "
                "completion card shows what plancord recorded."
            )


def not_recorded(said: str, exc: Exception) -> DecisionNotRecorded:
    """What a member is told when git did the decision and its record failed: what git did
    (the store's own message would say that nothing changed, which is true only of it)."""
    kind = exc.kind if isinstance(exc, StorageError) else "other"
    why = "the database is locked by another process" if kind == "locked" else "a database error"
    return DecisionNotRecorded(
        f"{said} Git did this, but plancord could not record it yet ({why}). It records it "
        "at the next click on this card or at its next start; nothing needs doing again."
    )
