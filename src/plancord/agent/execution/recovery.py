"""Finishing or undoing a decision on a result whose process is gone, from what git shows.

Why this exists: a decision (``core.intents``) is written before git runs and completed
after; a crash, a kill or a database that could not be written between the two leaves the
intent open. After a restart (and when a click finds such an intent of its own process),
this decides each one from the repository, never from what the process meant to do:

- **Merge**: the base already at the pinned commit means git landed it; the workspace is
  put on the base at that commit if it was not yet, and the result is recorded merged.
  Anything else means the base never moved: the intent is undone and the result waits.
- **Discard**: the execution branch gone with the workspace on the base means git finished;
  otherwise Discard is done again (every step of it can be repeated). Either way the
  result is recorded discarded; when git refuses, the intent is undone with the reason.
- **Roll back**: the branch at the commit it went back to, or still where it was, means the
  roll back is done (again) and recorded; a branch anywhere else is not touched.
- **Push**: git keeps no trace of a push here, so the push is done again (pushing the same
  commit under the same name twice is harmless): to the remote the intent named, when it is
  still the agent's push remote, and the intent is done; when that remote is no longer the
  one a Push may write, or git refuses, the intent is undone and the channel told why and
  that the remote may or may not have the commit.

Before git runs, the lock files a killed git left in the repository are removed when
provably stale (``git_locks``), so the recovery's own git is not refused; the channel's
sentence and the audit row name them.

Every outcome is a sentence for the agent's channel: a member is never told that nothing
changed when git changed.
"""

from __future__ import annotations

from typing import assert_never

from plancord.agent.execution.branch import ExecutionBranch
from plancord.agent.execution.host_git import BranchError
from plancord.agent.execution.lease import GitGuard, ProcessLease
from plancord.agent.execution.remotes import push_remote
from plancord.agent.execution.starter import branch_record
from plancord.agent.home import AgentHomes
from plancord.core.execution import ExecutionRecord, ResultState, StepNumber
from plancord.core.intents import Recovered, ResultIntent, describe
from plancord.core.planning import AuditAction, AuditEntry
from plancord.core.ports import Clock
from plancord.core.results import ResultAction
from plancord.storage.executions import ExecutionStore
from plancord.storage.result_intents import ResultIntentStore
from plancord.storage.step_commits import StepCommitStore


