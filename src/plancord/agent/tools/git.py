"""The git tools: status, diff and log to look, commit, branch, checkout and push to change.

Git runs with an argument vector (never through a shell) inside the agent's sandbox
(``plancord.core.shell.sandbox``), like every process an agent causes: it sees only the
workspace (read-only while planning), has no network unless the operator allowed it, starts
with the sandbox's environment (no secrets, no pager, no prompt, no discovery above the
workspace) and with every program-running config key a repository could set switched off.
Diffs never run an external diff or a textconv. Branch and remote names from the model are
checked (``git check-ref-format``, no leading ``-`` or ``+``) so none can be read as an
option or a force-push refspec.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from plancord.agent.tools.base import Tool, ToolContext, ToolResult
from plancord.agent.tools.paths import PathOutsideWorkspace, display_path, resolve_in_workspace
from plancord.core.gate import ToolKind
from plancord.core.shell.sandbox import SandboxPolicy, SandboxUnavailable, run_sandboxed

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


async def run_git(
    policy: SandboxPolicy,
    *args: str,
    timeout: float = GIT_TIMEOUT_SECONDS,  # noqa: ASYNC109 - the subprocess's own deadline
    max_output: int = MAX_GIT_OUTPUT_BYTES,
    extra_env: Mapping[str, str] | None = None,
) -> GitOutput:
    """Run ``git <args>`` in the policy's workspace, inside the agent's sandbox.

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


def _starts_like_option(name: str) -> bool:
    return name.startswith(("-", "+"))


async def check_branch_name(policy: SandboxPolicy, name: str) -> str | None:
    """None when ``name`` is a usable branch name, otherwise what is wrong with it."""
    if _starts_like_option(name):
        return f"{name!r} is not a valid branch name: it may not start with '-' or '+'."
    output = await run_git(policy, "check-ref-format", "--branch", name)
    if not output.ok or output.stdout.strip() != name:
        return (
            f"{name!r} is not a valid branch name (no spaces, '..', '~', '^', ':', '?', '*', "
            "'[', '\\', and no trailing '/' or '.lock')."
        )
    return None


def _relative_paths(workspace: Path, paths: Sequence[str]) -> list[str] | ToolResult:
    relative: list[str] = []
    for user_path in paths:
        try:
            resolved = resolve_in_workspace(workspace, user_path, write=True)
        except PathOutsideWorkspace as exc:
            return ToolResult.error(str(exc))
        relative.append(display_path(workspace, resolved))
    return relative


class _Input(BaseModel):
    model_config = ConfigDict(extra="forbid")


# -- read-only -----------------------------------------------------------------------------


class GitStatusInput(_Input):
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
        output = await run_git(ctx.policy, "status", "--porcelain=v1", "--branch")
        if not output.ok:
            return git_failure("git status", output)
        text = output.stdout.rstrip("\n")
        if "\n" not in text:
            text += "\nWorking tree clean: nothing to commit."
        return ToolResult(_with_truncation_note(text, output, "commit or narrow the changes"))


class GitDiffInput(_Input):
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
            paths = _relative_paths(ctx.workspace, [args.path])
            if isinstance(paths, ToolResult):
                return paths
            argv += ["--", *paths]
        output = await run_git(ctx.policy, *argv)
        if not output.ok:
            return git_failure("git diff", output)
        if not output.stdout.strip():
            which = "staged" if args.staged else "unstaged"
            where = f" in {args.path}" if args.path else ""
            return ToolResult(f"No {which} changes{where}.")
        return ToolResult(
            _with_truncation_note(output.stdout, output, "pass a path to see one file")
        )


class GitLogInput(_Input):
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
            paths = _relative_paths(ctx.workspace, [args.path])
            if isinstance(paths, ToolResult):
                return paths
            argv += ["--", *paths]
        output = await run_git(ctx.policy, *argv)
        if not output.ok:
            if "does not have any commits yet" in output.stderr:
                return ToolResult("No commits yet on this branch.")
            return git_failure("git log", output)
        if not output.stdout.strip():
            return ToolResult(f"No commits touch {args.path}." if args.path else "No commits.")
        return ToolResult(output.stdout.rstrip("\n"))


