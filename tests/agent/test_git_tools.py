"""The git tools and workspace set-up, against real repositories and a local bare remote."""

from __future__ import annotations

from pathlib import Path

import pytest

from plancord.agent.host_io.git_run import run_git
from plancord.agent.tools.base import ToolContext
from plancord.agent.tools.git import (
    GitDiffInput,
    GitDiffTool,
    GitLogTool,
    GitStatusTool,
    git_failure,
)
from plancord.agent.tools.git_write import (
    GitBranchInput,
    GitBranchTool,
    GitCheckoutInput,
    GitCheckoutTool,
    GitCommitInput,
    GitCommitTool,
    GitPushInput,
    GitPushTool,
)
from plancord.agent.workspace import init_workspace
from plancord.core.sandbox_policy import SandboxSettings
from plancord.sandbox import SandboxPolicy

from .conftest import GitRunner, MakeCtx, call

STATUS, DIFF, LOG = GitStatusTool(), GitDiffTool(), GitLogTool()
COMMIT, BRANCH, CHECKOUT, PUSH = GitCommitTool(), GitBranchTool(), GitCheckoutTool(), GitPushTool()


@pytest.fixture
async def remote(tmp_path: Path, workspace: Path, git: GitRunner) -> Path:
    bare = tmp_path / "remote.git"
    await git(tmp_path, "init", "--quiet", "--bare", str(bare))
    await git(workspace, "remote", "add", "origin", str(bare))
    return bare


# -- workspace -----------------------------------------------------------------------------


async def test_init_workspace_is_idempotent(tmp_path: Path, git: GitRunner) -> None:
    path = tmp_path / "agents" / "ada" / "workspace"
    await init_workspace(path, "ada")
    await init_workspace(path, "ada")
    assert (await git(path, "rev-list", "--count", "HEAD")).strip() == "1"
    assert (await git(path, "branch", "--show-current")).strip() == "main"
    assert (await git(path, "config", "user.name")).strip() == "plancord agent ada"
    assert (await git(path, "config", "user.email")).strip() == "ada@agents.plancord.invalid"


async def test_init_workspace_keeps_an_existing_repository(tmp_path: Path, git: GitRunner) -> None:
    path = tmp_path / "ws"
    path.mkdir()
    await git(path, "init", "--quiet", "-b", "trunk")
    await git(path, "config", "user.name", "Someone")
    await init_workspace(path, "ada")
    assert (await git(path, "config", "user.name")).strip() == "Someone"
    assert (await git(path, "branch", "--show-current")).strip() == "trunk"
    assert (await git(path, "rev-list", "--count", "HEAD")).strip() == "1"


# -- read-only -----------------------------------------------------------------------------


async def test_status_clean_and_dirty(ctx: ToolContext, workspace: Path) -> None:
    clean = await call(STATUS, ctx)
    assert clean.content == "## main\nWorking tree clean: nothing to commit."
    (workspace / "new.txt").write_text("x\n")
    dirty = await call(STATUS, ctx)
    assert dirty.content == "## main\n?? new.txt"


async def test_git_tools_do_not_escape_into_an_enclosing_repository(
    make_ctx: MakeCtx, tmp_path: Path, git: GitRunner
) -> None:
    outer = tmp_path / "outer"
    await init_workspace(outer, "outer")
    inner = outer / "plain"
    inner.mkdir()
    result = await call(STATUS, make_ctx(workspace=inner))
    assert result.is_error
    assert "not a git repository" in result.content


async def test_diff_unstaged_staged_and_by_path(
    ctx: ToolContext, workspace: Path, git: GitRunner
) -> None:
    assert (await call(DIFF, ctx)).content == "No unstaged changes."
    (workspace / "a.txt").write_text("one\n")
    (workspace / "b.txt").write_text("bee\n")
    await git(workspace, "add", ".")
    await git(workspace, "commit", "--quiet", "-m", "add files")
    (workspace / "a.txt").write_text("two\n")
    (workspace / "b.txt").write_text("buzz\n")
    unstaged = await call(DIFF, ctx)
    assert "-one\n+two" in unstaged.content
    assert "+buzz" in unstaged.content
    only_a = await call(DIFF, ctx, path="a.txt")
    assert "+two" in only_a.content
    assert "buzz" not in only_a.content
    assert (await call(DIFF, ctx, staged=True)).content == "No staged changes."
    await git(workspace, "add", "a.txt")
    staged = await call(DIFF, ctx, staged=True)
    assert "+two" in staged.content
    assert "buzz" not in staged.content
    outside = await call(DIFF, ctx, path="../elsewhere")
    assert outside.is_error


