"""The git directory of a workspace that is a linked worktree, as git itself reads it.

Why this exists: a workspace made with ``git worktree add`` holds a ``.git`` *file* naming its
git directory, which lies outside the workspace (``<repository>/.git/worktrees/<name>``),
with the objects, refs and config in that repository's common directory. The sandbox shows a
process only its workspace, so git in it would find no repository, and a ``.git`` file
leading outside is refused unless it leads to ``SandboxPolicy.git_dir``. This module fills
that field, so the runner can mount the git directory and its common directory (read-only
for every agent process; ``git_dirs``) and show the config view over the common config.

Which directory is decided by git, never by a parser of ours: ``git rev-parse
--absolute-git-dir`` run by the host in the workspace, with no system or global config and
nothing that could run a program (``rev-parse`` runs none: no hooks, no fsmonitor, no
pager). A ``.git`` file is the agent's to write where the workspace holds no repository yet,
so the answer counts only when git also lists the workspace among that repository's
worktrees (``git worktree list``, read from the repository's own ``worktrees/*/gitdir``
files, which lie outside every sandbox): only whoever made the worktree can make that true.
The answer is kept while the ``.git`` file is unchanged (its identity and times); the file
is bound read-only into every agent process, so no agent can change it.
"""

from __future__ import annotations

import dataclasses
import os
import stat
import subprocess
import threading
from pathlib import Path

from plancord.core.sandbox_policy import SandboxPolicy

#: How long git may take to name a worktree's git directory.
ASK_SECONDS = 10.0

_ENVIRONMENT = {
    "PATH": "/usr/bin:/bin",
    "HOME": "/nonexistent",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_OPTIONAL_LOCKS": "0",
    "GIT_TERMINAL_PROMPT": "0",
    "LC_ALL": "C",
}

_Identity = tuple[int, int, int, int, int]
_known: dict[Path, tuple[_Identity, Path | None]] = {}
_lock = threading.Lock()


def with_git_dir(policy: SandboxPolicy) -> SandboxPolicy:
    """``policy`` with ``git_dir`` set when its workspace is a linked worktree git vouches
    for (see the module's docstring); unchanged otherwise. Blocking: runs git on the host."""
    if policy.git_dir is not None:
        return policy
    found = git_dir_of(policy.workspace)
    return policy if found is None else dataclasses.replace(policy, git_dir=found)


def git_dir_of(workspace: Path) -> Path | None:
    """The git directory of the linked worktree at ``workspace``, or None when its ``.git``
    is not a file git reads as one, or git does not list ``workspace`` as a worktree of the
    repository it leads to."""
    workspace = workspace.resolve()
    try:
        info = os.lstat(workspace / ".git")
    except OSError:
        return None
    if not stat.S_ISREG(info.st_mode):
        return None
    identity = (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)
    with _lock:
        kept = _known.get(workspace)
    if kept is not None and kept[0] == identity:
        return kept[1]
    found = _ask_git(workspace)
    with _lock:
        _known[workspace] = (identity, found)
    return found


def _ask_git(workspace: Path) -> Path | None:
    named = _git(workspace, "rev-parse", "--absolute-git-dir", "--git-common-dir")
    if named is None:
        return None
    lines = named.splitlines()
    if len(lines) != 2:
        return None
    git_dir = Path(lines[0])
    common = (workspace / lines[1]).resolve()  # relative to the workspace unless absolute
    if git_dir.resolve() == common.resolve():
        return None  # not a linked worktree: a .git file naming a repository's own directory
    listed = _git(common, "--git-dir", str(common), "worktree", "list", "--porcelain", "-z")
    if listed is None:
        return None
    worktrees = {
        Path(entry.removeprefix("worktree ")).resolve()
        for entry in listed.split("\0")
        if entry.startswith("worktree ")
    }
    return git_dir if workspace in worktrees else None


def _git(cwd: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", *args],
            cwd=cwd,
            env=_ENVIRONMENT,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=ASK_SECONDS,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    return done.stdout.decode("utf-8", errors="surrogateescape").rstrip("\n")