# -- mutating ------------------------------------------------------------------------------


class GitCommitInput(_Input):
    message: str = Field(
        min_length=1,
        max_length=MAX_COMMIT_MESSAGE_CHARS,
        description="The commit message: a short subject line, optionally a blank line and a body.",
    )
    paths: list[Annotated[str, Field(min_length=1, max_length=4096)]] | None = Field(
        default=None,
        min_length=1,
        max_length=200,
        description=(
            "Commit only these files or directories (new, changed or deleted). "
            "Default: every change in the workspace."
        ),
    )


class GitCommitTool(Tool[GitCommitInput]):
    name: ClassVar[str] = "git_commit"
    description: ClassVar[str] = (
        "Stage and commit changes on the current branch: every change in the workspace "
        "(`git add -A`) by default, or only the given paths. Fails when there is nothing to "
        "commit. Commit hooks run; no signing prompt, no editor."
    )
    kind: ClassVar[ToolKind] = ToolKind.MUTATING
    Input: ClassVar[type[BaseModel]] = GitCommitInput

    def detail(self, args: GitCommitInput) -> str:
        lines = args.message.strip().splitlines()
        return f"commit {lines[0] if lines else ''}"

    async def run(self, args: GitCommitInput, ctx: ToolContext) -> ToolResult:
        if not args.message.strip():
            return ToolResult.error("The commit message is empty; say what the commit changes.")
        pathspec: list[str] = []
        if args.paths is not None:
            paths = _relative_paths(ctx.workspace, args.paths)
            if isinstance(paths, ToolResult):
                return paths
            pathspec = ["--", *paths]
        added = await run_git(ctx.policy, "add", "-A", *pathspec)
        if not added.ok:
            return git_failure("git add", added)
        staged = await run_git(ctx.policy, "diff", "--cached", "--quiet", *pathspec)
        if staged.code == 0:
            where = " in " + ", ".join(pathspec[1:]) if pathspec else ""
            return ToolResult.error(
                f"Nothing to commit: there are no changes{where}. Use git_status to see the "
                "working tree."
            )
        if staged.code != 1:
            return git_failure("git diff --cached", staged)
        committed = await run_git(
            ctx.policy, "commit", "--no-edit", f"--message={args.message}", *pathspec
        )
        if not committed.ok:
            return git_failure("git commit", committed)
        return ToolResult(committed.stdout.strip() or committed.message)


class GitBranchInput(_Input):
    name: str = Field(min_length=1, max_length=MAX_REF_CHARS, description="Name of the new branch.")
    start_point: str | None = Field(
        default=None,
        min_length=1,
        max_length=MAX_REF_CHARS,
        description="Commit, branch or tag to start from. Default: the current commit (HEAD).",
    )


class GitBranchTool(Tool[GitBranchInput]):
    name: ClassVar[str] = "git_branch"
    description: ClassVar[str] = (
        "Create a new branch (without switching to it; use git_checkout for that). Fails if "
        "the branch exists or the name is not a valid git branch name."
    )
    kind: ClassVar[ToolKind] = ToolKind.MUTATING
    Input: ClassVar[type[BaseModel]] = GitBranchInput

    def detail(self, args: GitBranchInput) -> str:
        return f"branch {args.name}" + (f" {args.start_point}" if args.start_point else "")

    async def run(self, args: GitBranchInput, ctx: ToolContext) -> ToolResult:
        problem = await check_branch_name(ctx.policy, args.name)
        if problem:
            return ToolResult.error(problem)
        argv = ["branch", args.name]
        if args.start_point is not None:
            if _starts_like_option(args.start_point):
                return ToolResult.error(
                    f"{args.start_point!r} is not a commit, branch or tag name."
                )
            argv.append(args.start_point)
        created = await run_git(ctx.policy, *argv)
        if not created.ok:
            return git_failure("git branch", created)
        head = await run_git(ctx.policy, "rev-parse", "--short", args.name)
        current = await run_git(ctx.policy, "symbolic-ref", "--quiet", "--short", "HEAD")
        on = current.stdout.strip() or "a detached HEAD"
        return ToolResult(
            f"Created branch {args.name} at {head.stdout.strip()}; you are still on {on}. "
            "Use git_checkout to switch to it."
        )