async def test_log_one_line_per_commit(ctx: ToolContext, workspace: Path, git: GitRunner) -> None:
    for n in range(3):
        (workspace / f"f{n}.txt").write_text(str(n))
        await git(workspace, "add", ".")
        await git(workspace, "commit", "--quiet", "-m", f"commit {n}")
    log = await call(LOG, ctx)
    lines = log.content.splitlines()
    assert len(lines) == 4
    assert lines[0].endswith("plancord agent ada: commit 2")
    assert lines[-1].endswith(": Initial commit")
    assert len((await call(LOG, ctx, max_count=2)).content.splitlines()) == 2
    by_path = await call(LOG, ctx, path="f1.txt")
    assert by_path.content.endswith(": commit 1")
    assert "\n" not in by_path.content


async def test_log_of_an_unborn_branch(make_ctx: MakeCtx, tmp_path: Path, git: GitRunner) -> None:
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    await git(fresh, "init", "--quiet", "-b", "main")
    result = await call(LOG, make_ctx(workspace=fresh))
    assert not result.is_error
    assert result.content == "No commits yet on this branch."


# -- commit --------------------------------------------------------------------------------


async def test_commit_everything(ctx: ToolContext, workspace: Path, git: GitRunner) -> None:
    (workspace / "a.txt").write_text("a\n")
    (workspace / "sub").mkdir()
    (workspace / "sub" / "b.txt").write_text("b\n")
    result = await call(COMMIT, ctx, message="Add a and b\n\nWith a body.")
    assert not result.is_error
    assert "Add a and b" in result.content
    assert "2 files changed" in result.content
    assert (await git(workspace, "status", "--porcelain")).strip() == ""
    body = await git(workspace, "log", "-1", "--format=%B")
    assert body.strip() == "Add a and b\n\nWith a body."


async def test_commit_only_the_given_paths(
    ctx: ToolContext, workspace: Path, git: GitRunner
) -> None:
    (workspace / "keep.txt").write_text("k\n")
    (workspace / "later.txt").write_text("l\n")
    result = await call(COMMIT, ctx, message="Only keep", paths=["keep.txt"])
    assert not result.is_error
    files = await git(workspace, "show", "--name-only", "--format=", "HEAD")
    assert files.split() == ["keep.txt"]
    assert (await git(workspace, "status", "--porcelain")).strip() == "?? later.txt"


async def test_commit_with_nothing_to_commit_is_an_error(ctx: ToolContext) -> None:
    result = await call(COMMIT, ctx, message="Nothing")
    assert result.is_error
    assert result.content.startswith("Nothing to commit")


async def test_commit_message_that_looks_like_an_option(
    ctx: ToolContext, workspace: Path, git: GitRunner
) -> None:
    (workspace / "x.txt").write_text("x")
    result = await call(COMMIT, ctx, message="--amend")
    assert not result.is_error
    assert (await git(workspace, "rev-list", "--count", "HEAD")).strip() == "2"
    assert (await git(workspace, "log", "-1", "--format=%s")).strip() == "--amend"


async def test_commit_refuses_paths_outside(ctx: ToolContext) -> None:
    result = await call(COMMIT, ctx, message="m", paths=["../x"])
    assert result.is_error
    assert "outside the workspace" in result.content


# -- branch and checkout -------------------------------------------------------------------


async def test_branch_then_checkout(ctx: ToolContext, workspace: Path, git: GitRunner) -> None:
    created = await call(BRANCH, ctx, name="feature/x")
    assert not created.is_error
    assert "you are still on main" in created.content
    assert (await git(workspace, "branch", "--show-current")).strip() == "main"
    switched = await call(CHECKOUT, ctx, ref="feature/x")
    assert not switched.is_error
    assert "feature/x" in switched.content
    assert (await git(workspace, "branch", "--show-current")).strip() == "feature/x"


async def test_branch_from_a_start_point(ctx: ToolContext, workspace: Path, git: GitRunner) -> None:
    first = (await git(workspace, "rev-parse", "HEAD")).strip()
    (workspace / "a").write_text("a")
    await git(workspace, "add", ".")
    await git(workspace, "commit", "--quiet", "-m", "second")
    result = await call(BRANCH, ctx, name="old", start_point=first[:10])
    assert not result.is_error
    assert (await git(workspace, "rev-parse", "old")).strip() == first


@pytest.mark.parametrize("name", ["-D", "+main", "bad..name", "has space", "ends.lock", "@{-1}"])
async def test_branch_names_are_validated(
    ctx: ToolContext, workspace: Path, git: GitRunner, name: str
) -> None:
    result = await call(BRANCH, ctx, name=name)
    assert result.is_error
    assert "not a valid branch name" in result.content
    assert (await git(workspace, "branch", "--format=%(refname:short)")).split() == ["main"]


