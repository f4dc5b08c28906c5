"""What a call did to the repository's own state, read from git as the host's.

Why this exists: the workspace observer sees that ``.git/HEAD``, the index or a ref changed,
not what that means. A commit or a staged file changes no working-tree file, yet it puts
paths into the branch a human will merge; a checkout moves ``HEAD`` off the execution
branch. ``RepositoryLook`` turns those state changes into the paths they committed or staged
(held to the step like any other change) and says whether ``HEAD`` left the branch; and it
gives the permission card a short diff of the paths a drift changed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from pathlib import Path

from plancord.agent.home import AgentHomes
from plancord.agent.host_io.git_run import run_git
from plancord.agent.host_io.walk import WorkspaceTree
from plancord.sandbox import SandboxPolicy

DIFF_CHARS = 700
"""How much of a drift's diff the permission card shows."""


class RepositoryLook:
    """Per agent: the commit ``HEAD`` named at the host's last look."""

    def __init__(self, homes: AgentHomes) -> None:
        self._homes = homes
        self._heads: dict[str, str] = {}

    async def note_head(self, agent: str) -> None:
        """Remember the commit ``HEAD`` names now, to tell what a later call committed."""
        now = await run_git(self._policy(agent), "rev-parse", "--verify", "--quiet", "HEAD")
        if now.ok:
            self._heads[agent] = now.stdout.strip()
        else:
            self._heads.pop(agent, None)

    def forget(self, agent: str) -> None:
        self._heads.pop(agent, None)

    async def state_changes(self, agent: str, branch: str) -> tuple[set[str], bool]:
        """After a call changed the repository's state: the paths it committed (since the
        last look) or left staged, and whether ``HEAD`` no longer names ``branch``."""
        head = await asyncio.to_thread(_read_head, self._homes.of(agent).workspace)
        off_branch = head != f"ref: refs/heads/{branch}"
        policy = self._policy(agent)
        changed: set[str] = set()
        before = self._heads.get(agent)
        now = await run_git(policy, "rev-parse", "--verify", "--quiet", "HEAD")
        if before is not None and now.ok:
            committed = await run_git(policy, "diff", "--name-only", "-z", before, "HEAD")
            changed.update(_names(committed.stdout))
        staged = await run_git(policy, "diff", "--cached", "--name-only", "-z", "HEAD")
        changed.update(_names(staged.stdout))
        if now.ok:
            self._heads[agent] = now.stdout.strip()
        return changed, off_branch

    async def short_diff(self, agent: str, paths: Iterable[str]) -> str:
        """At most ``DIFF_CHARS`` of the diff of ``paths`` against ``HEAD``; files git does
        not track yet are named."""
        shown = [p for p in paths if not p.startswith(".git")][:10]
        if not shown:
            return ""
        out = await run_git(
            self._policy(agent),
            "--literal-pathspecs",
            "diff",
            "--no-color",
            "--no-ext-diff",
            "--no-textconv",
            "HEAD",
            "--",
            *shown,
            max_output=DIFF_CHARS * 4,
        )
        text = out.stdout if out.ok else ""
        new = [p for p in shown if f"b/{p}" not in text]
        text += "".join(f"new or untracked: {p}\n" for p in new)
        return text[:DIFF_CHARS]

    def _policy(self, agent: str) -> SandboxPolicy:
        """The host only reads here: the workspace read-only, so these runs need no wall
        around the git directory and run under every layer."""
        return self._homes.of(agent).read_only_policy


def _names(output: str) -> list[str]:
    return [name for name in output.split("\0") if name]


def _read_head(workspace: Path) -> str:
    """``.git/HEAD`` as the host reads it: through the workspace's one door, never through
    a link the agent left."""
    try:
        head = WorkspaceTree(workspace).read_bytes(".git/HEAD", 4096)
    except OSError:
        return ""
    return head.decode("utf-8", "replace").strip()
