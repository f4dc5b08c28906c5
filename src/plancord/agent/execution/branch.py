"""An approved plan's own branch: started from the reviewed tree, a commit per step, and
merged, discarded, rolled back or pushed only when a human says so.

Why this exists: the result of an execution is a change a human merges or discards, so the
base branch must not move while a plan executes. :meth:`ExecutionBranch.start` commits the
reviewed tree (``HEAD`` plus the uncommitted and untracked changes the approval was bound to)
as a first "reviewed state" commit on ``plancord/<plan_id>-v<rev>`` and switches the
workspace to that branch without touching a file; each step that changed something becomes
one commit on it, made by the host on the previous step's commit (whatever commits the agent
made meanwhile), with the agent's own message when it gave one. The caller records each
step's commit id: nothing here reads a commit's subject, which the agent can write.

The result is pinned (``BranchRecord.result_commit``): Merge and Push take exactly the commit
the completion card showed, never the branch's tip, and Merge and Discard first check that
the base branch is where the record says, refusing with the reason when it moved.

Ignored files and empty directories are in no commit: when the branch is given a place to
keep them (``kept``, in the data directory), ``start`` keeps them (``ignored.IgnoredKeep``)
and ``discard`` puts them back, so Discard gives back the reviewed working tree exactly;
Merge and Discard drop what was kept.

Every git run goes through the agent's sandbox (``host_git``), with hooks off, signing off
and a fixed identity, so what the host commits is the host's. Whether a workspace can take a
branch is ``workspace_refusal``'s to say, and Discard is ``discarding``'s (checked byte for
byte by ``workspace_bytes``). The object keeps no state of
its own: :class:`BranchRecord` (returned by ``start``) holds everything the other
operations need, and the caller stores it with the plan, so they work after a restart.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from plancord.agent.execution.discarding import Discarded, Discarding
from plancord.agent.execution.git_locks import STALE_SECONDS, LockSweep
from plancord.agent.execution.host_git import (
    HOST_CONFIG,
    IDENTITY_ENV,
    BranchError,
    checked_git,
    clear_stale_locks,
    host_git,
    tracked,
)
from plancord.agent.execution.ignored import IgnoredKeep, KeepLimits, KeepTooLarge
from plancord.agent.execution.lease import GitGuard
from plancord.agent.execution.workspace_bytes import open_folders
from plancord.agent.execution.workspace_refusal import branch_refusal
from plancord.agent.host_io import remote_push
from plancord.agent.host_io.git_run import GitOutput
from plancord.core.execution import StepNumber
from plancord.sandbox import SandboxPolicy

log = logging.getLogger(__name__)

REVIEWED_SUBJECT = "plancord: reviewed state"


@dataclass(frozen=True, slots=True)
class BranchRecord:
    """Where an execution branch came from; stored with the plan."""

    branch: str
    base: str
    """The base branch's name (``main``)."""
    base_commit: str
    """The commit the base branch pointed at when execution started."""
    reviewed_commit: str
    """The branch's first commit: the reviewed tree (``base_commit`` when nothing was
    uncommitted)."""
    reviewed_index: str
    """The tree of the index as it was reviewed, so Discard gives back what was staged."""
    result_commit: str | None = None
    """The commit the result is pinned to (None while the plan runs)."""


class BaseMoved(BranchError):
    """The base branch is not where the execution's record says; nothing was changed."""


class BranchMoved(BranchError):
    """The execution branch holds more than the reviewed state (someone worked on it), so
    its start is not undone; nothing was changed."""


def branch_name(plan_id: str, revision: int) -> str:
    return f"plancord/{plan_id}-v{revision}"


