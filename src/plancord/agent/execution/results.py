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

import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

from plancord.agent.execution.decision_intents import DecisionIntents
from plancord.agent.execution.host_git import BranchError
from plancord.agent.execution.lease import ProcessLease
from plancord.agent.execution.merge_votes import MergeVotes
from plancord.agent.execution.remotes import PushRemotes
from plancord.agent.execution.result_news import ResultNews
from plancord.agent.execution.result_opening import ResultOpening
from plancord.agent.execution.result_reading import ResultReading
from plancord.agent.execution.starter import branch_record
from plancord.agent.home import AgentHomes
from plancord.agent.owed import OwedDuties
from plancord.agent.plan_review.runs import PlanReviewRuns
from plancord.core.authority import Refusal
from plancord.core.errors import NotAuthorised
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
    result_row,
    result_verdict,
)
from plancord.core.sandbox_policy import SandboxPolicy
from plancord.core.settings import PlanModeSettings
from plancord.storage.executions import ExecutionStore
from plancord.storage.result_votes import ResultVoteStore
from plancord.storage.step_commits import StepCommitStore
from plancord.storage.store import SqlStore

log = logging.getLogger(__name__)


class ExecutionResults:
    """Waiting results of every agent, and the one way a human decides them. What the card
    reads is ``ResultReading``'s, opening a result ``ResultOpening``'s, telling the front
    ends ``ResultNews``'s; this object decides, and recovers decisions a crash cut short."""

    def __init__(
        self,
        *,
        executions: ExecutionStore,
        store: SqlStore,
        plan_settings: SettingsProvider,
        members: MemberDirectory | None,
        clock: Clock,
        homes: AgentHomes,
        lease: ProcessLease,
        reviews: PlanReviewRuns | None = None,
        owed: OwedDuties | None = None,
    ) -> None:
        self._executions = executions
        self._store = store
        self._settings = plan_settings
        self._clock = clock
        self._homes = homes
        self._commits = StepCommitStore(executions.db)
        self._votes = MergeVotes(ResultVoteStore(store.db), plan_settings, members, clock)
        self._remotes = PushRemotes(self.policy_of)
        self._news = ResultNews()
        self._reading = ResultReading(
            executions=executions,
            store=store,
            plan_settings=plan_settings,
            homes=self._homes,
            commits=self._commits,
            votes=self._votes,
            remotes=self._remotes,
        )
        self._opening = ResultOpening(
            executions=executions,
            plan_settings=plan_settings,
            reading=self._reading,
            news=self._news,
            reviews=reviews,
            owed=owed,
        )
        self._intents = DecisionIntents(
            db=store.db,
            executions=executions,
            commits=self._commits,
            homes=self._homes,
            clock=clock,
            lease=lease,
        )

    def add_listener(self, listener: ResultListener) -> None:
        self._news.add_listener(listener)

    # -- reading (``ResultReading``) -------------------------------------------------------

    async def waiting(self, agent: str) -> ExecutionRecord | None:
        return await self._reading.waiting(agent)

    async def with_result(self, plan_id: str) -> ExecutionRecord | None:
        return await self._reading.with_result(plan_id)

    async def latest(self, agent: str) -> ExecutionRecord | None:
        return await self._reading.latest(agent)

    async def summary(self, plan_id: str) -> ResultSummary | None:
        return await self._reading.summary(plan_id)

    async def write_diff(self, plan_id: str, use: Callable[[Path], Awaitable[None]]) -> bool:
        return await self._reading.write_diff(plan_id, use)

    async def push_remote(self, record: ExecutionRecord) -> str | None:
        return await self._reading.push_remote(record)

    async def before_plan(self, plan_id: str) -> tuple[str, ...]:
        return await self._reading.before_plan(plan_id)

    # -- an execution ended (``ResultOpening``) --------------------------------------------

    async def planning_changed(self, change: PlanningChange) -> None:
        await self._opening.planning_changed(change)

    async def open_ended(
        self, plan_id: str, requested_by: str | None, requested_by_name: str | None
    ) -> ExecutionRecord | None:
        return await self._opening.open_ended(plan_id, requested_by, requested_by_name)

    async def settled(self) -> None:
        """Wait for the card redraws and reviews started so far (tests, shutdown)."""
        await self._news.settled()

    async def close(self) -> None:
        await self._news.close()

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

    async def left_open(self) -> bool:
        """Whether some decision is still open (this process's, or another's whose lease
        was live when ``recover`` looked)."""
        return bool(await self._intents.store.open_intents())

    async def _recover(self, intent: ResultIntent) -> Recovered | None:
        async with self._reading.lock(intent.plan_id):
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
        await self._news.recovered(recovered.agent, recovered.plan_id, recovered.text)
        self._news.changed_soon(recovered.agent, recovered.plan_id)

    # -- the decisions ---------------------------------------------------------------------

    async def merge(self, plan_id: str, version: int, actor: Actor) -> str:
        """Put the pinned commit onto the base (a fast-forward; a base moved since the
        execution started is refused, changing nothing), or record ``actor``'s vote (bound
        to the version and the pinned commit) when more approvers must agree. The answer
        for ``actor``."""
        async with self._reading.lock(plan_id):
            record, settings = await self._decidable(plan_id, version, actor, ResultAction.MERGE)
            if actor.kind is ActorKind.USER and settings.approvals > 1:
                counted = await self._votes.cast(record, actor)
                if len(counted) < settings.approvals:
                    self._news.changed_soon(record.agent, plan_id)
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
                    merged = await self._intents.branch(intent).merge(branch_record(record))
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
        async with self._reading.lock(plan_id):
            record, _ = await self._decidable(plan_id, version, actor, ResultAction.DISCARD)
            async with self._deciding(record, actor, ResultAction.DISCARD) as intent:
                try:
                    done = await self._intents.branch(intent).discard(branch_record(record))
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
        async with self._reading.lock(plan_id):
            record, _ = await self._decidable(plan_id, version, actor, ResultAction.ROLL_BACK)
            recorded = await self._commits.commits(plan_id)
            index = next((i for i, c in enumerate(recorded) if c.step == step), None)
            before = recorded[index - 1].commit if index else record.reviewed_commit
            async with self._deciding(
                record,
                actor,
                ResultAction.ROLL_BACK,
                step=step,
                before=before,
                tip=await self._reading.tip(record) or "",
            ) as intent:
                try:
                    kept = await self._intents.branch(intent).roll_back(
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
                self._news.changed_soon(record.agent, plan_id)
                return said

    async def push(self, plan_id: str, version: int, actor: Actor) -> str:
        """Push the branch, under its own name, to the agent's push remote."""
        async with self._reading.lock(plan_id):
            record, _ = await self._decidable(plan_id, version, actor, ResultAction.PUSH)
            remote = await self._reading.push_remote(record)
            if remote is None:
                why = self._remotes.refused(plan_id) or "the agent has no push remote it can reach"
                await self._audit_refused(record, actor, ResultAction.PUSH.verb, why)
                self._news.changed_soon(record.agent, plan_id)
                raise ResultFailed(f"Not pushed: {why}.")
            pinned = record.result_commit or ""
            async with self._deciding(
                record, actor, ResultAction.PUSH, remote=remote, commit=pinned
            ) as intent:
                try:
                    await self._intents.branch(intent).push(branch_record(record), remote)
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
            self._news.changed_soon(record.agent, plan_id)
            raise StaleResult(f"Nothing changed: {why}{by}.")
        if record.result_version != version:
            why = "the card is out of date (the result changed since)"
            await self._audit_refused(record, actor, action.verb, why)
            raise StaleResult(f"Nothing changed: {why}; use the newest completion card.")
        if record.result_commit is None:
            # Opened before results were pinned: pin what the branch holds now as a new
            # version, so nobody decides on a card that showed something else.
            pinned = await self._reading.pin_of(record)
            await self._executions.result_moved(plan_id, record.result_version, pinned)
            self._news.changed_soon(record.agent, plan_id)
            why = "the result was not pinned to a commit; its card now shows the one it is"
            await self._audit_refused(record, actor, action.verb, why)
            raise StaleResult(f"Nothing changed: {why}; use the newest completion card.")
        settings = await self._settings.plan_mode_for(record.agent)
        verdict = await result_verdict(self._store, actor, record, settings, action)
        if isinstance(verdict, Refusal):
            await self._audit_refused(record, actor, action.verb, verdict.rule)
            raise NotAuthorised(verdict.text)
        return record, settings

    @contextlib.asynccontextmanager
    async def _deciding(
        self, record: ExecutionRecord, actor: Actor, action: ResultAction, **detail: object
    ) -> AsyncIterator[ResultIntent]:
        """The intent of ``action`` open (``_claim``) while the block runs git and records
        it; one the block leaves open (its record failed, its task was killed) is an orphan
        for ``recovery``."""
        intent = await self._claim(record, actor, action, **detail)
        try:
            async with self._intents.holding(record.agent):
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
        self._news.changed_soon(record.agent, record.plan_id)
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
        self._news.changed_soon(record.agent, record.plan_id)

    def _entry(
        self, record: ExecutionRecord, actor: Actor, action: AuditAction, what: str, why: str = ""
    ) -> AuditEntry:
        return result_row(record, actor, action, self._clock.now(), what, why)

    async def _audit_refused(
        self, record: ExecutionRecord, actor: Actor, what: str, why: str
    ) -> None:
        """Audit a click refused before git ran (``what``: the action's verb; ``why``: what
        refused it); nothing changed."""
        entry = self._entry(record, actor, AuditAction.RESULT_REFUSED, what, why)
        await self._store.append_audit(entry)

    def policy_of(self, agent: str) -> SandboxPolicy:
        """The sandbox policy of the host's git runs on the agent's result."""
        return self._homes.of(agent).host_git_policy
