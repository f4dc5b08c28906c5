"""Git run with an argument vector (never through a shell) inside the agent's sandbox, for
the agent's git tools and the host's own git alike: its exit code and output, never an
exception for git's own failure or a sandbox that cannot start."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from plancord.sandbox import SandboxPolicy, SandboxUnavailable, run_sandboxed

GIT_TIMEOUT_SECONDS = 30.0
PUSH_TIMEOUT_SECONDS = 120.0
MAX_GIT_OUTPUT_BYTES = 100_000


@dataclass(frozen=True, slots=True)
class GitOutput:
    """One git run: exit code (None when it timed out or could not start) and its output."""

    code: int | None
    stdout: str
    stderr: str
    timed_out: bool = False
    truncated: bool = False

    @property
    def ok(self) -> bool:
        return self.code == 0

    @property
    def message(self) -> str:
        """What git said, stderr first (where it reports errors and progress)."""
        parts = [part.strip() for part in (self.stderr, self.stdout) if part.strip()]
        return "\n".join(parts)


def agent_identity(agent_name: str) -> tuple[str, str]:
    """The repo-local ``user.name`` and ``user.email`` the agent commits as."""
    return f"plancord agent {agent_name}", f"{agent_name}@agents.plancord.invalid"


def is_linked_worktree(path: Path) -> bool:
    """Whether ``path`` holds a ``.git`` file (a linked worktree, ``git worktree add``)
    rather than a git directory of its own. Blocking."""
    return (path / ".git").is_file()


def commit_identity(agent_name: str) -> dict[str, str]:
    """The agent's identity as git's environment, for a commit in a linked worktree: its
    config is the shared repository's, where plancord writes nothing."""
    name, email = agent_identity(agent_name)
    return {
        "GIT_AUTHOR_NAME": name,
        "GIT_AUTHOR_EMAIL": email,
        "GIT_COMMITTER_NAME": name,
        "GIT_COMMITTER_EMAIL": email,
    }


async def run_git(
    policy: SandboxPolicy,
    *args: str,
    timeout: float = GIT_TIMEOUT_SECONDS,  # noqa: ASYNC109 - the subprocess's own deadline
    max_output: int = MAX_GIT_OUTPUT_BYTES,
    extra_env: Mapping[str, str] | None = None,
    stdout_to: int | None = None,
) -> GitOutput:
    """Run ``git <args>`` in the policy's workspace, inside the agent's sandbox
    (``stdout_to``: an open file of the host's that git's output goes to, through a pipe).

    Never raises for git's own failures, nor when the sandbox cannot start (the output then
    says why, and nothing ran).
    """
    try:
        result = await run_sandboxed(
            ["git", "--no-pager", *args],
            policy,
            timeout=timeout,
            max_output=max_output,
            extra_env=extra_env,
            stdout_to=stdout_to,
        )
    except SandboxUnavailable as exc:
        return GitOutput(None, "", f"Not run: {exc}.")
    except OSError as exc:
        return GitOutput(None, "", f"Cannot run git: {exc.strerror or exc}.")
    return GitOutput(
        code=result.exit_code,
        stdout=result.stdout,
        stderr=result.stderr,
        timed_out=result.timed_out,
        truncated=result.truncated,
    )