class IntentRecovery:
    """Finishes or undoes open intents whose process is gone."""

    def __init__(
        self,
        *,
        intents: ResultIntentStore,
        executions: ExecutionStore,
        commits: StepCommitStore,
        homes: AgentHomes,
        clock: Clock,
        lease: ProcessLease,
    ) -> None:
        self._lease = lease
        self._intents = intents
        self._executions = executions
        self._commits = commits
        self._homes = homes
        self._clock = clock
        self._locks_removed: dict[str, tuple[str, ...]] = {}
        """Per intent being recovered: the stale git lock files removed before git ran."""

    async def recover(self, intent: ResultIntent, owner: str) -> Recovered | None:
        """Take ``intent`` over as ``owner`` and finish or undo it; None when another
        process took it first (or it was closed meanwhile). A git or database failure is
        raised, the intent left open for the next try. ``owner``'s lease is confirmed
        before each git command, and git is held in the workspace meanwhile."""
        if not await self._intents.take_over(intent, owner):
            return None
        intent = intent.model_copy(update={"owner": owner})
        async with self._lease.holding(intent.agent):
            return await self._recover(intent)

    async def _recover(self, intent: ResultIntent) -> Recovered | None:
        record = await self._executions.get(intent.plan_id)
        who = f"{describe(intent)} of the result of {intent.agent}'s plan"
        if record is None:
            await self._undo(intent, "the execution is gone")
            return None
        who += f" v{record.revision}"
        guard = GitGuard(self._lease, intent.owner, intent.agent)
        branch = self._homes.of(record.agent).branch.guarded(guard)
        swept = await branch.clear_stale_locks(wait=True)
        self._locks_removed[intent.id] = swept.removed
        try:
            if intent.action is ResultAction.MERGE:
                text = await self._merge(intent, record, branch, who)
            elif intent.action is ResultAction.DISCARD:
                text = await self._discard(intent, record, branch, who)
            elif intent.action is ResultAction.ROLL_BACK:
                text = await self._roll_back(intent, record, branch, who)
            elif intent.action is ResultAction.PUSH:
                text = await self._push(intent, record, branch, who)
            else:
                assert_never(intent.action)
        finally:
            self._locks_removed.pop(intent.id, None)
        return Recovered(record.agent, record.plan_id, text + swept.removed_text())

    async def _merge(
        self, intent: ResultIntent, record: ExecutionRecord, branch: ExecutionBranch, who: str
    ) -> str:
        pinned = intent.text("commit")
        base_now = await branch.branch_commit(record.base)
        if pinned and base_now == pinned:
            pinned_record = branch_record(record.model_copy(update={"result_commit": pinned}))
            await branch.finish_merge(pinned_record)
            outcome = f"merged into `{record.base}` as a fast-forward ({pinned[:8]})"
            await self._decided(intent, ResultState.MERGED, outcome + ", finished after a restart")
            return (
                f"{who} was interrupted after git merged it; plancord finished it: "
                f"`{record.base}` is at {pinned[:8]}, the merged result."
            )
        where = f"at {base_now[:8]}" if base_now else "gone"
        await self._undo(intent, f"interrupted before git merged it; `{record.base}` is {where}")
        return (
            f"{who} was interrupted before git changed anything: `{record.base}` is still "
            f"{where}. The result still waits; Merge again on its card."
        )

    async def _discard(
        self, intent: ResultIntent, record: ExecutionRecord, branch: ExecutionBranch, who: str
    ) -> str:
        on_base = await branch.head_ref() == f"refs/heads/{record.base}"
        gone = await branch.branch_commit(record.branch) is None
        try:
            if gone and on_base:
                await branch.forget_kept(branch_record(record))
            else:
                await branch.discard(branch_record(record))
        except BranchError as exc:
            await self._undo(intent, f"could not be finished after a restart: {exc}")
            return (
                f"{who} was interrupted and could not be finished: {exc} Git may have "
                "changed the working tree in part; the result still waits."
            )
        outcome = f"discarded: `{record.base}` and the workspace are back at the reviewed state"
        await self._decided(intent, ResultState.DISCARDED, outcome + ", finished after a restart")
        return (
            f"{who} was interrupted; plancord finished it: `{record.base}` and the workspace "
            "are back at the reviewed state."
        )

    async def _roll_back(
        self, intent: ResultIntent, record: ExecutionRecord, branch: ExecutionBranch, who: str
    ) -> str:
        step = StepNumber(int(intent.detail.get("step", 0)))
        before, was = intent.text("before"), intent.text("tip")
        tip = await branch.branch_commit(record.branch)
        on_branch = await branch.head_ref() == f"refs/heads/{record.branch}"
        if not on_branch or tip not in (before, was):
            where = f"at {tip[:8]}" if tip else "gone"
            await self._undo(intent, f"not carried out: the branch is {where}")
            return (
                f"{who} back to before step {step} was interrupted, and the branch is now "
                f"{where} (not where the roll back left it): plancord changed nothing more. "
                "The result still waits."
            )
        recorded = await self._commits.commits(record.plan_id)
        kept = await branch.roll_back(
            branch_record(record), [(c.step, c.commit) for c in recorded], step
        )
        pinned = recorded[kept - 1].commit if kept > 0 else record.reviewed_commit
        what = f"before step {step}, finished after a restart"
        entry = self._entry(intent, intent.action.audit, what)
        await self._intents.rolled_back(intent, kept, pinned, self._clock.now(), entry)
        return (
            f"{who} back to before step {step} was interrupted; plancord finished it: the "
            f"branch is at {pinned[:8]}. Use the newest completion card."
        )

    async def _push(
        self, intent: ResultIntent, record: ExecutionRecord, branch: ExecutionBranch, who: str
    ) -> str:
        remote, pinned = intent.text("remote"), intent.text("commit")
        what = f"{who} ({pinned[:8]} to `{remote}`)"
        now = await push_remote(self._homes.of(record.agent).host_git_policy)
        if now != remote:
            why = f"`{remote}` is no longer a remote a Push may write"
            await self._undo(intent, f"interrupted, and not pushed again: {why}")
            return (
                f"{what} was interrupted and not pushed again: {why}. Whether it received "
                "the commit is unknown."
            )
        try:
            await branch.push(
                branch_record(record.model_copy(update={"result_commit": pinned})), remote
            )
        except BranchError as exc:
            await self._undo(intent, f"interrupted, and pushing again failed: {exc}")
            return (
                f"{what} was interrupted, and pushing it again failed: {exc} Whether "
                f"`{remote}` received it is unknown; Push again on the card."
            )
        outcome = f"pushed {pinned[:8]} to {remote}, finished after a restart"
        entry = self._entry(intent, intent.action.audit, outcome)
        await self._intents.done(intent, self._clock.now(), outcome, entry)
        return f"{what} was interrupted; plancord pushed it again: `{remote}` has {pinned[:8]}."

    async def _decided(self, intent: ResultIntent, state: ResultState, outcome: str) -> None:
        now = self._clock.now()
        entry = self._entry(intent, intent.action.audit, outcome)
        await self._intents.decided(intent, state, now, outcome, entry)

    async def _undo(self, intent: ResultIntent, why: str) -> None:
        entry = self._entry(intent, AuditAction.RESULT_REFUSED, intent.action.verb, why)
        await self._intents.undone(intent, self._clock.now(), why, entry)

    def _entry(
        self, intent: ResultIntent, action: AuditAction, what: str, why: str = ""
    ) -> AuditEntry:
        detail: dict[str, object] = {"what": what, "version": intent.version, "recovered": True}
        if why:
            detail["why"] = why
        if self._locks_removed.get(intent.id):
            detail["locks_removed"] = list(self._locks_removed[intent.id])
        return AuditEntry(
            at=self._clock.now(),
            agent=intent.agent,
            actor=intent.actor,
            action=action,
            plan_id=intent.plan_id,
            revision=int(intent.detail.get("revision", 0)) or None,
            detail=detail,
        )
