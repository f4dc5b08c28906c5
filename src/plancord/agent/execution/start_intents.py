"""The intents of starting executions (``core.intents.StartIntent``): each start opened before
git runs, what git is to do noted before it changes a ref, and the ones a gone process left
undone from what git shows.

Why this exists apart from ``starter``: the starter decides what an approved plan's branch
is; this object owns what makes the start one transaction with the approval: the process's
owner name, the starts it is carrying out right now, and the recovery of the others.
Opening a start is the database's compare-and-set on the plan waiting for a decision, so of
two approvals at once the loser learns here who is starting, and runs no git.

An open start always means an approval that did not commit (the approval's transaction
completes it), so the recovery never finishes one: it puts git back as it was, and the plan
still waits for a decision with its buttons working. From what git shows:

- nothing noted: git never got past reading the workspace; nothing to take back;
- the branch made, the workspace switched to it or not: the workspace goes back on the base
  with its index as it was staged, the branch is deleted and the kept ignored files dropped
  (``ExecutionBranch.undo_start``; no file of the working tree was touched by the start);
- the branch holding more than the reviewed state (someone worked on it by hand): it is left
  as it is and the channel is told.

Before the undo runs git, the lock files a killed git left in the repository are removed
when provably stale (``git_locks``); the channel's sentence and the audit row name them.

Every outcome is a sentence for the agent's channel and an audit row marked recovered.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Awaitable, Callable

from plancord.agent.execution.branch import BranchMoved, BranchRecord, ExecutionBranch
from plancord.agent.execution.host_git import BranchError
from plancord.agent.execution.intent_owner import IntentCarrier
from plancord.agent.execution.lease import GitGuard, ProcessLease
from plancord.agent.home import AgentHomes
from plancord.core.authority import Act, Subject
from plancord.core.errors import ExecutionRefused
from plancord.core.intents import IntentState, Recovered, StartIntent
from plancord.core.planning import Actor, AuditAction, AuditEntry, PlanEvent
from plancord.core.ports import Clock
from plancord.storage.backend import Backend
from plancord.storage.start_intents import StartIntentStore

log = logging.getLogger(__name__)

Say = Callable[[str, str], Awaitable[None]]
"""Tell an agent's channel a text: ``say(agent, text)``."""


