"""Discard: the base branch and the working tree back at the reviewed state, checked.

Why this exists: Discard is the human's way back, so it must work whatever the agent left
and say exactly what it did. The order is chosen so that nothing the agent wrote can steer
it: the folders the agent made unreadable are opened first (``workspace_bytes``), ``HEAD``
goes onto the base before any file is written (a refusal then never leaves it detached), the
paths outside the reviewed tree that were not there at review are removed before git writes
(so a ``.gitattributes`` of the agent's cannot convert what git checks out), git puts back
the tree and the index, the kept ignored files come back (``ignored``), and then every
file is checked byte for byte against the commit (``workspace_bytes``), written back where
it differs and named where it still does. When git refuses part-way, the error says what
was done so far, and Discard can be clicked again.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from plancord.agent.execution.host_git import (
    HOST_CONFIG,
    BranchError,
    checked_git,
    host_git,
    tracked,
)
from plancord.agent.execution.ignored import WHOLE_KEEP, IgnoredKeep
from plancord.agent.execution.lease import GitGuard
from plancord.agent.execution.workspace_bytes import open_folders, restore_bytes
from plancord.agent.host_io.git_run import GitOutput
from plancord.agent.host_io.walk import WorkspaceTree
from plancord.sandbox import SandboxPolicy


@dataclass(frozen=True, slots=True)
class Discarded:
    """What Discard put back, when it is not exactly the reviewed state."""

    moved_to: str | None = None
    """The commit the base branch had moved to since the execution started (a person's
    commit); the working tree now stands on it. None when the base had not moved."""
    kept_branch: str | None = None
    """When the base moved and the reviewed uncommitted changes conflict with it: the
    branch they are kept on."""
    not_restored: tuple[str, ...] = ()
    """Ignored paths kept at the start that could not be put back (the host's kept copy is
    damaged or missing); ``("*",)`` when the whole keep is gone."""
    differs: tuple[str, ...] = ()
    """Files of the reviewed tree whose bytes still differ from it after Discard (the host
    could not write them)."""
    opened: tuple[str, ...] = ()
    """Folders of the reviewed state the host could not enter or write, opened (their
    owner's bits added) so git could put the tree back."""

    def notes(self, base: str) -> str:
        """What differs from "back at the reviewed state", for people ("" when nothing)."""
        parts = []
        if self.moved_to is not None:
            parts.append(
                f"`{base}` had moved since the execution started (it is at "
                f"{self.moved_to[:12]}); it stays there, and the workspace is on it"
                + (
                    f", with the reviewed uncommitted changes kept on `{self.kept_branch}` "
                    "(they conflict with the new commits)"
                    if self.kept_branch
                    else ", with the reviewed uncommitted changes put back on top"
                )
            )
        if self.not_restored == (WHOLE_KEEP,):
            parts.append(
                "the kept copy of the ignored files is missing, so no ignored file was put back"
            )
        elif self.not_restored:
            parts.append(
                "these ignored files could not be put back (their kept copy is damaged): "
                + _listed(self.not_restored)
            )
        if self.differs:
            parts.append(
                "these files still differ from the reviewed state, byte for byte (they could "
                "not be written): " + _listed(self.differs)
            )
        if self.opened:
            parts.append(
                "these folders could not be entered and were opened to their owner first: "
                + _listed(self.opened)
            )
        return "; ".join(parts)


def _listed(paths: tuple[str, ...]) -> str:
    shown = ", ".join(f"`{p}`" for p in paths[:10])
    more = len(paths) - 10
    return shown + (f" and {more} more" if more > 0 else "")


class Discarding:
    """One Discard of an execution branch (``ExecutionBranch.discard``)."""

    def __init__(
        self,
        policy: SandboxPolicy,
        branch: str,
        base: str,
        keep: IgnoredKeep | None,
        guard: GitGuard | None = None,
    ) -> None:
        self._policy = policy
        self._branch = branch
        self._base = base
        self._keep = keep
        # The decision's lease, confirmed before each git command (``ExecutionBranch``).
        self._guard = guard
        self._done: list[str] = []

    async def run(self, base_commit: str, reviewed_commit: str, reviewed_index: str) -> Discarded:
        """Back at the reviewed state (see the module); raises BranchError, saying what
        was done, only when git itself fails."""
        try:
            return await self._run(base_commit, reviewed_commit, reviewed_index)
        except (BranchError, OSError) as exc:
            done = "; ".join(self._done) or "nothing was changed"
            raise BranchError(f"{exc} (so far: {done}; Discard can be tried again)") from exc

    async def _run(self, base_commit: str, reviewed_commit: str, reviewed_index: str) -> Discarded:
        base_ref = f"refs/heads/{self._base}"
        found = await self._run_git("rev-parse", "--verify", "--quiet", base_ref)
        now = found.stdout.strip()
        moved_to = now if now and now != base_commit else None
        target = moved_to or reviewed_commit
        opened = await asyncio.to_thread(open_folders, self._policy.workspace)
        if opened:
            self._done.append(f"{len(opened)} unreadable folder(s) opened")
        if not now:
            # The base was deleted: it comes back where the execution started.
            await self._git("update-ref", base_ref, base_commit, "0" * len(base_commit))
        await self._git("symbolic-ref", "HEAD", base_ref)
        self._done.append(f"`HEAD` is on `{self._base}`")
        reviewed = await tracked(self._policy, reviewed_commit)
        if moved_to is not None:  # what the base tracks now, and the reviewed changes
            reviewed |= await tracked(self._policy, moved_to)
        if self._keep is not None:
            # The agent's paths outside the reviewed tree go before git writes a file.
            await asyncio.to_thread(self._keep.restore, self._policy.workspace, reviewed)
        await self._git(*HOST_CONFIG, "read-tree", "--reset", "-u", target)
        await self._git("clean", "--quiet", "--force", "-d")
        self._done.append(f"the files are at {target[:12]}")
        kept_branch, shown = None, target
        if moved_to is None:
            await self._git("read-tree", reviewed_index)
        elif reviewed_commit != base_commit:
            kept_branch, shown = await self._reviewed_onto(reviewed_commit, moved_to)
        missing: tuple[str, ...] = ()
        if self._keep is not None:
            missing = await asyncio.to_thread(self._keep.restore, self._policy.workspace, reviewed)
        differs = await restore_bytes(self._policy, shown)
        await self._run_git("update-ref", "-d", f"refs/heads/{self._branch}")
        if self._keep is not None:
            await asyncio.to_thread(self._keep.forget)
        tree = WorkspaceTree(self._policy.workspace)
        return Discarded(
            moved_to=moved_to,
            kept_branch=kept_branch,
            not_restored=missing,
            differs=differs,
            opened=tuple(p for p in opened if tree.lstat(p) is not None),
        )

    async def _reviewed_onto(self, reviewed: str, base: str) -> tuple[str | None, str]:
        """Put the reviewed uncommitted changes back, uncommitted, on ``base`` (the base as
        a person moved it): no branch and the tree written when they merged cleanly, else
        the branch they are kept on (the working tree then stays at ``base``)."""
        merged = await self._run_git("merge-tree", "--write-tree", "--no-messages", base, reviewed)
        tree = merged.stdout.split("\n", 1)[0].strip()
        if merged.ok and tree:
            await self._git(*HOST_CONFIG, "read-tree", "--reset", "-u", tree)
            await self._git("read-tree", base)
            return None, tree
        kept = f"{self._branch}-reviewed"
        await self._git("update-ref", f"refs/heads/{kept}", reviewed)
        return kept, base

    async def _git(self, *args: str) -> str:
        if self._guard is not None:
            await self._guard.check()
        return await checked_git(self._policy, *args, guard=self._guard)

    async def _run_git(self, *args: str) -> GitOutput:
        if self._guard is not None:
            await self._guard.check()
        return await host_git(self._policy, *args)
