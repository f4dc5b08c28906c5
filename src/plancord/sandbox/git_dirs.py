"""The git directories an agent's process sees read-only, and what git's own runs never read.

Why this exists: git's state (refs, objects, the index, hooks, config, ``info/``) is the
host's. An agent's process that could write it could move the base branch, rewrite an
object under its id, plant a replace ref, a hook or an fsmonitor that runs for the next
person, or attributes and sparse settings that hide the card's diff. So every process runs
with each git directory of the workspace read-only (the workspace's own, a linked worktree's
and its common directory, every nested repository's and submodule's, wherever its ``.git``
leads inside what the sandbox mounts), in every phase; only the host's own git runs
(``SandboxPolicy.git_writable``: fixed argv, no hooks, the allow-listed config) write there.

Which directories: those ``git_config.locate`` found for the config view (it refuses a
``.git`` that is a symbolic link, and a ``.git`` file or ``commondir`` leading anywhere
plancord did not make), each taken as the real path it names now; nothing the agent made
later can move a mount that is already in place. Under bubblewrap each is bound read-only
after the workspace (mount order: later binds win). The Landlock fallback cannot carve a
directory out of a writable tree (its rules grant whole hierarchies), so there a process
that could write the workspace of a repository is refused with the reason; the host's own
git runs and read-only runs go on.

A linked worktree's git directory and its common directory lie outside the workspace
(``SandboxPolicy.git_dir``, which ``linked_worktree`` fills from git's own answer): they are
mounted for every process (``outside``), read-only unless the run is the host's own git, and
the worktree's ``.git`` file is bound read-only over the workspace so that no agent process
can point it elsewhere.

What git never reads from a git directory, for every run under bubblewrap: ``info/attributes``
(an empty file is bound over it, so attributes there neither hide a diff nor change what a
checkout writes).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from plancord.core.sandbox_policy import Layer, SandboxPolicy
from plancord.sandbox import git_config
from plancord.sandbox.layers import SandboxUnavailable

#: Files of a git directory that git must not read in the sandbox; each is shown empty.
BLANKED = ("info/attributes",)

Found = list[tuple[Path, git_config.Repository]]


@dataclass(frozen=True, slots=True)
class GitWalls:
    """``read_only``: the git directories to bind read-only, parents before what they hold
    (none inside another). ``blanked``: files to show empty."""

    read_only: tuple[str, ...] = ()
    blanked: tuple[Path, ...] = ()


def outside(policy: SandboxPolicy) -> tuple[str, ...]:
    """The git directories of the workspace's own repository that lie outside the workspace
    and the shared directories (a linked worktree's, and its common directory), as real
    paths, none inside another; empty unless ``policy.git_dir`` is set."""
    if policy.git_dir is None:
        return ()
    try:
        repository = git_config.locate(policy.workspace, policy.git_dir)
    except git_config.ForeignRepository:
        return ()
    if repository is None:
        return ()
    roots = tuple(os.path.realpath(root) for root in (policy.workspace, *policy.shared))
    found: list[str] = []
    for directory in (repository.directory, repository.config.parent):
        real = os.path.realpath(directory)
        if not _inside(real, roots) and not _inside(real, tuple(found)):
            found = [kept for kept in found if not _inside(kept, (real,))] + [real]
    return tuple(found)


def _inside(path: str, roots: tuple[str, ...]) -> bool:
    return any(path == root or path.startswith(root.rstrip("/") + "/") for root in roots)


def walls(policy: SandboxPolicy, layer: Layer, repositories: Found) -> GitWalls:
    """What keeps the git directories of ``repositories`` from a process under ``policy``.

    Raises SandboxUnavailable (nothing runs) under the Landlock fallback when the process
    could write a workspace that holds a repository: there no wall can keep git's state.
    """
    roots = tuple(os.path.realpath(root) for root in (policy.workspace, *policy.shared))
    roots += outside(policy)
    directories: list[str] = []
    for _, repository in repositories:
        for directory in (repository.directory, repository.config.parent):
            real = os.path.realpath(directory)
            if _inside(real, roots) and real not in directories:
                directories.append(real)
    blanked = tuple(
        Path(real) / name
        for real in directories
        for name in BLANKED
        if os.path.isfile(Path(real) / name) and not os.path.islink(Path(real) / name)
    )
    writes = policy.writable and not policy.inner_wall and not policy.git_writable
    if not writes or not directories:
        return GitWalls((), blanked)
    if layer is Layer.LANDLOCK:
        raise SandboxUnavailable(
            "this command could write the workspace, and under the Landlock fallback "
            "plancord cannot keep the repository's git directory read-only inside a "
            "writable workspace; change the repository with the git tools (git_commit, "
            "git_checkout, git_branch), run commands that only read, or run plancord where "
            "bubblewrap works"
        )
    if layer is Layer.OFF:
        return GitWalls((), blanked)
    directories.sort(key=lambda path: (path.count("/"), path))
    outermost: list[str] = []
    for real in directories:
        if not _inside(real, tuple(outermost)):
            outermost.append(real)
    pointer = policy.workspace / ".git"
    if policy.git_dir is not None and pointer.is_file() and not pointer.is_symlink():
        outermost.append(str(pointer))
    return GitWalls(tuple(outermost), blanked)
