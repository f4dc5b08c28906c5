"""What the completion card reads of a result: the waiting one, its summary, its diff, the
remote Push would send it to, the tip of its branch.

Why this exists: reading a result and deciding it share one rule: the card and the diff
never read in the middle of git. A decision holds the result's lock (``lock``) while git
runs; the readers here take the same lock. A lock lives only while someone holds or waits
for it.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from collections.abc import Awaitable, Callable
from pathlib import Path

from plancord.agent.execution.host_git import BranchError
from plancord.agent.execution.merge_votes import MergeVotes
from plancord.agent.execution.remotes import PushRemotes
from plancord.agent.execution.result_summary import summarise
from plancord.agent.execution.starter import branch_record
from plancord.agent.home import AgentHomes
from plancord.core.errors import PlancordError
from plancord.core.execution import ExecutionRecord
from plancord.core.ports import SettingsProvider
from plancord.core.results import ResultSummary
from plancord.storage.executions import ExecutionStore
from plancord.storage.plan_reviews import PlanReviewStore, ReviewKind
from plancord.storage.step_commits import StepCommitStore
from plancord.storage.store import SqlStore

log = logging.getLogger(__name__)


class ResultReading:
    """The reads of results, each under the result's lock where git could be running."""

    def __init__(
        self,
        *,
        executions: ExecutionStore,
        store: SqlStore,
        plan_settings: SettingsProvider,
        homes: AgentHomes,
        commits: StepCommitStore,
        votes: MergeVotes,
        remotes: PushRemotes,
    ) -> None:
        self._executions = executions
        self._store = store
        self._settings = plan_settings
        self._homes = homes
        self._commits = commits
        self._votes = votes
        self._remotes = remotes
        self._kept_reviews = PlanReviewStore(store.db)
        self._locks: weakref.WeakValueDictionary[str, asyncio.Lock] = weakref.WeakValueDictionary()

    def lock(self, plan_id: str) -> asyncio.Lock:
        """The lock a decision on ``plan_id``'s result holds while git runs."""
        lock = self._locks.get(plan_id)
        if lock is None:
            lock = asyncio.Lock()
            self._locks[plan_id] = lock
        return lock

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
            counted = await self._votes.counted(record, None)
            votes = tuple(vote.voter_name for vote in counted)
        kept = await self._kept_reviews.get(plan_id, record.revision, ReviewKind.RESULT)
        review = kept.review if kept is not None else None
        async with self.lock(plan_id):
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
        async with self.lock(plan_id):
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

    async def before_plan(self, plan_id: str) -> tuple[str, ...]:
        """The paths of the work already in the workspace before ``plan_id``'s execution
        (on its branch from the first commit); none when git cannot say."""
        record = await self._executions.get(plan_id)
        if record is None or record.reviewed_commit == record.base_commit:
            return ()
        try:
            found = await self._homes.of(record.agent).reading.before_plan(branch_record(record))
        except (BranchError, PlancordError) as exc:
            log.warning("the reviewed state of %s cannot be read: %s", plan_id, exc)
            return ()
        return tuple(change.path for change in found)

    async def pin_of(self, record: ExecutionRecord) -> str:
        """The commit a result is pinned to: its branch's tip, or, when git cannot read it
        (a workspace git refuses to run in), the host's own record of the last step commit
        (the reviewed state when no step committed), so a result always has one to decide
        on and a decision says what git refused, not that nothing is pinned."""
        tip = await self.tip(record)
        if tip is not None:
            return tip
        recorded = await self._commits.commits(record.plan_id)
        return recorded[-1].commit if recorded else record.reviewed_commit

    async def tip(self, record: ExecutionRecord) -> str | None:
        """The commit the execution's branch points at (None when it cannot be read)."""
        try:
            return await self._homes.of(record.agent).reading.tip(branch_record(record))
        except (BranchError, PlancordError) as exc:
            log.warning("the branch of %s cannot be read: %s", record.plan_id, exc)
            return None
