"""An approved plan's branch, with real git in a sandbox: start from the reviewed tree, a
commit per step, merge, discard, roll back, push."""

from __future__ import annotations

import os
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from plancord.agent.execution.branch import BaseMoved, BranchRecord, ExecutionBranch
from plancord.agent.execution.branch_reading import BranchReading, FileChange
from plancord.agent.execution.host_git import BranchError
from plancord.sandbox import SandboxPolicy

from .test_observe import tree_state


def git(root: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t", *args],
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout.strip()


@pytest.fixture
def here(tmp_path: Path) -> Path:
    return tmp_path.resolve()


@pytest.fixture
def workspace(here: Path) -> Path:
    root = here / "workspace"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / ".gitignore").write_text("*.log\n")
    (root / "app.py").write_text("one\ntwo\n")
    (root / "tool.sh").write_text("#!/bin/sh\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    (root / "app.py").write_text("one\ntwo\nstaged\n")
    git(root, "add", "app.py")
    (root / "app.py").write_text("one\ntwo\nstaged\nunstaged\n")
    (root / "notes.txt").write_text("untracked\n")
    (root / "debug.log").write_text("ignored\n")
    return root


@pytest.fixture
def branches(workspace: Path) -> ExecutionBranch:
    return ExecutionBranch(SandboxPolicy.executing(workspace).for_host_git())


@pytest.fixture
def reading(workspace: Path) -> BranchReading:
    return BranchReading(SandboxPolicy.executing(workspace).for_host_git())


def whole_state(root: Path) -> tuple[dict[str, tuple[str, int, bytes]], str, str, str]:
    """The working tree, the staged tree, HEAD's branch and the base commit."""
    return (
        tree_state(root),
        git(root, "write-tree"),
        git(root, "symbolic-ref", "HEAD"),
        git(root, "rev-parse", "main"),
    )


async def test_start_commits_the_reviewed_tree_and_keeps_the_base(
    branches: ExecutionBranch, workspace: Path
) -> None:
    files_before = tree_state(workspace)
    base = git(workspace, "rev-parse", "main")
    record = await branches.start("p1", 2)
    assert record.branch == "plancord/p1-v2" and record.base == "main"
    assert git(workspace, "rev-parse", "main") == base == record.base_commit
    assert git(workspace, "symbolic-ref", "HEAD") == "refs/heads/plancord/p1-v2"
    assert tree_state(workspace) == files_before
    assert git(workspace, "status", "--porcelain") == ""
    assert git(workspace, "show", f"{record.reviewed_commit}:notes.txt") == "untracked"
    assert git(workspace, "log", "-1", "--format=%an <%ae>", record.reviewed_commit) == (
        "plancord <plancord@plancord.invalid>"
    )


@pytest.mark.parametrize(
    ("setup", "reason"),
    [
        (lambda root: git(root, "checkout", "-q", "--detach"), "detached"),
        (lambda root: (root / ".git" / "MERGE_HEAD").write_text("x\n"), "merge"),
        (lambda root: (root / ".git" / "rebase-merge").mkdir(), "rebase"),
        (lambda root: (root / ".git" / "CHERRY_PICK_HEAD").write_text("x\n"), "cherry-pick"),
    ],
)
async def test_workspaces_that_cannot_take_a_branch_are_refused(
    branches: ExecutionBranch, workspace: Path, setup: object, reason: str
) -> None:
    setup(workspace)  # type: ignore[operator]
    assert reason in (await branches.refusal() or "")
    with pytest.raises(BranchError, match=reason):
        await branches.start("p1", 1)
    assert "plancord/p1-v1" not in git(workspace, "branch", "--list")


async def test_a_bare_repository_is_refused(here: Path) -> None:
    bare = here / "bare.git"
    git(here, "init", "-q", "--bare", str(bare))
    branches = ExecutionBranch(SandboxPolicy.executing(bare).for_host_git())
    assert await branches.refusal() == "the workspace is a bare repository"


class Stepped:
    """The step commits a test made, as the host records them (by id, in order)."""

    def __init__(self, branches: ExecutionBranch, record: BranchRecord) -> None:
        self.branches = branches
        self.record = record
        self.recorded: list[tuple[int, str]] = []

    async def commit(self, step: int, message: str) -> str | None:
        parent = self.recorded[-1][1] if self.recorded else self.record.reviewed_commit
        commit = await self.branches.commit_step(self.record, message, parent)
        if commit is not None:
            self.recorded.append((step, commit))
        return commit

    def pinned(self) -> BranchRecord:
        tip = self.recorded[-1][1] if self.recorded else self.record.reviewed_commit
        return replace(self.record, result_commit=tip)


async def started(branches: ExecutionBranch, workspace: Path) -> Stepped:
    stepped = Stepped(branches, await branches.start("p1", 1))
    (workspace / "app.py").write_text("one\nTWO\nstaged\nunstaged\n")
    (workspace / "new.py").write_text("a\nb\nc\n")
    await stepped.commit(1, "Edit the app")
    (workspace / "tool.sh").chmod(0o755)
    (workspace / "notes.txt").unlink()
    (workspace / "blob.bin").write_bytes(b"\x00\x01\x02")
    await stepped.commit(2, "Tidy up\n\nthe notes")
    return stepped


async def test_steps_list_their_files_with_line_counts_and_no_empty_commit(
    branches: ExecutionBranch, reading: BranchReading, workspace: Path
) -> None:
    stepped = await started(branches, workspace)
    tip = git(workspace, "rev-parse", "HEAD")
    assert await stepped.commit(3, "Nothing") is None
    assert git(workspace, "rev-parse", "HEAD") == tip
    steps = await reading.steps(stepped.recorded)
    assert [(s.step, s.commit) for s in steps] == stepped.recorded
    assert steps[0].files == (FileChange("app.py", 1, 1), FileChange("new.py", 3, 0))
    assert set(steps[1].files) == {
        FileChange("blob.bin", None, None),
        FileChange("notes.txt", 0, 1),
        FileChange("tool.sh", 0, 0),
    }
    assert git(workspace, "log", "-1", "--format=%an", "HEAD") == "plancord"
    assert git(workspace, "log", "-1", "--format=%B", "HEAD") == "Tidy up\n\nthe notes"


async def test_a_step_folds_in_the_commits_the_agent_made(
    branches: ExecutionBranch, reading: BranchReading, workspace: Path
) -> None:
    stepped = Stepped(branches, await branches.start("p1", 1))
    (workspace / "a.txt").write_text("a\n")
    git(workspace, "add", "a.txt")
    git(workspace, "commit", "-qm", "step 2: forged")
    (workspace / "b.txt").write_text("b\n")
    one = await stepped.commit(1, "Add a and b")
    assert one is not None
    assert git(workspace, "rev-list", f"{stepped.record.reviewed_commit}..HEAD") == one
    assert git(workspace, "log", "-1", "--format=%s", one) == "Add a and b"
    [step] = await reading.steps(stepped.recorded)
    assert step.step == 1 and {f.path for f in step.files} == {"a.txt", "b.txt"}


async def test_the_full_diff_is_written_whatever_its_size(
    branches: ExecutionBranch, reading: BranchReading, workspace: Path
) -> None:
    stepped = Stepped(branches, await branches.start("p1", 1))
    (workspace / "big.txt").write_text("".join(f"line {n}\n" for n in range(600_000)))
    await stepped.commit(1, "Big")
    async with reading.diff_file(stepped.pinned()) as diff:
        text = diff.read_text()
        assert diff.stat().st_size > 5_000_000
        assert not diff.is_relative_to(workspace)
        assert diff.parent.stat().st_mode & 0o777 == 0o700
    assert not diff.exists()
    # From the base: the fixture's uncommitted work comes first, then the step's.
    assert "diff --git a/big.txt b/big.txt\n" in text
    assert "\n+line 599999\n" in text


async def test_merge_fast_forwards_to_the_pinned_commit(
    branches: ExecutionBranch, workspace: Path
) -> None:
    record = (await started(branches, workspace)).pinned()
    files = tree_state(workspace)
    merged = await branches.merge(record)
    assert merged == record.result_commit == git(workspace, "rev-parse", "HEAD")
    assert git(workspace, "symbolic-ref", "HEAD") == "refs/heads/main"
    assert git(workspace, "rev-parse", "main") == git(workspace, "rev-parse", record.branch)
    assert tree_state(workspace) == files
    assert git(workspace, "status", "--porcelain") == ""


async def test_merge_takes_the_pinned_commit_not_a_later_one(
    branches: ExecutionBranch, workspace: Path
) -> None:
    record = (await started(branches, workspace)).pinned()
    (workspace / "later.txt").write_text("not reviewed\n")
    git(workspace, "add", "later.txt")
    git(workspace, "commit", "-qm", "commit this too")
    later = git(workspace, "rev-parse", "HEAD")
    merged = await branches.merge(record)
    assert merged == record.result_commit == git(workspace, "rev-parse", "main")
    assert git(workspace, "symbolic-ref", "HEAD") == "refs/heads/main"
    assert not (workspace / "later.txt").exists()
    assert git(workspace, "rev-parse", record.branch) == later
    assert git(workspace, "status", "--porcelain") == ""


def move_base(workspace: Path, path: str, text: str) -> None:
    """Another commit lands on main, without touching the working tree."""
    blob = subprocess.run(
        ["git", "-C", str(workspace), "hash-object", "-w", "--stdin"],
        input=text,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    index = workspace / ".git" / "other.index"
    env = {**os.environ, "GIT_INDEX_FILE": str(index)}
    run = lambda *a: subprocess.run(  # noqa: E731
        ["git", "-C", str(workspace), "-c", "user.name=o", "-c", "user.email=o@o", *a],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    run("read-tree", "main")
    run("update-index", "--add", "--cacheinfo", f"100644,{blob},{path}")
    tree = run("write-tree")
    commit = run("commit-tree", tree, "-p", "main", "-m", "moved")
    run("update-ref", "refs/heads/main", commit)


async def test_merge_refuses_and_discard_keeps_the_base_where_it_moved(
    branches: ExecutionBranch, workspace: Path
) -> None:
    record = (await started(branches, workspace)).pinned()
    move_base(workspace, "elsewhere.txt", "from main\n")
    moved = git(workspace, "rev-parse", "main")
    before = whole_state(workspace)
    with pytest.raises(BaseMoved, match="`main` moved outside plancord"):
        await branches.merge(record)
    assert whole_state(workspace) == before
    done = await branches.discard(record)
    assert done.moved_to == moved and done.kept_branch is None
    assert git(workspace, "rev-parse", "main") == moved
    assert git(workspace, "symbolic-ref", "HEAD") == "refs/heads/main"
    assert (workspace / "elsewhere.txt").read_text() == "from main\n"
    assert "plancord/" not in git(workspace, "branch", "--list")


async def test_discard_gives_back_exactly_the_reviewed_state(
    branches: ExecutionBranch, workspace: Path
) -> None:
    reviewed = whole_state(workspace)
    record = (await started(branches, workspace)).pinned()
    (workspace / "stray.txt").write_text("uncommitted work\n")
    await branches.discard(record)
    assert whole_state(workspace) == reviewed
    assert git(workspace, "status", "--porcelain") == "MM app.py\n?? notes.txt".strip()
    assert "plancord/" not in git(workspace, "branch", "--list")


async def test_roll_back_to_before_a_step(branches: ExecutionBranch, workspace: Path) -> None:
    stepped = Stepped(branches, await branches.start("p1", 1))
    after_reviewed = tree_state(workspace)
    (workspace / "a.txt").write_text("a\n")
    one = await stepped.commit(1, "A")
    after_one = tree_state(workspace)
    (workspace / "b.txt").write_text("b\n")
    (workspace / "app.py").unlink()
    await stepped.commit(2, "B")
    assert await branches.roll_back(stepped.record, stepped.recorded, 2) == 1
    assert tree_state(workspace) == after_one
    assert git(workspace, "rev-parse", "HEAD") == one
    assert await branches.roll_back(stepped.record, stepped.recorded[:1], 1) == 0
    assert tree_state(workspace) == after_reviewed
    with pytest.raises(BranchError, match="Step 1 has no commit"):
        await branches.roll_back(stepped.record, [], 1)


async def test_push_sends_the_pinned_commit(here: Path, workspace: Path) -> None:
    remote = here / "remote.git"
    git(here, "init", "-q", "--bare", str(remote))
    git(workspace, "remote", "add", "origin", str(remote))
    branches = ExecutionBranch(SandboxPolicy.executing(workspace, shared=(remote,)).for_host_git())
    record = (await started(branches, workspace)).pinned()
    (workspace / "later.txt").write_text("not reviewed\n")
    git(workspace, "add", "later.txt")
    git(workspace, "commit", "-qm", "later")
    await branches.push(record, "origin")
    assert git(remote, "rev-parse", record.branch) == record.result_commit
    with pytest.raises(BranchError, match="not a remote"):
        await branches.push(record, "--upload-pack=x")


async def test_a_step_is_committed_only_on_the_branch(
    branches: ExecutionBranch, workspace: Path
) -> None:
    record = await branches.start("p1", 1)
    git(workspace, "checkout", "-q", "main")
    with pytest.raises(BranchError, match="not on plancord/p1-v1"):
        await branches.commit_step(record, "A", record.reviewed_commit)
