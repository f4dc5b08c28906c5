"""Why a workspace cannot take an execution branch, said at approval.

Why apart from :class:`~plancord.agent.execution.branch.ExecutionBranch`: the branch moves
git's state; this only looks, before anything moves, at whether it can: a repository with a
commit, on a branch, its git directory the workspace's own ``.git``, no operation half-done,
no unresolved conflict. The approval is refused with the reason otherwise.
"""

from __future__ import annotations

import asyncio
import stat
from pathlib import Path

from plancord.agent.host_io.git_run import run_git
from plancord.agent.host_io.walk import WorkspaceTree
from plancord.sandbox import SandboxPolicy

_MID_OPERATION = {
    "rebase-merge": "a rebase is in progress",
    "rebase-apply": "a rebase or `git am` is in progress",
    "MERGE_HEAD": "a merge is in progress",
    "CHERRY_PICK_HEAD": "a cherry-pick is in progress",
    "REVERT_HEAD": "a revert is in progress",
    "BISECT_LOG": "a bisect is in progress",
}


async def branch_refusal(policy: SandboxPolicy) -> str | None:
    """Why ``policy``'s workspace cannot take an execution branch, or None when it can."""
    bare = await run_git(policy, "rev-parse", "--is-bare-repository")
    if not bare.ok or bare.stdout.strip() == "true":
        if await asyncio.to_thread(_looks_bare, policy.workspace):
            return "the workspace is a bare repository"
        return "the workspace is not a git repository"
    if not (await run_git(policy, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")).ok:
        return "the repository has no commit yet"
    if not (await run_git(policy, "symbolic-ref", "--quiet", "HEAD")).ok:
        return "HEAD is detached: check out a branch first"
    git_dir = (await run_git(policy, "rev-parse", "--absolute-git-dir")).stdout.strip()
    if Path(git_dir) != policy.workspace / ".git":
        return "the repository's git directory is not the workspace's own `.git`"
    busy = await asyncio.to_thread(_operation_in_progress, policy.workspace)
    if busy is not None:
        return busy
    if (await run_git(policy, "ls-files", "--unmerged")).stdout.strip():
        return "the index has unresolved conflicts"
    return None


def _looks_bare(root: Path) -> bool:
    """A bare repository: git's own files at the top (git itself will not discover one,
    ``safe.bareRepository`` being ``explicit`` in the sandbox)."""
    tree = WorkspaceTree(root)
    head, objects, refs = (tree.lstat(name) for name in ("HEAD", "objects", "refs"))
    return (
        head is not None
        and stat.S_ISREG(head.st_mode)
        and all(d is not None and stat.S_ISDIR(d.st_mode) for d in (objects, refs))
    )


def _operation_in_progress(root: Path) -> str | None:
    tree = WorkspaceTree(root)
    for marker, why in _MID_OPERATION.items():
        if tree.lstat(f".git/{marker}") is not None:
            return why
    return None
