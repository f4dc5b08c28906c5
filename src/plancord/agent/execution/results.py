"""The decisions on an execution's result: Merge, Discard, Roll back, Push.

Why this exists: the result of an approved plan is a change a human merges or discards
(``core.results``). When an execution ends, for whatever reason, its result starts waiting
and the front ends are told to show its completion card (``ResultListener``); the agent's
settings may ask for a review of the result, shown on the card when it is kept. Every click
comes here: it must name the result's current version (an older card's click is refused),
the clicker must pass the plan's approver policy (four-eyes and ``approvals: N`` apply to
Merge; Merge votes are records of their own, counted like plan approvals), and only then is
the branch touched (``ExecutionBranch``). A refusal changes nothing and is audited; so is
every action with its outcome.

Every decision that runs git is an intent first (``core.intents``): written before git runs,
completed with the decision's record and its audit row in one transaction after. Opening the
intent is the database's compare-and-set on the result's version, so of two approvals at
once (two clicks, a click and the operator's shell, two processes) one reaches git and the
other is told who is deciding; nothing of the loser runs. An intent left open (a crash, a
database that could not be written after git ran) is finished or undone from what git shows
(``recovery``) at the next start, or when a click finds it, and the channel is told.

A result is pinned: when it opens, the host records the commit its card shows, and Merge,
Push, the diff and every Merge vote are bound to that commit. A later commit on the branch
(a turn after the card, anyone's "commit this too") is not part of the result: the card
says the branch moved, and Merge still lands only the pinned commit. Roll back pins the
result anew and opens a new version, so votes cast before it stop counting.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from pathlib import Path

from plancord.agent.execution.branch import BranchError
from plancord.agent.execution.decision_intents import DecisionIntents
from plancord.agent.execution.remotes import PushRemotes
from plancord.agent.execution.result_summary import summarise
from plancord.agent.execution.starter import branch_record
from plancord.agent.home import AgentHomes
from plancord.agent.plan_review.runs import PlanReviewRuns
from plancord.core.approval_votes import entitled_votes
from plancord.core.authority import AuditPlace, Refusal, Subject, decision_row
from plancord.core.ballot import ApprovalVote, VoteWrite
from plancord.core.errors import NotAuthorised, PlancordError
from plancord.core.execution import ExecutionRecord, ResultState, StepNumber
from plancord.core.intents import Recovered, ResultIntent
from plancord.core.planning import Actor, ActorKind, AuditAction, AuditEntry
from plancord.core.ports import Clock, MemberDirectory, PlanningChange, SettingsProvider
from plancord.core.results import (
    ResultAction,
    ResultFailed,
    ResultListener,
    ResultSummary,
    StaleResult,
    requester_state,
    result_verdict,
)
from plancord.core.sandbox_policy import SandboxPolicy
from plancord.core.settings import PlanModeSettings
from plancord.storage.executions import ExecutionStore
from plancord.storage.plan_reviews import PlanReviewStore, ReviewKind
from plancord.storage.result_votes import ResultVoteStore
from plancord.storage.step_commits import StepCommitStore
from plancord.storage.store import SqlStore

log = logging.getLogger(__name__)

REVIEW_DIFF_LIMIT = 400_000
"""The most of a result's diff a result review reads (the card attaches all of it)."""


