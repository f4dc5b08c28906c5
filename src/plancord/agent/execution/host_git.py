"""The host's own git runs on an agent's repository, and the one error they raise.

Why this exists: every part that moves or reads an execution branch (starting it, the step
commits, Merge, Discard, Roll back, the card's reading) runs git the same way: in the
agent's sandbox (``run_git``), hooks off, signing off, a fixed identity, a stale lock a
killed git left swept and the run made again, and any failure a :class:`BranchError` whose
message says, for a human, which git command failed and why.
"""

from __future__ import annotations

import asyncio
import logging

from plancord.agent.execution.git_locks import LockSweep, refused_by_lock, sweep_stale_locks
from plancord.agent.execution.lease import GitGuard
from plancord.agent.host_io.git_run import GitOutput, run_git
from plancord.sandbox import SandboxPolicy

log = logging.getLogger(__name__)

IDENTITY = ("plancord", "plancord@plancord.invalid")
HOST_CONFIG = (
    "-c", "core.hooksPath=/dev/null",
    "-c", "commit.gpgSign=false",
    "-c", f"user.name={IDENTITY[0]}",
    "-c", f"user.email={IDENTITY[1]}",
)  # fmt: skip
IDENTITY_ENV = {
    "GIT_AUTHOR_NAME": IDENTITY[0],
    "GIT_AUTHOR_EMAIL": IDENTITY[1],
    "GIT_COMMITTER_NAME": IDENTITY[0],
    "GIT_COMMITTER_EMAIL": IDENTITY[1],
}


class BranchError(Exception):
    """A branch operation could not be done; the message says why, for a human."""


async def host_git(
    policy: SandboxPolicy,
    *args: str,
    env: dict[str, str] | None = None,
    max_output: int = 1_000_000,
) -> GitOutput:
    """One git run of the host's in ``policy``'s sandbox, whatever its outcome (every run
    of the branch's goes through here, so there is one place a run is made)."""
    return await run_git(policy, *args, extra_env=env, max_output=max_output)


async def checked_git(
    policy: SandboxPolicy,
    *args: str,
    env: dict[str, str] | None = None,
    max_output: int = 1_000_000,
    guard: GitGuard | None = None,
) -> str:
    """Git's output for ``args`` in ``policy``'s sandbox; BranchError when git fails or
    says more than ``max_output``. ``guard``: whose holds of git a lock sweep respects."""
    output = await run_git(policy, *args, extra_env=env, max_output=max_output)
    blocked = ""
    if not output.ok and refused_by_lock(output.message):
        # A lock file in the way (a killed git's): git stopped at the lock it could not
        # take; once a stale file is gone, the same run is made again (each run here can be).
        sweep = await clear_stale_locks(policy, guard)
        if sweep.removed:
            output = await run_git(policy, *args, extra_env=env, max_output=max_output)
        blocked = sweep.left_text()
    if not output.ok:
        what = next((a for a in args if a[:1] not in "-/" and "=" not in a), "git")
        raise BranchError(f"git {what} failed: {output.message or output.code}{blocked}")
    if output.truncated:
        raise BranchError(f"git {args[0]} said more than the host reads")
    return output.stdout


async def clear_stale_locks(policy: SandboxPolicy, guard: GitGuard | None = None) -> LockSweep:
    """The provably stale lock files of ``policy``'s workspace removed (``git_locks``),
    each removal logged; none while another process whose lease is live holds git there
    (``guard``)."""
    elsewhere = await guard.held_elsewhere() if guard is not None else ""
    sweep = await asyncio.to_thread(sweep_stale_locks, policy.workspace, held_elsewhere=elsewhere)
    if sweep.removed:
        log.warning(
            "removed stale git lock files in %s: %s", policy.workspace, ", ".join(sweep.removed)
        )
    return sweep


async def tracked(policy: SandboxPolicy, commit: str) -> frozenset[str]:
    """The file paths (blobs, symlinks, submodules) of ``commit``'s tree."""
    listing = await checked_git(
        policy, "ls-tree", "-r", "-z", "--full-tree", "--name-only", commit, max_output=200_000_000
    )
    return frozenset(path for path in listing.split("\x00") if path)
