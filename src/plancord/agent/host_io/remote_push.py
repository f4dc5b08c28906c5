"""A push with the least rights: the one way plancord pushes, for the completion card's Push
(``ExecutionBranch.push``) and the agent's ``git_push`` tool alike.

Why this exists: a push needs to write one thing, the remote. So it runs in the sandbox of
``SandboxPolicy.for_push``: the workspace and every git directory of it read-only (no hook,
filter or program that anything names can change the workspace's config, refs or files),
and, for a repository on this machine, that repository's directory the one writable place,
its config allow-listed and its hooks off (``plancord.sandbox.remote_view``). A remote on
this machine is untrusted wherever it lies: the only ones a sandbox reaches are in the
directories shared with the agents, which an agent can write. One inside the workspace (or
holding it) is refused, naming the path: pushing there would change the workspace.

The push goes to the remote's push URL (read through git, as the allow-listed config says),
not to the remote's name, so git records nothing in the workspace (no remote-tracking
branch, no upstream): the workspace's git directory is read-only, and the push leaves it as
it was.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlparse

from plancord.agent.host_io.git_run import PUSH_TIMEOUT_SECONDS, GitOutput, run_git
from plancord.core.sandbox_policy import SandboxPolicy
from plancord.sandbox import remote_view


@dataclass(frozen=True, slots=True)
class PushRefused:
    """Nothing was pushed, for ``reason`` (a clause for people: "the remote … is …")."""

    reason: str


@dataclass(frozen=True, slots=True)
class PushTarget:
    """Where a push goes: ``url`` as git is given it; ``local``, the real path of a
    repository on this machine (None for a remote elsewhere)."""

    url: str
    local: Path | None


def local_path(url: str, workspace: Path) -> Path | None:
    """The path a remote URL names on this machine (a path, or a ``file://`` URL, as git
    reads them), or None for a remote elsewhere (``scheme://``, or ``host:path``)."""
    parsed = urlparse(url)
    if parsed.scheme == "file":
        return Path(unquote(parsed.path))
    if "://" in url:
        return None
    head = url.split("/", 1)[0]
    if ":" in head and not url.startswith("/"):
        return None
    return workspace / url


def target_of(url: str, policy: SandboxPolicy) -> PushTarget | PushRefused:
    """Where a push to ``url`` would go under ``policy`` (the agent's sandbox), or why it
    may not: a repository on this machine must lie in a shared directory the agent's
    sandbox may write there, and neither inside the workspace nor hold it; a remote
    elsewhere needs the agent's own network."""
    path = local_path(url, policy.workspace)
    if path is None:
        if not policy.has_host_network:
            return PushRefused(
                f"the remote {url} is not on this machine and the agent has no network"
            )
        return PushTarget(url, None)
    real = Path(os.path.realpath(path))
    problem = remote_view.checked(policy, real)
    if problem is not None:
        return PushRefused(problem)
    return PushTarget(str(real), real)


async def push_url(policy: SandboxPolicy, remote: str) -> str | PushRefused:
    """The push URL of the remote named ``remote``, as git reads the allow-listed config."""
    found = await run_git(policy.for_reading(), "remote", "get-url", "--push", remote)
    url = found.stdout.strip()
    if not found.ok or not url or "\n" in url:
        said = found.message.splitlines()[0] if found.message else "no URL"
        return PushRefused(f"the remote {remote!r} has no push URL git can read ({said})")
    return url


async def push(
    policy: SandboxPolicy, remote: str, source: str, branch: str
) -> GitOutput | PushRefused:
    """Push ``source`` (a commit or a local branch) to ``refs/heads/<branch>`` of the remote
    named ``remote``, never forced, writing only the remote; git's output, or why nothing
    was pushed. ``policy``: the agent's sandbox for its own git runs."""
    url = await push_url(policy, remote)
    if isinstance(url, PushRefused):
        return url
    target = target_of(url, policy)
    if isinstance(target, PushRefused):
        return target
    argv = ["push", "--no-verify", "--no-recurse-submodules"]
    if target.local is not None:
        argv.append(f"--receive-pack={remote_view.receive_pack()}")
    argv += ["--", target.url, f"{source}:refs/heads/{branch}"]
    return await run_git(policy.for_push(target.local), *argv, timeout=PUSH_TIMEOUT_SECONDS)