class GitCheckoutInput(_Input):
    ref: str = Field(
        min_length=1,
        max_length=MAX_REF_CHARS,
        description="Branch to switch to (or a commit or tag, which detaches HEAD).",
    )
    create: bool = Field(
        default=False, description="Create the branch `ref` at the current commit and switch."
    )


class GitCheckoutTool(Tool[GitCheckoutInput]):
    name: ClassVar[str] = "git_checkout"
    description: ClassVar[str] = (
        "Switch the workspace to a branch (or, with create=true, create it from the current "
        "commit first). Uncommitted changes are kept when they do not conflict; otherwise git "
        "refuses and says which files to commit first. Does not restore or discard files."
    )
    kind: ClassVar[ToolKind] = ToolKind.MUTATING
    Input: ClassVar[type[BaseModel]] = GitCheckoutInput

    def detail(self, args: GitCheckoutInput) -> str:
        return f"checkout {'-b ' if args.create else ''}{args.ref}"

    async def run(self, args: GitCheckoutInput, ctx: ToolContext) -> ToolResult:
        if args.create:
            problem = await check_branch_name(ctx.policy, args.ref)
            if problem:
                return ToolResult.error(problem)
            argv = ["checkout", "-b", args.ref]
        else:
            if _starts_like_option(args.ref):
                return ToolResult.error(f"{args.ref!r} is not a branch, commit or tag name.")
            argv = ["checkout", args.ref, "--"]
        switched = await run_git(ctx.policy, *argv)
        if not switched.ok:
            return git_failure("git checkout", switched)
        return ToolResult(switched.message or f"Switched to {args.ref}.")


class GitPushInput(_Input):
    remote: str = Field(
        default="origin",
        min_length=1,
        max_length=MAX_REF_CHARS,
        description="Name of a configured remote. Default: origin.",
    )
    branch: str | None = Field(
        default=None,
        min_length=1,
        max_length=MAX_REF_CHARS,
        description="Local branch to push to the branch of the same name. Default: current.",
    )


class GitPushTool(Tool[GitPushInput]):
    name: ClassVar[str] = "git_push"
    description: ClassVar[str] = (
        "Push a local branch to the branch of the same name on a remote and set it as the "
        "upstream. Never forces: a rejected (non-fast-forward) push fails and says so. "
        "Credentials must already be configured; there is no prompt."
    )
    kind: ClassVar[ToolKind] = ToolKind.MUTATING
    Input: ClassVar[type[BaseModel]] = GitPushInput

    def detail(self, args: GitPushInput) -> str:
        return f"push {args.remote} {args.branch or '(current branch)'}"

    async def run(self, args: GitPushInput, ctx: ToolContext) -> ToolResult:
        if _starts_like_option(args.remote):
            return ToolResult.error(f"{args.remote!r} is not a remote name.")
        remotes = await run_git(ctx.policy, "remote")
        if not remotes.ok:
            return git_failure("git remote", remotes)
        names = remotes.stdout.split()
        if args.remote not in names:
            known = ", ".join(names) if names else "none is configured"
            return ToolResult.error(f"There is no remote named {args.remote!r} (remotes: {known}).")
        branch = args.branch
        if branch is None:
            current = await run_git(ctx.policy, "symbolic-ref", "--quiet", "--short", "HEAD")
            branch = current.stdout.strip()
            if not current.ok or not branch:
                return ToolResult.error(
                    "HEAD is detached, so there is no current branch to push; pass `branch`."
                )
        problem = await check_branch_name(ctx.policy, branch)
        if problem:
            return ToolResult.error(problem)
        pushed = await run_git(
            ctx.policy,
            "push",
            "--set-upstream",
            args.remote,
            f"refs/heads/{branch}:refs/heads/{branch}",
            timeout=PUSH_TIMEOUT_SECONDS,
        )
        if not pushed.ok:
            return git_failure("git push", pushed, PUSH_TIMEOUT_SECONDS)
        return ToolResult(f"Pushed {branch} to {args.remote}.\n{pushed.message}".strip())