class ExecutionResults:
    """Waiting results of every agent, and the one way a human decides them."""

    def __init__(
        self,
        *,
        executions: ExecutionStore,
        store: SqlStore,
        plan_settings: SettingsProvider,
        members: MemberDirectory | None,
        clock: Clock,
        homes: AgentHomes,
        reviews: PlanReviewRuns | None = None,
    ) -> None:
        self._executions = executions
        self._store = store
        self._settings = plan_settings
        self._members = members
        self._clock = clock
        self._homes = homes
        self._reviews = reviews
        self._votes = ResultVoteStore(store.db)
        self._commits = StepCommitStore(executions.db)
        self._kept_reviews = PlanReviewStore(store.db)
        # Readers (the card, the diff) wait for an action of this process on the same
        # result; a lock lives only while someone holds or waits for it.
        self._locks: weakref.WeakValueDictionary[str, asyncio.Lock] = weakref.WeakValueDictionary()
        self._intents = DecisionIntents(
            db=store.db,
            executions=executions,
            commits=self._commits,
            homes=self._homes,
            clock=clock,
        )
        self._listeners: list[ResultListener] = []
        self._tasks: set[asyncio.Task[None]] = set()
        self._remotes = PushRemotes(self.policy_of, homes.sandbox)

    def add_listener(self, listener: ResultListener) -> None:
        self._listeners.append(listener)

    # -- reading -----------------------------------------------------------------------

    async def waiting(self, agent: str) -> ExecutionRecord | None:
        """The agent's result waiting for Merge or Discard, if any."""
        return await self._executions.waiting_result(agent)

    async def with_result(self, plan_id: str) -> ExecutionRecord | None:
        """``plan_id``'s execution when it has a result (waiting or decided)."""
        record = await self._executions.get(plan_id)
        return record if record is not None and record.result is not None else None

    async def latest(self, agent: str) -> ExecutionRecord | None:
        """The agent's newest execution that has a result (waiting or decided)."""
        record = await self._executions.latest(agent)
        return record if record is not None and record.result is not None else None

    async def summary(self, plan_id: str) -> ResultSummary | None:
        """What the completion card of ``plan_id``'s result shows now."""
        record = await self._executions.get(plan_id)
        if record is None or record.result is None:
            return None
        revision = await self._store.get_revision(plan_id, record.revision)
        settings = await self._settings.plan_mode_for(record.agent)
        votes: tuple[str, ...] = ()
        if record.waiting and settings.approvals > 1:
            counted = await self._counted(record, None)
            votes = tuple(vote.voter_name for vote in counted)
        kept = await self._kept_reviews.get(plan_id, record.revision, ReviewKind.RESULT)
        review = kept.review if kept is not None else None
        async with self._lock(plan_id):
            return await summarise(
                record,
                revision.plan if revision is not None else None,
                self._executions,
                self._homes.of(record.agent).reading,
                await self._commits.commits(plan_id),
                await self._commits.rolled_back(plan_id),
                votes=votes,
                needed=settings.approvals,
                review=review,
                push_remote=await self._remotes.shown(record),
            )

    async def write_diff(self, plan_id: str, use: Callable[[Path], Awaitable[None]]) -> bool:
        """Write the result's full diff to a private file of the host's and hand it to
        ``use`` while no other action on the result runs; False when there is no such
        result or branch."""
        record = await self._executions.get(plan_id)
        if record is None:
            return False
        async with self._lock(plan_id):
            try:
                async with self._homes.of(record.agent).reading.diff_file(
                    branch_record(record)
                ) as path:
                    await use(path)
            except (BranchError, PlancordError) as exc:
                log.info("no diff for the result of %s: %s", plan_id, exc)
                return False
            return True

    async def push_remote(self, record: ExecutionRecord) -> str | None:
        """The remote Push sends a waiting result's branch to, as git says now
        (``remotes.push_remote``); the card shows it from then on."""
        return await self._remotes.read(record)

    # -- an execution ended ----------------------------------------------------------------

    async def planning_changed(self, change: PlanningChange) -> None:
        """When the change ended an execution (its record has ended by now: the step
        keeper listens before this), its result starts waiting and its card is shown."""
        before = change.before
        if before.plan_id is None:
            return
        record = await self.open_ended(
            before.plan_id, before.requested_by, before.requested_by_name
        )
        if record is None:
            return
        if self._reviews is not None and change.revision is not None:
            task = asyncio.create_task(self._review(record, change))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def open_ended(
        self, plan_id: str, requested_by: str | None, requested_by_name: str | None
    ) -> ExecutionRecord | None:
        """Open the result of ``plan_id``'s ended execution, pinned to its branch's tip,
        and tell the front ends to show its card; the record, or None when there is no
        ended execution whose result is still to open."""
        record = await self._executions.get(plan_id)
        if record is None or record.running or record.result is not None:
            return None
        pinned = await self._tip(record)
        if not await self._executions.open_result(plan_id, requested_by, requested_by_name, pinned):
            return None
        await self._tell(record.agent, plan_id, ready=True)
        return record

    async def _review(self, record: ExecutionRecord, change: PlanningChange) -> None:
        revision = change.revision
        if revision is None or self._reviews is None:
            return
        settings = (await self._settings.plan_mode_for(record.agent)).review
        if settings is None or not settings.review_result:
            return
        text: list[str] = []

        async def read(path: Path) -> None:
            data = await asyncio.to_thread(_head, path, REVIEW_DIFF_LIMIT)
            text.append(data.decode("utf-8", "replace"))

        try:
            if not await self.write_diff(record.plan_id, read):
                return
            kept = await self._reviews.review_result(revision, before_task(change), text[0])
        except PlancordError:
            log.warning("the result review of %s failed", record.plan_id, exc_info=True)
            return
        if kept is not None:
            await self._tell(record.agent, record.plan_id, ready=False)

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._intents.close()

    # -- after a restart -------------------------------------------------------------------

    async def recover(
        self, serves: Callable[[str], Awaitable[bool]] | None = None
    ) -> list[Recovered]:
        """Finish or undo every open intent whose process is gone (of the agents ``serves``
        says are this process's), and tell the channel of each what happened."""
        done: list[Recovered] = []
        for intent in await self._intents.orphans():
            if serves is not None and not await serves(intent.agent):
                continue
            recovered = await self._recover(intent)
            if recovered is not None:
                done.append(recovered)
        return done

    async def _recover(self, intent: ResultIntent) -> Recovered | None:
        async with self._lock(intent.plan_id):
            try:
                recovered = await self._intents.recover(intent)
            except Exception:
                log.exception(
                    "the open %s of %s could not be recovered", intent.action, intent.plan_id
                )
                return None
        if recovered is not None:
            await self._tell_recovered(recovered)
        return recovered

    async def _tell_recovered(self, recovered: Recovered) -> None:
        await self._tell(recovered.agent, recovered.plan_id, recovered=recovered.text)
        self._redraw_soon(recovered.agent, recovered.plan_id)

    # -- the decisions ---------------------------------------------------------------------

    async def merge(self, plan_id: str, version: int, actor: Actor) -> str:
        """Put the pinned commit onto the base (a fast-forward; a base moved since the
        execution started is refused, changing nothing), or record ``actor``'s vote (bound
        to the version and the pinned commit) when more approvers must agree. The answer
        for ``actor``."""
        async with self._lock(plan_id):
            record, settings = await self._decidable(plan_id, version, actor, ResultAction.MERGE)
            if actor.kind is ActorKind.USER and settings.approvals > 1:
                counted = await self._vote(record, actor)
                if len(counted) < settings.approvals:
                    self._redraw_soon(record.agent, plan_id)
                    names = ", ".join(vote.voter_name for vote in counted)
                    left = settings.approvals - len(counted)
                    return (
                        f"Your vote to merge is recorded: {len(counted)} of "
                        f"{settings.approvals} ({names}). It merges after {left} more "
                        f"approver{'s' if left != 1 else ''}."
                    )
            async with self._deciding(
                record, actor, ResultAction.MERGE, commit=record.result_commit or ""
            ) as intent:
                try:
                    merged = await self._homes.of(record.agent).branch.merge(branch_record(record))
                except BranchError as exc:
                    await self._refused(intent, record, actor, "merge", str(exc))
                    raise ResultFailed(f"Not merged: {exc}") from exc
                outcome = f"merged into `{record.base}` as a fast-forward ({merged[:8]})"
                said = (
                    f"Merged {record.branch} into `{record.base}` as a fast-forward ({merged[:8]})."
                )
                await self._decided(intent, record, actor, ResultState.MERGED, outcome, said)
                return said

    async def discard(self, plan_id: str, version: int, actor: Actor) -> str:
        """Put the base branch and the working tree back at the reviewed state; when the
        base moved since, or kept files could not be put back, the answer and the card
        say what was put back instead (Discard never waits on them)."""
        async with self._lock(plan_id):
            record, _ = await self._decidable(plan_id, version, actor, ResultAction.DISCARD)
            async with self._deciding(record, actor, ResultAction.DISCARD) as intent:
                try:
                    done = await self._homes.of(record.agent).branch.discard(branch_record(record))
                except BranchError as exc:
                    await self._refused(intent, record, actor, "discard", str(exc))
                    raise ResultFailed(f"Not discarded: {exc}") from exc
                notes = done.notes(record.base)
                if notes:
                    outcome = f"discarded: {notes}"
                    said = f"Discarded the result, but {notes}."
                else:
                    outcome = (
                        f"discarded: `{record.base}` and the workspace are back at the "
                        "reviewed state"
                    )
                    said = f"Discarded the result; `{record.base}` is back at the reviewed state."
                await self._decided(intent, record, actor, ResultState.DISCARDED, outcome, said)
                return said

    async def roll_back(self, plan_id: str, version: int, step: StepNumber, actor: Actor) -> str:
        """The branch and working tree as they were before step ``step`` (as people count)."""
        async with self._lock(plan_id):
            record, _ = await self._decidable(plan_id, version, actor, ResultAction.ROLL_BACK)
            recorded = await self._commits.commits(plan_id)
            branch = self._homes.of(record.agent).branch
            index = next((i for i, c in enumerate(recorded) if c.step == step), None)
            before = recorded[index - 1].commit if index else record.reviewed_commit
            async with self._deciding(
                record,
                actor,
                ResultAction.ROLL_BACK,
                step=step,
                before=before,
                tip=await self._tip(record) or "",
            ) as intent:
                try:
                    kept = await branch.roll_back(
                        branch_record(record), [(c.step, c.commit) for c in recorded], step
                    )
                except BranchError as exc:
                    await self._refused(intent, record, actor, "roll back", str(exc))
                    raise ResultFailed(f"Not rolled back: {exc}") from exc
                pinned = recorded[kept - 1].commit if kept > 0 else record.reviewed_commit
                said = f"Rolled {record.branch} back to before step {step}."
                entry = self._entry(
                    record, actor, ResultAction.ROLL_BACK.audit, f"before step {step}"
                )
                await self._intents.rolled_back(intent, kept, pinned, entry, said)
                self._redraw_soon(record.agent, plan_id)
                return said

    async def push(self, plan_id: str, version: int, actor: Actor) -> str:
        """Push the branch, under its own name, to the agent's push remote."""
        async with self._lock(plan_id):
            record, _ = await self._decidable(plan_id, version, actor, ResultAction.PUSH)
            remote = await self.push_remote(record)
            if remote is None:
                why = "the agent has no push remote it can reach"
                await self._audit_refused(record, actor, ResultAction.PUSH.verb, why)
                self._redraw_soon(record.agent, plan_id)
                raise ResultFailed(f"Not pushed: {why}.")
            pinned = record.result_commit or ""
            async with self._deciding(
                record, actor, ResultAction.PUSH, remote=remote, commit=pinned
            ) as intent:
                try:
                    await self._homes.of(record.agent).branch.push(branch_record(record), remote)
                except BranchError as exc:
                    await self._refused(intent, record, actor, "push", str(exc))
                    raise ResultFailed(f"Not pushed: {exc}") from exc
                outcome = f"pushed {pinned[:8]} to {remote}"
                said = f"Pushed {record.branch} ({pinned[:8]}) to `{remote}`."
                entry = self._entry(record, actor, ResultAction.PUSH.audit, outcome)
                await self._intents.pushed(intent, outcome, entry, said)
                return said

    # -- helpers -------------------------------------------------------------------------

    async def _decidable(
        self, plan_id: str, version: int, actor: Actor, action: ResultAction
    ) -> tuple[ExecutionRecord, PlanModeSettings]:
        record = await self._executions.get(plan_id)
        if record is None or record.result is None:
            raise StaleResult("This completion card names no result plancord knows.")
        if not record.waiting:
            why = f"the result was already {record.outcome or record.result.value}"
            by = f" by {record.decided_by_name}" if record.decided_by_name else ""
            await self._audit_refused(record, actor, action.verb, why + by)
            # Decided elsewhere (another process, the operator's shell): the card catches up.
            self._redraw_soon(record.agent, plan_id)
            raise StaleResult(f"Nothing changed: {why}{by}.")
        if record.result_version != version:
            why = "the card is out of date (the result changed since)"
            await self._audit_refused(record, actor, action.verb, why)
            raise StaleResult(f"Nothing changed: {why}; use the newest completion card.")
        if record.result_commit is None:
            # Opened before results were pinned: pin what the branch holds now as a new
            # version, so nobody decides on a card that showed something else.
            pinned = await self._tip(record)
            if pinned is not None:
                await self._executions.result_moved(plan_id, record.result_version, pinned)
                self._redraw_soon(record.agent, plan_id)
            why = "the result was not pinned to a commit; its card now shows the one it is"
            await self._audit_refused(record, actor, action.verb, why)
            raise StaleResult(f"Nothing changed: {why}; use the newest completion card.")
        settings = await self._settings.plan_mode_for(record.agent)
        verdict = result_verdict(actor, record, settings, action)
        if isinstance(verdict, Refusal):
            await self._audit_refused(record, actor, action.verb, verdict.rule)
            raise NotAuthorised(verdict.text)
        return record, settings

    async def _vote(self, record: ExecutionRecord, actor: Actor) -> Sequence[ApprovalVote]:
        vote = ApprovalVote(
            plan_id=record.plan_id,
            revision=record.result_version,
            sha256=record.result_commit or "",
            voter_id=actor.id,
            voter_name=actor.name,
            at=self._clock.now(),
        )
        entry = self._entry(record, actor, AuditAction.RESULT_MERGE_VOTE, "merge vote")
        written = await self._votes.record(vote, entry)
        if written is VoteWrite.CLOSED:
            raise StaleResult("Nothing changed: the result changed while you voted.")
        return await self._counted(record, actor)

    async def _counted(self, record: ExecutionRecord, fresh: Actor | None) -> list[ApprovalVote]:
        settings = await self._settings.plan_mode_for(record.agent)
        votes = await self._votes.for_version(
            record.plan_id, record.result_version, record.result_commit or ""
        )
        state = requester_state(record)
        return await entitled_votes(self._members, record.agent, votes, state, settings, fresh)

    @contextlib.asynccontextmanager
    async def _deciding(
        self, record: ExecutionRecord, actor: Actor, action: ResultAction, **detail: object
    ) -> AsyncIterator[ResultIntent]:
        """The intent of ``action`` open (``_claim``) while the block runs git and records
        it; one the block leaves open (its record failed, its task was killed) is an orphan
        for ``recovery``."""
        intent = await self._claim(record, actor, action, **detail)
        try:
            yield intent
        finally:
            self._intents.finished(intent)

    async def _claim(
        self, record: ExecutionRecord, actor: Actor, action: ResultAction, **detail: object
    ) -> ResultIntent:
        """Open the intent of ``action`` before git runs. Raises ``StaleResult`` (nothing
        done, audited) when another decision is under way or the result no longer waits at
        the card's version (after finishing or undoing one a gone process left, saying how)."""
        opened = await self._intents.open(record, actor, action, detail)
        if isinstance(opened, ResultIntent):
            return opened
        if opened.recovered is not None:
            await self._tell_recovered(opened.recovered)
        await self._audit_refused(record, actor, action.verb, opened.why)
        self._redraw_soon(record.agent, record.plan_id)
        raise StaleResult(opened.answer)

    async def _refused(
        self, intent: ResultIntent, record: ExecutionRecord, actor: Actor, verb: str, why: str
    ) -> None:
        """Git refused the action (nothing changed): the intent undone, audited."""
        entry = self._entry(record, actor, AuditAction.RESULT_REFUSED, verb, why)
        await self._intents.refused(intent, why, entry)

    async def _decided(
        self,
        intent: ResultIntent,
        record: ExecutionRecord,
        actor: Actor,
        state: ResultState,
        outcome: str,
        said: str,
    ) -> None:
        """Git did it: the decision recorded with its audit row, the intent completed."""
        entry = self._entry(record, actor, intent.action.audit, outcome)
        await self._intents.decided(intent, state, outcome, entry, said)
        self._remotes.forget(record.plan_id)
        self._redraw_soon(record.agent, record.plan_id)

    def _entry(
        self, record: ExecutionRecord, actor: Actor, action: AuditAction, what: str, why: str = ""
    ) -> AuditEntry:
        place = AuditPlace(record.agent, record.plan_id, record.revision)
        detail = {"what": what, "version": record.result_version}
        return decision_row(
            action,
            actor,
            place,
            self._clock.now(),
            detail,
            subject=Subject.RESULT,
            why=why or None,
        )

    async def _audit_refused(
        self, record: ExecutionRecord, actor: Actor, what: str, why: str
    ) -> None:
        """Audit a click refused before git ran (``what``: the action's verb; ``why``: what
        refused it); nothing changed."""
        entry = self._entry(record, actor, AuditAction.RESULT_REFUSED, what, why)
        await self._store.append_audit(entry)

    async def _tell(
        self, agent: str, plan_id: str, *, ready: bool = False, recovered: str | None = None
    ) -> None:
        """Tell every listener that the result is ready, changed, or (``recovered``, the
        text for its channel) that an interrupted decision on it was finished or undone."""
        for listener in list(self._listeners):
            try:
                if recovered is not None:
                    await listener.result_recovered(agent, plan_id, recovered)
                elif ready:
                    await listener.result_ready(agent, plan_id)
                else:
                    await listener.result_changed(agent, plan_id)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("a result listener failed for %s", plan_id)

    def _redraw_soon(self, agent: str, plan_id: str) -> None:
        """Tell the front ends once the action's lock is released (the card reads the
        result under the same lock)."""
        task = asyncio.create_task(self._tell(agent, plan_id, ready=False))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def settled(self) -> None:
        """Wait for the card redraws started so far (tests, shutdown)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def _tip(self, record: ExecutionRecord) -> str | None:
        """The commit the execution's branch points at (None when it cannot be read)."""
        try:
            return await self._homes.of(record.agent).reading.tip(branch_record(record))
        except (BranchError, PlancordError) as exc:
            log.warning("the branch of %s cannot be read: %s", record.plan_id, exc)
            return None

    def _lock(self, plan_id: str) -> asyncio.Lock:
        lock = self._locks.get(plan_id)
        if lock is None:
            lock = asyncio.Lock()
            self._locks[plan_id] = lock
        return lock

    def policy_of(self, agent: str) -> SandboxPolicy:
        """The sandbox policy of the host's git runs on the agent's result."""
        return self._homes.of(agent).host_git_policy


def before_task(change: PlanningChange) -> str:
    return change.before.task or (change.revision.plan.summary if change.revision else "")


def _head(path: Path, limit: int) -> bytes:
    with path.open("rb") as handle:
        return handle.read(limit)
