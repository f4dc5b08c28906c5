"""Where a result's branch may be pushed: the one push remote an agent can reach.

Why this exists: the completion card offers Push only where it can work. The remote is
``origin``, or the repository's only remote; read through git in the agent's sandbox (the
repository's configuration as the sandbox allows it). A remote on this machine counts only
inside the agent's shared paths (the only places its sandbox reaches outside its
workspace), and never inside the workspace or holding it; any other URL only for an agent
the operator allowed the network. A Push then writes only the remote (``remote_push``).

The card is redrawn often (every vote, roll back, review), and each read is two git runs in
a sandbox, so ``PushRemotes`` reads a result's remote once, when its card is first drawn (as
the result opens, or the first time after a restart), and keeps it while the result waits.
A remote is git state, which only the host changes (agents cannot write a git directory):
Push itself always reads it again, and what it reads replaces what the card showed.
"""

from __future__ import annotations

from collections.abc import Callable

from plancord.agent.host_io import remote_push
from plancord.agent.host_io.git_run import run_git
from plancord.core.execution import ExecutionRecord
from plancord.core.sandbox_policy import SandboxPolicy


class PushRemotes:
    """The push remote of each waiting result: read once for its card, again for a Push."""

    def __init__(self, policy_of: Callable[[str], SandboxPolicy]) -> None:
        self._policy_of = policy_of
        self._shown: dict[str, str | None] = {}
        self._refused: dict[str, str] = {}

    async def shown(self, record: ExecutionRecord) -> str | None:
        """The remote the card offers Push to: None once the result is decided; else what
        was last read for this result, read now if it never was."""
        if not record.waiting:
            self.forget(record.plan_id)
            return None
        if record.plan_id in self._shown:
            return self._shown[record.plan_id]
        return await self.read(record)

    async def read(self, record: ExecutionRecord) -> str | None:
        """The remote as git says now (what a Push uses), kept for the card."""
        if not record.waiting:
            self.forget(record.plan_id)
            return None
        found = await push_remote(self._policy_of(record.agent))
        remote = found if isinstance(found, str) else None
        self._shown[record.plan_id] = remote
        if isinstance(found, remote_push.PushRefused):
            self._refused[record.plan_id] = found.reason
        else:
            self._refused.pop(record.plan_id, None)
        return remote

    def refused(self, plan_id: str) -> str | None:
        """Why the remote last read for ``plan_id`` may not be pushed to, when it has one
        a Push may not write (it names the path); None otherwise."""
        return self._refused.get(plan_id)

    def forget(self, plan_id: str) -> None:
        """The result was decided: its card offers no Push any more."""
        self._shown.pop(plan_id, None)
        self._refused.pop(plan_id, None)


async def push_remote(policy: SandboxPolicy) -> str | remote_push.PushRefused | None:
    """The name of the remote Push uses; why a Push may not write the one the agent has
    (``remote_push.target_of``: on this machine, a repository in a shared directory, not
    inside the workspace nor holding it; elsewhere, only with the agent's network); None
    when it has none."""
    names = await run_git(policy, "remote")
    remotes = names.stdout.split() if names.ok else []
    name = "origin" if "origin" in remotes else remotes[0] if len(remotes) == 1 else None
    if name is None:
        return None
    url = await run_git(policy, "remote", "get-url", "--push", name)
    if not url.ok:
        return None
    target = remote_push.target_of(url.stdout.strip(), policy)
    return name if isinstance(target, remote_push.PushTarget) else target
