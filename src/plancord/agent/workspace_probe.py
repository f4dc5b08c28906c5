"""The workspace's fingerprint, so an approval binds to the tree the reviewer saw.

``GitTreeProbe.tree`` reads, inside the agent's sandbox and read-only, the commit ``HEAD``
names and the uncommitted changes (``git status`` and the diff against ``HEAD``), and sums
them up as ``<commit> clean`` or ``<commit> dirty:<hash>``. The planning service records it
when a plan is submitted and compares it when the plan is approved. The contents of
untracked files are not read (their names are), so a change to an untracked file alone goes
unnoticed.
"""

from __future__ import annotations

import asyncio
import hashlib
from pathlib import Path

from plancord.agent.tools.git import run_git
from plancord.core.shell.sandbox.policy import SandboxSettings

MAX_DIFF_BYTES = 4_000_000
"""The diff read for the fingerprint; a larger one is summed up to this many bytes."""


class GitTreeProbe:
    def __init__(self, agents_dir: Path, sandbox: SandboxSettings) -> None:
        self.agents_dir = agents_dir
        self.sandbox = sandbox

    async def tree(self, agent: str) -> str | None:
        workspace = self.agents_dir / agent / "workspace"
        if not (workspace / ".git").exists():
            return None
        policy = self.sandbox.policy(agent, workspace, planning=True, inner_wall=False)
        head, status, diff = await asyncio.gather(
            run_git(policy, "rev-parse", "--short=12", "HEAD"),
            run_git(policy, "status", "--porcelain=v1", "-z", "--untracked-files=all"),
            run_git(
                policy,
                "diff",
                "HEAD",
                "--binary",
                "--no-ext-diff",
                "--no-textconv",
                max_output=MAX_DIFF_BYTES,
            ),
        )
        if not status.ok:
            return None
        commit = head.stdout.strip() if head.ok else "no-commit"
        changes = status.stdout + (diff.stdout if diff.ok else "")
        if not changes:
            return f"{commit} clean"
        return f"{commit} dirty:{hashlib.sha256(changes.encode()).hexdigest()[:12]}"
