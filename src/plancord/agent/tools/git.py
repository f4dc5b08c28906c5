"""How the git tools run git, and the tools that look: status, diff and log (the tools that
change the repository are in ``git_write``).

Git runs with an argument vector (never through a shell) inside the agent's sandbox
(``plancord.sandbox``), like every process an agent causes: it sees only the
workspace (read-only for the tools that only look, and while planning), has no network unless
the operator allowed it (never for the tools that only look), starts with the sandbox's
environment (no secrets, no pager, no prompt, no discovery above the workspace) and sees only
the allow-listed keys of the repository's config, as git itself read them (``git_config``).
Diffs never run an external diff or a textconv. Branch and remote names from the model are
checked (``git check-ref-format``, no leading ``-`` or ``+``) so none can be read as an
option or a force-push refspec.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field

from plancord.agent.tools.base import Tool, ToolContext, ToolResult
from plancord.agent.tools.paths import PathOutsideWorkspace, display_path, resolve_in_workspace
from plancord.core.gate import ToolKind
from plancord.sandbox import SandboxPolicy, SandboxUnavailable, run_sandboxed

GIT_TIMEOUT_SECONDS = 30.0
PUSH_TIMEOUT_SECONDS = 120.0
MAX_GIT_OUTPUT_BYTES = 100_000
MAX_LOG_COUNT = 100
MAX_COMMIT_MESSAGE_CHARS = 10_000
MAX_REF_CHARS = 200


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


def git_failure(what: str, output: GitOutput, timeout: float = GIT_TIMEOUT_SECONDS) -> ToolResult:
    """An error result for a failed git run, phrased for the model."""
    if output.timed_out:
        return ToolResult.error(f"{what} timed out after {timeout:g} s and was stopped.")
    text = output.message
    if "not a git repository" in text:
        return ToolResult.error(
            "The workspace is not a git repository. Ask the operator to initialise it."
        )
    return ToolResult.error(f"{what} failed:\n{text or f'git exited with status {output.code}'}")


def _with_truncation_note(text: str, output: GitOutput, hint: str) -> str:
    if output.truncated:
        text = text.rstrip("\n") + (f"\n[output cut at {MAX_GIT_OUTPUT_BYTES // 1000} KB; {hint}]")
    return text


def starts_like_option(name: str) -> bool:
    return name.startswith(("-", "+"))


async def check_branch_name(policy: SandboxPolicy, name: str) -> str | None:
    """None when ``name`` is a usable branch name, otherwise what is wrong with it."""
    if starts_like_option(name):
        return f"{name!r} is not a valid branch name: it may not start with '-' or '+'."
    output = await run_git(policy, "check-ref-format", "--branch", name)
    if not output.ok or output.stdout.strip() != name:
        return (
            f"{name!r} is not a valid branch name (no spaces, '..', '~', '^', ':', '?', '*', "
            "'[', '\\', and no trailing '/' or '.lock')."
        )
    return None


def relative_paths(workspace: Path, paths: Sequence[str]) -> list[str] | ToolResult:
    relative: list[str] = []
    for user_path in paths:
        try:
            resolved = resolve_in_workspace(workspace, user_path, write=True)
        except PathOutsideWorkspace as exc:
            return ToolResult.error(str(exc))
        relative.append(display_path(workspace, resolved))
    return relative


class GitInput(BaseModel):
    model_config = ConfigDict(extra="forbid")


# -- read-only -----------------------------------------------------------------------------


class GitStatusInput(GitInput):
    pass


class GitStatusTool(Tool[GitStatusInput]):
    name: ClassVar[str] = "git_status"
    description: ClassVar[str] = (
        "Show the workspace repository's current branch and changed files (`git status "
        "--porcelain --branch`). Each file line has two status letters, XY: X is the staged "
        "state, Y the unstaged one (M modified, A added, D deleted, R renamed, ?? untracked)."
    )
    kind: ClassVar[ToolKind] = ToolKind.READ_ONLY
    Input: ClassVar[type[BaseModel]] = GitStatusInput

    def detail(self, args: GitStatusInput) -> str:
        return "status"

    async def run(self, args: GitStatusInput, ctx: ToolContext) -> ToolResult:
        output = await run_git(ctx.read_only_policy, "status", "--porcelain=v1", "--branch")
        if not output.ok:
            return git_failure("git status", output)
        text = output.stdout.rstrip("\n")
        if "\n" not in text:
            text += "\nWorking tree clean: nothing to commit."
        return ToolResult(_with_truncation_note(text, output, "commit or narrow the changes"))


class GitDiffInput(GitInput):
    staged: bool = Field(
        default=False,
        description="Show staged changes (index vs HEAD) instead of unstaged ones.",
    )
    path: str | None = Field(
        default=None,
        min_length=1,
        max_length=4096,
        description="Limit the diff to this file or directory (relative to the workspace).",
    )


class GitDiffTool(Tool[GitDiffInput]):
    name: ClassVar[str] = "git_diff"
    description: ClassVar[str] = (
        "Show uncommitted changes as a unified diff: unstaged changes by default, staged ones "
        "with staged=true, optionally limited to one path. Untracked (new, never added) files "
        "do not appear; git_status lists them. Output is cut at "
        f"{MAX_GIT_OUTPUT_BYTES // 1000} KB; pass a path to see one file's diff."
    )
    kind: ClassVar[ToolKind] = ToolKind.READ_ONLY
    Input: ClassVar[type[BaseModel]] = GitDiffInput

    def detail(self, args: GitDiffInput) -> str:
        return " ".join(["diff", *(["--staged"] if args.staged else []), args.path or "."])

    async def run(self, args: GitDiffInput, ctx: ToolContext) -> ToolResult:
        argv = ["diff", "--no-color", "--no-ext-diff", "--no-textconv"]
        if args.staged:
            argv.append("--cached")
        if args.path is not None:
            paths = relative_paths(ctx.workspace, [args.path])
            if isinstance(paths, ToolResult):
                return paths
            argv += ["--", *paths]
        output = await run_git(ctx.read_only_policy, *argv)
        if not output.ok:
            return git_failure("git diff", output)
        if not output.stdout.strip():
            which = "staged" if args.staged else "unstaged"
            where = f" in {args.path}" if args.path else ""
            return ToolResult(f"No {which} changes{where}.")
        return ToolResult(
            _with_truncation_note(output.stdout, output, "pass a path to see one file")
        )


class GitLogInput(GitInput):
    max_count: int = Field(
        default=20, ge=1, le=MAX_LOG_COUNT, description=f"How many commits (1 to {MAX_LOG_COUNT})."
    )
    path: str | None = Field(
        default=None,
        min_length=1,
        max_length=4096,
        description="Only commits that touched this file or directory.",
    )


class GitLogTool(Tool[GitLogInput]):
    name: ClassVar[str] = "git_log"
    description: ClassVar[str] = (
        "List recent commits of the current branch, newest first, one line each: short hash, "
        f"date, author, subject. At most {MAX_LOG_COUNT} commits; optionally only those that "
        "touched a path."
    )
    kind: ClassVar[ToolKind] = ToolKind.READ_ONLY
    Input: ClassVar[type[BaseModel]] = GitLogInput

    def detail(self, args: GitLogInput) -> str:
        return f"log {args.path}" if args.path else "log"

    async def run(self, args: GitLogInput, ctx: ToolContext) -> ToolResult:
        argv = [
            "log",
            f"--max-count={args.max_count}",
            "--date=short",
            "--format=%h %ad %an: %s",
            "--no-color",
        ]
        if args.path is not None:
            paths = relative_paths(ctx.workspace, [args.path])
            if isinstance(paths, ToolResult):
                return paths
            argv += ["--", *paths]
        output = await run_git(ctx.read_only_policy, *argv)
        if not output.ok:
            if "does not have any commits yet" in output.stderr:
                return ToolResult("No commits yet on this branch.")
            return git_failure("git log", output)
        if not output.stdout.strip():
            return ToolResult(f"No commits touch {args.path}." if args.path else "No commits.")
        return ToolResult(output.stdout.rstrip("\n"))


# -- mutating ------------------------------------------------------------------------------