class StartIntents:
    """Opens, notes, undoes and recovers the starts of one planning service."""

    def __init__(
        self,
        *,
        db: Backend,
        homes: AgentHomes,
        clock: Clock,
        lease: ProcessLease,
        say: Say | None = None,
    ) -> None:
        self.store = StartIntentStore(db)
        self._homes = homes
        self._clock = clock
        self._say = say
        self.lease = lease
        self._carrier = IntentCarrier(lease)

    def branch(self, intent: StartIntent) -> ExecutionBranch:
        """The agent's branch for carrying ``intent`` out: each git command first confirms
        the intent's lease (``lease.GitGuard``)."""
        guard = GitGuard(self.lease, intent.owner, intent.agent)
        return self._homes.of(intent.agent).branch.guarded(guard)

    async def open(
        self, agent: str, plan_id: str, revision: int, approver: Actor, steps: int
    ) -> StartIntent:
        """Open the start of ``plan_id`` v``revision`` before git runs; ``finished`` must
        follow it. A start in the way whose process is gone (or this service's own, left
        open) is undone first, and the channel told. Raises ``ExecutionRefused`` when
        another approval of the agent is under way, or when the plan no longer waits at
        that revision or an execution of the agent runs or waits (nothing ran)."""
        other: StartIntent | None = None
        for _ in range(2):
            intent = StartIntent(
                id=uuid.uuid4().hex,
                agent=agent,
                plan_id=plan_id,
                revision=revision,
                actor=approver.label,
                actor_name=approver.name,
                detail={"steps": steps},
                owner=await self._carrier.owner(),
                opened_at=self._clock.now(),
            )
            self._carrier.carrying(intent.id)
            claim = await self.store.open(intent)
            if claim.opened:
                return intent
            self._carrier.finished(intent.id)
            other = claim.in_the_way
            if other is None or not await self._orphan(other):
                break
            try:
                await self.recover(other)
            except BranchError as exc:
                raise ExecutionRefused(
                    f"Not approved: an earlier approval of {agent}'s plan was interrupted, "
                    f"and its branch could not be undone yet: {exc}"
                ) from exc
        if other is not None:
            raise ExecutionRefused(
                f"Not approved: {other.actor_name}'s approval of {agent}'s plan "
                f"`{other.plan_id}` v{other.revision} is already under way."
            )
        raise ExecutionRefused(
            f"Not approved: plan `{plan_id}` v{revision} no longer waits for a decision, or "
            f"an execution of {agent} started meanwhile."
        )

    async def note(self, intent: StartIntent, record: BranchRecord) -> StartIntent:
        """What git is about to do, written on the open intent before git changes a ref."""
        noted = intent.model_copy(
            update={
                "detail": {
                    **intent.detail,
                    "branch": record.branch,
                    "base": record.base,
                    "base_commit": record.base_commit,
                    "reviewed_commit": record.reviewed_commit,
                    "reviewed_index": record.reviewed_index,
                }
            }
        )
        if not await self.store.note(noted):
            raise ExecutionRefused(
                "Not approved: this approval's start was taken over meanwhile; nothing executes."
            )
        return noted

    async def undone(self, intent: StartIntent, why: str) -> None:
        """Git's branch is undone (or was never made): the intent closed as undone (the
        planning service audits the refusal). Should that not be written, the intent stays
        open and is undone again later (which finds nothing to do)."""
        try:
            await self.store.undone(intent, self._clock.now(), why, None)
        except Exception:
            log.warning("the undone start of %s stays open", intent.plan_id, exc_info=True)

    async def still_open(self, intent_id: str) -> StartIntent | None:
        """The intent ``intent_id`` while it is open (its approval did not commit: the
        approval's transaction completes it), else None."""
        found = await self.store.get(intent_id)
        return found if found is not None and found.state is IntentState.OPEN else None

    def finished(self, intent_id: str) -> None:
        """This service no longer carries the intent out (done, undone, or left open)."""
        self._carrier.finished(intent_id)

    async def orphans(self) -> list[StartIntent]:
        """The open starts no live process is carrying out, oldest first."""
        found = await self.store.open_intents()
        live = await self._carrier.live_owners() if found else set()
        return [i for i in found if self._carrier.is_orphan(i.id, i.owner, live)]

    async def recover(self, intent: StartIntent) -> Recovered | None:
        """Take an orphan over and undo it from what git shows, then tell its channel; None
        when another process took it first (or it was closed meanwhile). A git or database
        failure is raised, the intent left open for the next try."""
        owner = await self._carrier.owner()
        if not await self.store.take_over(intent, owner):
            return None
        async with self.lease.holding(intent.agent):
            return await self._recover(intent.model_copy(update={"owner": owner}))

    async def _recover(self, intent: StartIntent) -> Recovered | None:
        who = (
            f"{intent.actor_name}'s approval of {intent.agent}'s plan `{intent.plan_id}` "
            f"v{intent.revision}"
        )
        record = noted_record(intent)
        removed: tuple[str, ...] = ()
        if record is None:
            why = "interrupted before git changed anything"
            text = f"{who} was interrupted before git changed anything."
        else:
            branch = self.branch(intent)
            swept = await branch.clear_stale_locks(wait=True)
            removed = swept.removed
            try:
                changed = await branch.undo_start(record)
            except BranchMoved as exc:
                why = f"interrupted; its branch was left as it is: {exc}"
                text = f"{who} was interrupted, and plancord could not undo its branch: {exc}"
            except BranchError:
                if swept.left:  # git's lock files in the way: the channel learns which
                    await self._tell(
                        intent.agent,
                        f"{who} was interrupted, and plancord could not undo its branch yet."
                        f"{swept.left_text()} plancord tries again at its next start.",
                    )
                raise
            else:
                why = "interrupted before it was recorded; its branch is undone"
                text = (
                    f"{who} was interrupted before it was recorded; plancord undid its "
                    f"branch `{record.branch}`: the workspace is back on `{record.base}` as "
                    "it was reviewed."
                    if changed
                    else f"{who} was interrupted before it was recorded; git shows no branch "
                    f"of it: the workspace is on `{record.base}` as it was reviewed."
                )
            text += swept.removed_text()
        waits = await self.store.plan_waits(intent)
        text += (
            " Nothing executes; the plan still waits for a decision: approve it again on its card."
            if waits
            else " Nothing executes."
        )
        audit = self._recovered_row(intent, why, removed)
        if not await self.store.undone(intent, self._clock.now(), why, audit):
            return None
        await self._tell(intent.agent, text)
        return Recovered(intent.agent, intent.plan_id, text)

    async def _tell(self, agent: str, text: str) -> None:
        if self._say is not None:
            try:
                await self._say(agent, text)
            except Exception:
                log.warning("could not tell %s's channel", agent, exc_info=True)

    async def _orphan(self, intent: StartIntent) -> bool:
        live = await self._carrier.live_owners()
        return self._carrier.is_orphan(intent.id, intent.owner, live)

    def _recovered_row(
        self, intent: StartIntent, why: str, locks_removed: tuple[str, ...]
    ) -> AuditEntry:
        """The audit row of an approval a crash undid, in the refusals' format, with the
        stale git lock files removed before the undo."""
        detail: dict[str, object] = {
            "subject": Subject.PLAN.value,
            "act": Act.APPROVE.value,
            "event": PlanEvent.APPROVE.value,
            "why": why,
            "recovered": True,
        }
        if locks_removed:
            detail["locks_removed"] = list(locks_removed)
        return AuditEntry(
            at=self._clock.now(),
            agent=intent.agent,
            actor=intent.actor,
            action=AuditAction.DECISION_REFUSED,
            plan_id=intent.plan_id,
            revision=intent.revision,
            detail=detail,
        )


def noted_record(intent: StartIntent) -> BranchRecord | None:
    """What git was to do, as the intent noted it; None when git never got that far."""
    fields = ("branch", "base", "base_commit", "reviewed_commit", "reviewed_index")
    values = [intent.text(name) for name in fields]
    if not all(values):
        return None
    branch, base, base_commit, reviewed_commit, reviewed_index = values
    return BranchRecord(
        branch=branch,
        base=base,
        base_commit=base_commit,
        reviewed_commit=reviewed_commit,
        reviewed_index=reviewed_index,
    )
