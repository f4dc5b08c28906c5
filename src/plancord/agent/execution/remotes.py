"""Where a result's branch may be pushed: the one push remote an agent can reach.

Why this exists: the completion card offers Push only where it can work. The remote is
``origin``, or the repository's only remote; read through git in the agent's sandbox (the
repository's configuration as the sandbox allows it). A remote on this machine counts only
inside the agent's shared paths (the only places its sandbox reaches outside its
workspace); any other URL only for an agent the operator allowed the network.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlparse

from plancord.agent.tools.git import run_git
from plancord.core.sandbox_policy import SandboxPolicy, SandboxSettings


async def push_remote(policy: SandboxPolicy, agent: str, sandbox: SandboxSettings) -> str | None:
    """The name of the remote Push uses, or None when the agent has none it can reach."""
    names = await run_git(policy, "remote")
    remotes = names.stdout.split() if names.ok else []
    name = "origin" if "origin" in remotes else remotes[0] if len(remotes) == 1 else None
    if name is None:
        return None
    url = await run_git(policy, "remote", "get-url", "--push", name)
    if not url.ok:
        return None
    return name if reachable(url.stdout.strip(), agent, sandbox) else None


def reachable(url: str, agent: str, sandbox: SandboxSettings) -> bool:
    parsed = urlparse(url)
    local = url.startswith("/") or parsed.scheme == "file"
    if not local:
        return agent in sandbox.network_agents
    path = Path(parsed.path if parsed.scheme == "file" else url).resolve()
    return any(path.is_relative_to(shared) for shared in sandbox.shared)