class ExecutionBranch:
    """The execution branches of one workspace, through git in the agent's sandbox."""

    def __init__(
        self,
        policy: SandboxPolicy,
        kept: Path | None = None,
        limits: KeepLimits | None = None,
        guard: GitGuard | None = None,
    ) -> None:
        """``kept``: the directory (outside the workspace, in the data directory) under
        which each execution keeps the ignored paths of its reviewed tree; without it
        Discard gives back only what git keeps. ``guard``: a decision's lease, confirmed
        before each git command (see ``guarded``). What a branch holds is read by
        :class:`~plancord.agent.execution.branch_reading.BranchReading`."""
        self._policy = policy
        self._kept = kept
        self._limits = limits
        self._guard = guard

    def guarded(self, guard: GitGuard) -> ExecutionBranch:
        """This branch for one decision: each git command first confirms the decision's
        lease (``LeaseLost`` when this process lost it), and a sweep of git's lock files
        leaves them while another live process holds git in the workspace."""
        return ExecutionBranch(self._policy, self._kept, self._limits, guard)

    async def refusal(self) -> str | None:
        """Why this workspace cannot take an execution branch, or None when it can."""
        return await branch_refusal(self._policy)

    async def start(self, plan_id: str, revision: int) -> BranchRecord:
        """Commit the reviewed tree on a new branch and switch to it; no file changes, and
        the base branch does not move. Raises BranchError (nothing changed) with the reason."""
        record = await self.prepare(plan_id, revision)
        try:
            await self.switch(record)
        except BranchError:
            await self.undo_start(record)
            raise
        return record

    async def prepare(self, plan_id: str, revision: int) -> BranchRecord:
        """What ``start`` is to do, read from the workspace: the base, its commit, the
        reviewed index and the reviewed state committed (an object no ref names yet). No
        ref, index or file a person sees changes. Raises BranchError with the reason."""
        why = await self.refusal()
        if why is not None:
            raise BranchError(f"This workspace cannot run a plan on a branch: {why}.")
        base_ref = (await self._checked("symbolic-ref", "HEAD")).strip()
        base_commit = (await self._checked("rev-parse", "HEAD^{commit}")).strip()
        reviewed_index = (await self._checked("write-tree")).strip()
        index = {"GIT_INDEX_FILE": await self._git_path("plancord-reviewed.index")}
        await self._checked("read-tree", "HEAD", env=index)
        await self._checked("add", "--all", env=index)
        tree = (await self._checked("write-tree", env=index)).strip()
        reviewed = base_commit
        if tree != (await self._checked("rev-parse", "HEAD^{tree}")).strip():
            message = f"{REVIEWED_SUBJECT} of plan {plan_id} v{revision}"
            reviewed = (
                await self._checked(
                    "commit-tree", tree, "-p", base_commit, "-m", message, env=IDENTITY_ENV
                )
            ).strip()
        return BranchRecord(
            branch=branch_name(plan_id, revision),
            base=base_ref.removeprefix("refs/heads/"),
            base_commit=base_commit,
            reviewed_commit=reviewed,
            reviewed_index=reviewed_index,
        )

    async def switch(self, record: BranchRecord) -> None:
        """Carry out what ``prepare`` read: the ignored files kept, the branch made at the
        reviewed state and the workspace switched to it, its index on the reviewed tree.
        Raises BranchError, possibly part-way (``undo_start`` takes it all back)."""
        keep = self._keep_of(record.branch)
        if keep is not None:
            await self._keep_ignored(keep, record.reviewed_commit)
        zero = "0" * len(record.base_commit)
        await self._checked(
            "update-ref", f"refs/heads/{record.branch}", record.reviewed_commit, zero
        )
        await self._checked("symbolic-ref", "HEAD", f"refs/heads/{record.branch}")
        await self._checked("reset", "--quiet", "--mixed")

    async def undo_start(self, record: BranchRecord) -> bool:
        """Take back whatever of ``switch`` git did, from what git shows: the workspace
        back on the base with the index as it was staged, the branch deleted, the kept
        ignored files dropped. No file of the working tree is touched (``switch`` touched
        none). True when git had changed something. Raises BranchError, changing nothing,
        when the branch holds more than the reviewed state (someone worked on it)."""
        branch_ref, base_ref = f"refs/heads/{record.branch}", f"refs/heads/{record.base}"
        tip = await self.branch_commit(record.branch)
        if tip is not None and tip != record.reviewed_commit:
            raise BranchMoved(
                f"`{record.branch}` is at {tip[:12]}, not at the reviewed state "
                f"{record.reviewed_commit[:12]}: plancord leaves it as it is."
            )
        changed = False
        if await self.head_ref() == branch_ref:
            if await self.branch_commit(record.base) is None:
                await self._checked("update-ref", base_ref, record.base_commit)
            await self._checked("symbolic-ref", "HEAD", base_ref)
            await self._checked("read-tree", record.reviewed_index)
            changed = True
        if tip is not None:
            await self._checked("update-ref", "-d", branch_ref, tip)
            changed = True
        await self._forget_kept(record)
        return changed

    async def commit_step(
        self, record: BranchRecord, message: str, parent: str, leave_out: Sequence[str] = ()
    ) -> str | None:
        """Commit everything in the working tree as one commit on ``parent`` (the previous
        step's commit, or the reviewed state) with ``message``, and point the branch at it;
        the commit's id, or None when the step changed nothing (the branch then points at
        ``parent``: no empty commit). Commits the agent made during the step are folded in.
        ``leave_out`` are paths whose change belongs to the next step (the call that moved
        the plan on made it): they stay in the working tree, uncommitted. Raises BranchError
        when the workspace is not on the execution branch."""
        await self._on_branch(record)
        tip = (await self._checked("rev-parse", "--verify", "HEAD^{commit}")).strip()
        await self._checked("add", "--all")
        if leave_out:
            await self._checked("--literal-pathspecs", "reset", "--quiet", parent, "--", *leave_out)
        tree = (await self._checked("write-tree")).strip()
        if tree == (await self._checked("rev-parse", f"{parent}^{{tree}}")).strip():
            if tip != parent:
                await self._checked("update-ref", f"refs/heads/{record.branch}", parent, tip)
            return None
        text = message.strip()[:10_000] or "work"
        commit = (
            await self._checked("commit-tree", tree, "-p", parent, "-m", text, env=IDENTITY_ENV)
        ).strip()
        await self._checked("update-ref", f"refs/heads/{record.branch}", commit, tip)
        return commit

    async def reattach(self, record: BranchRecord) -> bool:
        """Put ``HEAD`` back on the execution branch after a call a human allowed moved it
        (an asked ``git_checkout``), keeping the working tree: what that call checked out
        becomes the current step's change, committed with it. True when ``HEAD`` had left."""
        head = await self._git("symbolic-ref", "--quiet", "HEAD")
        if head.stdout.strip() == f"refs/heads/{record.branch}":
            return False
        await self._checked("symbolic-ref", "HEAD", f"refs/heads/{record.branch}")
        await self._checked(*HOST_CONFIG, "reset", "--quiet", "--mixed")
        return True

    async def merge(self, record: BranchRecord) -> str:
        """Put the pinned commit onto the base (a fast-forward: the base must be where the
        record says); the workspace then stands on the base at that commit. Commits the
        branch gained after the result was pinned stay on the branch, not on the base. The
        merged commit; raises BranchError (``BaseMoved``) with nothing changed."""
        pinned = _pinned(record)
        await self._on_branch(record)
        if (await self._checked("status", "--porcelain", "--untracked-files=all")).strip():
            raise BranchError(
                "The branch has uncommitted changes; they are not part of the result."
            )
        await self._base_in_place(record)
        if not (await self._git("merge-base", "--is-ancestor", record.base_commit, pinned)).ok:
            raise BranchError(f"The pinned result {pinned[:12]} does not build on the base.")
        tip = (await self._checked("rev-parse", "HEAD")).strip()
        base_ref = f"refs/heads/{record.base}"
        await self._checked("update-ref", base_ref, pinned, record.base_commit)
        if tip != pinned:
            moved = await self._git("read-tree", "-m", "-u", tip, pinned)
            if not moved.ok:
                await self._git("update-ref", base_ref, record.base_commit, pinned)
                raise BranchError(f"git read-tree failed: {moved.message or moved.code}")
        await self._checked("symbolic-ref", "HEAD", base_ref)
        await self._forget_kept(record)
        return pinned

    async def discard(self, record: BranchRecord) -> Discarded:
        """Back at the reviewed state: the base branch checked out, the working tree as
        reviewed (uncommitted, untracked and, when they were kept, ignored files and empty
        directories included), byte for byte, the index as it was staged; the execution
        branch and what was kept are deleted. When the base moved since the execution
        started (a person committed to it), the base stays where it is now and the
        reviewed uncommitted changes are put back on it as uncommitted changes (kept on a
        branch of their own when they conflict with the base's new commits); whatever is
        not as reviewed is named in the answer (``Discarded``). Raises BranchError, saying
        what was done so far, only when git itself fails (``discarding``)."""
        keep = self._keep_of(record.branch)
        discarding = Discarding(self._policy, record.branch, record.base, keep, self._guard)
        return await discarding.run(
            record.base_commit, record.reviewed_commit, record.reviewed_index
        )

    async def roll_back(
        self, record: BranchRecord, recorded: Sequence[tuple[StepNumber, str]], step: StepNumber
    ) -> int:
        """The branch and working tree as they were before step ``step`` was
        committed, by the step commits the host recorded (``(step, commit)``, oldest
        first); how many of them remain. Raises BranchError when no such step was
        committed."""
        await self._on_branch(record)
        index = next((i for i, (number, _) in enumerate(recorded) if number == step), None)
        if index is None:
            raise BranchError(f"Step {step} has no commit on {record.branch}.")
        before = recorded[index - 1][1] if index > 0 else record.reviewed_commit
        await asyncio.to_thread(open_folders, self._policy.workspace)
        await self._checked(*HOST_CONFIG, "reset", "--quiet", "--hard", before)
        await self._checked("clean", "--quiet", "--force", "-d")
        return index

    async def push(self, record: BranchRecord, remote: str) -> None:
        """Push the pinned commit to ``remote`` under the branch's name, writing only the
        remote (``remote_push``). Raises BranchError."""
        if remote.startswith(("-", "+")) or not remote:
            raise BranchError(f"{remote!r} is not a remote name.")
        if self._guard is not None:
            await self._guard.check()
        pushed = await remote_push.push(self._policy, remote, _pinned(record), record.branch)
        if isinstance(pushed, remote_push.PushRefused):
            raise BranchError(f"{pushed.reason[:1].upper()}{pushed.reason[1:]}.")
        if not pushed.ok:
            raise BranchError(f"git push failed: {pushed.message or pushed.code}")

    # -- what git shows, for finishing a decision after a restart (``recovery``) ----------

    async def branch_commit(self, name: str) -> str | None:
        """The commit ``refs/heads/<name>`` points at; None when there is no such branch."""
        found = await self._git("rev-parse", "--verify", "--quiet", f"refs/heads/{name}^{{commit}}")
        return found.stdout.strip() or None

    async def head_ref(self) -> str | None:
        """The branch ``HEAD`` names (``refs/heads/…``); None when it is detached."""
        found = await self._git("symbolic-ref", "--quiet", "HEAD")
        return found.stdout.strip() or None

    async def finish_merge(self, record: BranchRecord) -> None:
        """Merge's work after the base moved to the pinned commit, done again: the workspace
        on the base at that commit (Merge started from a clean tree, so nothing of a
        person's is lost) and what was kept dropped. Raises BranchError."""
        pinned = _pinned(record)
        base_ref = f"refs/heads/{record.base}"
        if await self.head_ref() != base_ref:
            await self._checked("symbolic-ref", "HEAD", base_ref)
            await self._checked(*HOST_CONFIG, "reset", "--quiet", "--hard", pinned)
        await self._forget_kept(record)

    async def forget_kept(self, record: BranchRecord) -> None:
        """Drop what ``start`` kept of the ignored files (Discard's last step)."""
        await self._forget_kept(record)

    async def clear_stale_locks(self, *, wait: bool = False) -> LockSweep:
        """Remove the lock files a killed git left in the workspace's git directory, when
        provably stale (``git_locks``); what was removed and what was left. ``wait``: when
        the only locks left are too recent (a restart right after the kill), wait until
        they are old enough (at most ``STALE_SECONDS``) and sweep again."""
        sweep = await clear_stale_locks(self._policy, self._guard)
        if not wait or sweep.stale_in is None:
            return sweep
        log.warning(
            "waiting %.0f s for recent git lock files in %s to be stale: %s",
            sweep.stale_in,
            self._policy.workspace,
            ", ".join(path for path, _ in sweep.left),
        )
        await asyncio.sleep(min(sweep.stale_in, STALE_SECONDS) + 0.5)
        again = await clear_stale_locks(self._policy, self._guard)
        return replace(again, removed=sweep.removed + again.removed)

    # -- helpers ------------------------------------------------------------------------

    def _keep_of(self, branch: str) -> IgnoredKeep | None:
        if self._kept is None:
            return None
        name = re.sub(r"[^A-Za-z0-9._-]", "_", branch.removeprefix("plancord/"))
        return IgnoredKeep(self._kept / name, self._limits)

    async def _keep_ignored(self, keep: IgnoredKeep, reviewed: str) -> None:
        tracked = await self._tracked(reviewed)
        try:
            await asyncio.to_thread(keep.keep, self._policy.workspace, tracked)
        except KeepTooLarge as exc:
            raise BranchError(f"This workspace cannot run a plan on a branch: {exc}.") from exc
        except OSError as exc:
            raise BranchError(f"The workspace's ignored files could not be kept: {exc}") from exc

    async def _forget_kept(self, record: BranchRecord) -> None:
        keep = self._keep_of(record.branch)
        if keep is not None:
            await asyncio.to_thread(keep.forget)

    async def _tracked(self, commit: str) -> frozenset[str]:
        return await tracked(self._policy, commit)

    async def _base_in_place(self, record: BranchRecord) -> None:
        """Raise ``BaseMoved`` unless the base branch is at the commit the record says."""
        found = await self._git("rev-parse", "--verify", "--quiet", f"refs/heads/{record.base}")
        now = found.stdout.strip()
        if now == record.base_commit:
            return
        where = f"is now at {now[:12]}" if now else "no longer exists"
        raise BaseMoved(
            f"`{record.base}` moved outside plancord: it {where}, not at "
            f"{record.base_commit[:12]} where the execution started. Nothing was changed; "
            f"put `{record.base}` back (or decide by hand) and try again."
        )

    async def _on_branch(self, record: BranchRecord) -> None:
        head = await self._git("symbolic-ref", "--quiet", "HEAD")
        if head.stdout.strip() != f"refs/heads/{record.branch}":
            raise BranchError(
                f"The workspace is not on {record.branch} (HEAD is "
                f"{head.stdout.strip() or 'detached'})."
            )

    async def _git_path(self, name: str) -> str:
        return str(self._policy.workspace / ".git" / name)

    async def _git(
        self, *args: str, env: dict[str, str] | None = None, max_output: int = 1_000_000
    ) -> GitOutput:
        if self._guard is not None:
            await self._guard.check()
        return await host_git(self._policy, *args, env=env, max_output=max_output)

    async def _checked(
        self, *args: str, env: dict[str, str] | None = None, max_output: int = 1_000_000
    ) -> str:
        if self._guard is not None:
            await self._guard.check()
        return await checked_git(
            self._policy, *args, env=env, max_output=max_output, guard=self._guard
        )


def _pinned(record: BranchRecord) -> str:
    if record.result_commit is None:
        raise BranchError("The result is not pinned to a commit.")
    return record.result_commit
