"""Create an agent's workspace: a directory holding a git repository with one empty commit.

Every file and shell tool is jailed inside the workspace, and the git tools expect a
repository with a branch and an identity to commit as, so the workspace is made ready before
the agent's first turn. Running it again on an existing workspace changes nothing that is
already set up, so it is safe on every start.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from plancord.agent.host_io.git_run import (
    GitOutput,
    agent_identity,
    is_linked_worktree,
    run_git,
)
from plancord.core.errors import PlancordError
from plancord.sandbox import LayerChoice, SandboxPolicy

INITIAL_BRANCH = "main"


class WorkspaceError(PlancordError):
    """The workspace could not be prepared; the message says what git or the disk reported."""

    def __init__(self, path: Path, problem: str) -> None:
        self.path = path
        self.problem = problem
        super().__init__(f"Cannot prepare the workspace {path}: {problem}")


class WorkspaceMissing(PlancordError):
    """The agent's workspace is not on this machine: nothing runs, and nothing is created."""

    def __init__(self, path: Path) -> None:
        self.path = path
        super().__init__(
            f"My workspace {path} is not on this machine, so I ran nothing. If agents move "
            "between machines, mount the shared agents folder here or restore the workspace "
            "from its git remote (README: Workspaces); plancord never puts an empty one in "
            "its place."
        )


async def require_workspace(path: Path) -> None:
    """Raise ``WorkspaceMissing`` unless ``path`` is a directory holding a git repository."""

    def present() -> bool:
        return path.is_dir() and (path / ".git").exists()

    if not await asyncio.to_thread(present):
        raise WorkspaceMissing(path)


async def init_workspace(
    path: Path, agent_name: str, layer: LayerChoice = LayerChoice.AUTO
) -> None:
    """Make ``path`` a git repository on ``main`` with the agent's identity and a first commit.

    Idempotent: an existing repository, identity or commit is left as it is. Git runs in
    the agent's sandbox (``layer``), since an existing repository's config is not trusted.
    A linked worktree's config is its whole repository's, shared with every other worktree
    and the human's checkout: nothing is written there (the agent's commits carry its
    identity in git's environment instead, ``commit_identity``).
    """
    try:
        await asyncio.to_thread(path.mkdir, parents=True, exist_ok=True)
    except OSError as exc:
        raise WorkspaceError(path, exc.strerror or str(exc)) from exc
    policy = SandboxPolicy.executing(path, layer=layer).for_host_git()
    if not await asyncio.to_thread((path / ".git").exists):
        _check(path, await run_git(policy, "init", "--quiet", "-b", INITIAL_BRANCH))
    if await asyncio.to_thread(is_linked_worktree, path):
        return
    name, email = agent_identity(agent_name)
    for key, value in (("user.name", name), ("user.email", email)):
        current = await run_git(policy, "config", "--local", "--get", key)
        if not current.stdout.strip():
            _check(path, await run_git(policy, "config", "--local", key, value))
    head = await run_git(policy, "rev-parse", "--verify", "--quiet", "HEAD")
    if not head.ok:
        _check(
            path,
            await run_git(
                policy,
                "-c",
                "commit.gpgSign=false",
                "commit",
                "--quiet",
                "--allow-empty",
                "--no-verify",
                "--message=Initial commit",
            ),
        )


def _check(path: Path, output: GitOutput) -> None:
    if not output.ok:
        raise WorkspaceError(path, output.message or f"git exited with status {output.code}")