async def test_branch_errors_from_git(ctx: ToolContext) -> None:
    exists = await call(BRANCH, ctx, name="main")
    assert exists.is_error
    assert "already exists" in exists.content
    bad_start = await call(BRANCH, ctx, name="x", start_point="-f")
    assert bad_start.is_error
    unknown = await call(BRANCH, ctx, name="y", start_point="no-such-ref")
    assert unknown.is_error


async def test_checkout_create_and_errors(
    ctx: ToolContext, workspace: Path, git: GitRunner
) -> None:
    created = await call(CHECKOUT, ctx, ref="topic", create=True)
    assert not created.is_error
    assert (await git(workspace, "branch", "--show-current")).strip() == "topic"
    unknown = await call(CHECKOUT, ctx, ref="nowhere")
    assert unknown.is_error
    assert "git checkout failed" in unknown.content
    option = await call(CHECKOUT, ctx, ref="--orphan")
    assert option.is_error
    assert (await call(CHECKOUT, ctx, ref="bad..name", create=True)).is_error


# -- push ----------------------------------------------------------------------------------


@pytest.fixture
def pushing(make_ctx: MakeCtx, remote: Path) -> ToolContext:
    """A context whose sandbox shares the bare remote, as an operator's shared_paths would."""
    return make_ctx(sandbox_settings=SandboxSettings(shared=(remote,)))


async def test_a_remote_the_operator_did_not_share_is_out_of_reach(
    ctx: ToolContext, workspace: Path, remote: Path, git: GitRunner
) -> None:
    result = await call(PUSH, ctx)
    assert result.is_error
    assert "is outside the directories shared with the agent" in result.content
    assert (await git(remote, "branch", "--format=%(refname:short)")).split() == []


async def test_push_to_a_bare_remote(
    pushing: ToolContext, workspace: Path, remote: Path, git: GitRunner
) -> None:
    ctx = pushing
    result = await call(PUSH, ctx)
    assert not result.is_error, result.content
    assert result.content.startswith("Pushed main to origin.")
    local = (await git(workspace, "rev-parse", "main")).strip()
    assert (await git(remote, "rev-parse", "main")).strip() == local
    assert (await git(workspace, "for-each-ref", "refs/remotes")).strip() == ""
    assert "branch.main.remote" not in await git(workspace, "config", "--list")


async def test_push_a_named_branch(
    pushing: ToolContext, workspace: Path, remote: Path, git: GitRunner
) -> None:
    ctx = pushing
    await git(workspace, "branch", "topic")
    result = await call(PUSH, ctx, remote="origin", branch="topic")
    assert not result.is_error, result.content
    assert (await git(remote, "branch", "--format=%(refname:short)")).split() == ["topic"]


async def test_push_never_forces(
    pushing: ToolContext, workspace: Path, remote: Path, git: GitRunner
) -> None:
    ctx = pushing
    assert not (await call(PUSH, ctx)).is_error
    pushed = (await git(remote, "rev-parse", "main")).strip()
    await git(workspace, "commit", "--quiet", "--amend", "--allow-empty", "-m", "rewritten")
    result = await call(PUSH, ctx)
    assert result.is_error
    assert "rejected" in result.content
    assert (await git(remote, "rev-parse", "main")).strip() == pushed
    forced = await call(PUSH, ctx, branch="+main")
    assert forced.is_error
    assert (await git(remote, "rev-parse", "main")).strip() == pushed


async def test_push_errors(
    pushing: ToolContext, workspace: Path, remote: Path, git: GitRunner
) -> None:
    ctx = pushing
    no_remote = await call(PUSH, ctx, remote="upstream")
    assert no_remote.is_error
    assert "no remote named 'upstream' (remotes: origin)" in no_remote.content
    assert (await call(PUSH, ctx, remote="--mirror")).is_error
    assert (await call(PUSH, ctx, branch="missing")).is_error
    await git(workspace, "checkout", "--quiet", "--detach")
    detached = await call(PUSH, ctx)
    assert detached.is_error
    assert "detached" in detached.content


def test_details_name_the_action() -> None:
    assert COMMIT.detail(GitCommitInput(message="Fix it\n\nbody")) == "commit Fix it"
    assert PUSH.detail(GitPushInput(branch="main")) == "push origin main"
    assert BRANCH.detail(GitBranchInput(name="x")) == "branch x"
    assert CHECKOUT.detail(GitCheckoutInput(ref="x", create=True)) == "checkout -b x"
    assert DIFF.detail(GitDiffInput(staged=True, path="src")) == "diff --staged src"


async def test_a_hanging_git_is_stopped_at_its_timeout(workspace: Path) -> None:
    policy = SandboxPolicy.executing(workspace)
    output = await run_git(policy, "-c", "alias.hang=!sleep 30", "hang", timeout=0.5)
    assert output.timed_out
    assert not output.ok
    failure = git_failure("git hang", output, 0.5)
    assert failure.is_error
    assert failure.content == "git hang timed out after 0.5 s and was stopped."
