"""The git tools that change the repository: commit, branch, checkout and push, each a
``mutating`` tool the gate (and, while executing, the approved plan) decides on.

They are the only way an agent changes git's state: every other process of the agent sees
the repository's git directory read-only (``plancord.sandbox.git_dirs``). Their git runs
(``ToolContext.git_policy``) write it, with a fixed argv, no hooks, the allow-listed config,
replace objects off and no attributes or sparse settings from outside the tree. A push
writes only the remote (``remote_push``): the workspace's git directory stays read-only.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated, ClassVar

from pydantic import BaseModel, Field

from plancord.agent.host_io import remote_push
from plancord.agent.host_io.git_run import (
    PUSH_TIMEOUT_SECONDS,
    commit_identity,
    is_linked_worktree,
    run_git,
)
from plancord.agent.tools.base import Tool, ToolContext, ToolResult
from plancord.agent.tools.git import (
    MAX_COMMIT_MESSAGE_CHARS,
    MAX_REF_CHARS,
    GitInput,
    check_branch_name,
    git_failure,
    relative_paths,
    starts_like_option,
)
from plancord.core.gate import ToolKind
from plancord.core.holding import KnownWrites


class GitCommitInput(GitInput):
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
        "commit. No hooks run; no signing prompt, no editor. This is how to commit: git in "
        "bash_execute cannot write the repository's .git directory."
    )
    kind: ClassVar[ToolKind] = ToolKind.MUTATING
    Input: ClassVar[type[BaseModel]] = GitCommitInput

    def detail(self, args: GitCommitInput) -> str:
        lines = args.message.strip().splitlines()
        return f"commit {lines[0] if lines else ''}"

    def writes(self, args: GitCommitInput, workspace: Path) -> KnownWrites | None:
        if args.paths is None:
            return None
        paths = relative_paths(workspace, args.paths)
        if isinstance(paths, ToolResult) or "." in paths:
            return None
        return KnownWrites(tuple(paths))

    async def run(self, args: GitCommitInput, ctx: ToolContext) -> ToolResult:
        if not args.message.strip():
            return ToolResult.error("The commit message is empty; say what the commit changes.")
        pathspec: list[str] = []
        if args.paths is not None:
            paths = relative_paths(ctx.workspace, args.paths)
            if isinstance(paths, ToolResult):
                return paths
            pathspec = ["--", *paths]
        added = await run_git(ctx.git_policy, "add", "-A", *pathspec)
        if not added.ok:
            return git_failure("git add", added)
        staged = await run_git(ctx.git_policy, "diff", "--cached", "--quiet", *pathspec)
        if staged.code == 0:
            where = " in " + ", ".join(pathspec[1:]) if pathspec else ""
            return ToolResult.error(
                f"Nothing to commit: there are no changes{where}. Use git_status to see the "
                "working tree."
            )
        if staged.code != 1:
            return git_failure("git diff --cached", staged)
        linked = await asyncio.to_thread(is_linked_worktree, ctx.workspace)
        committed = await run_git(
            ctx.git_policy,
            "commit",
            "--no-edit",
            f"--message={args.message}",
            *pathspec,
            extra_env=commit_identity(ctx.agent.name) if linked else None,
        )
        if not committed.ok:
            return git_failure("git commit", committed)
        return ToolResult(committed.stdout.strip() or committed.message)


class GitBranchInput(GitInput):
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
        problem = await check_branch_name(ctx.git_policy, args.name)
        if problem:
            return ToolResult.error(problem)
        argv = ["branch", args.name]
        if args.start_point is not None:
            if starts_like_option(args.start_point):
                return ToolResult.error(
                    f"{args.start_point!r} is not a commit, branch or tag name."
                )
            argv.append(args.start_point)
        created = await run_git(ctx.git_policy, *argv)
        if not created.ok:
            return git_failure("git branch", created)
        head = await run_git(ctx.git_policy, "rev-parse", "--short", args.name)
        current = await run_git(ctx.git_policy, "symbolic-ref", "--quiet", "--short", "HEAD")
        on = current.stdout.strip() or "a detached HEAD"
        return ToolResult(
            f"Created branch {args.name} at {head.stdout.strip()}; you are still on {on}. "
            "Use git_checkout to switch to it."
        )


class GitCheckoutInput(GitInput):
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

    def writes(self, args: GitCheckoutInput, workspace: Path) -> KnownWrites | None:
        return KnownWrites(switches_to=args.ref, new_branch=args.create)

    async def run(self, args: GitCheckoutInput, ctx: ToolContext) -> ToolResult:
        if args.create:
            problem = await check_branch_name(ctx.git_policy, args.ref)
            if problem:
                return ToolResult.error(problem)
            argv = ["checkout", "-b", args.ref]
        else:
            if starts_like_option(args.ref):
                return ToolResult.error(f"{args.ref!r} is not a branch, commit or tag name.")
            argv = ["checkout", args.ref, "--"]
        switched = await run_git(ctx.git_policy, *argv)
        if not switched.ok:
            return git_failure("git checkout", switched)
        return ToolResult(switched.message or f"Switched to {args.ref}.")


class GitPushInput(GitInput):
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
        "Push a local branch to the branch of the same name on a remote. Never forces: a "
        "rejected (non-fast-forward) push fails and says so. The workspace's repository is "
        "left as it is (no upstream or remote-tracking branch is recorded), and no hook of "
        "either repository runs. Credentials must already be configured; there is no prompt."
    )
    kind: ClassVar[ToolKind] = ToolKind.MUTATING
    Input: ClassVar[type[BaseModel]] = GitPushInput

    def detail(self, args: GitPushInput) -> str:
        return f"push {args.remote} {args.branch or '(current branch)'}"

    async def run(self, args: GitPushInput, ctx: ToolContext) -> ToolResult:
        if starts_like_option(args.remote):
            return ToolResult.error(f"{args.remote!r} is not a remote name.")
        remotes = await run_git(ctx.git_policy, "remote")
        if not remotes.ok:
            return git_failure("git remote", remotes)
        names = remotes.stdout.split()
        if args.remote not in names:
            known = ", ".join(names) if names else "none is configured"
            return ToolResult.error(f"There is no remote named {args.remote!r} (remotes: {known}).")
        branch = args.branch
        if branch is None:
            current = await run_git(ctx.git_policy, "symbolic-ref", "--quiet", "--short", "HEAD")
            branch = current.stdout.strip()
            if not current.ok or not branch:
                return ToolResult.error(
                    "HEAD is detached, so there is no current branch to push; pass `branch`."
                )
        problem = await check_branch_name(ctx.git_policy, branch)
        if problem:
            return ToolResult.error(problem)
        pushed = await remote_push.push(ctx.git_policy, args.remote, f"refs/heads/{branch}", branch)
        if isinstance(pushed, remote_push.PushRefused):
            return ToolResult.error(f"Not pushed: {pushed.reason}.")
        if not pushed.ok:
            return git_failure("git push", pushed, PUSH_TIMEOUT_SECONDS)
        return ToolResult(f"Pushed {branch} to {args.remote}.\n{pushed.message}".strip())
