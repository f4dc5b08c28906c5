"""Discard gives back the ignored files too, with real git in a real sandbox: what execution
changed, created or deleted among ignored files and directories is put back byte for byte
(content, mode, symlinks, mtimes), also by a fresh object after a restart."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import pytest

from plancord.agent.execution.branch import BranchRecord, ExecutionBranch
from plancord.agent.execution.host_git import BranchError
from plancord.agent.execution.ignored import KeepLimits
from plancord.sandbox import SandboxPolicy, run_sandboxed

from .test_branch import git
from .test_observe import tree_state


@pytest.fixture
def here(tmp_path: Path) -> Path:
    return tmp_path.resolve()


@pytest.fixture
def workspace(here: Path) -> Path:
    root = here / "workspace"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / ".gitignore").write_text(".env\nbuild/\ncache/\ndist/\n*.log\n")
    (root / "app.py").write_text("app\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    (root / "app.py").write_text("app\nreviewed, uncommitted\n")
    (root / "notes.txt").write_text("untracked\n")
    (root / ".env").write_text("TOKEN=reviewed\n")
    (root / ".env").chmod(0o600)
    (root / "debug.log").write_bytes(bytes(range(256)))
    (root / "build" / "sub").mkdir(parents=True)
    (root / "build" / "sub" / "old.o").write_bytes(b"\x00old")
    (root / "build" / "run.sh").write_text("#!/bin/sh\n")
    (root / "build" / "run.sh").chmod(0o750)
    (root / "build" / "latest").symlink_to("sub/old.o")
    (root / "build" / "empty").mkdir()
    (root / "cache").mkdir()
    (root / "cache" / "entry").write_text("cached\n")
    os.utime(root / ".env", ns=(1_000_000_000, 1_000_000_000))
    return root


def kept_under(here: Path) -> Path:
    return here / "home" / "kept"


def branches(workspace: Path, here: Path, limits: KeepLimits | None = None) -> ExecutionBranch:
    policy = SandboxPolicy.executing(workspace).for_host_git()
    return ExecutionBranch(policy, kept=kept_under(here), limits=limits)


def full_state(root: Path) -> tuple[dict[str, tuple[str, int, bytes]], dict[str, int], str, str]:
    """The working tree (with the mtimes of ignored files), the index and HEAD's branch."""
    mtimes = {
        p: (root / p).lstat().st_mtime_ns
        for p in tree_state(root)
        if p.startswith((".env", "debug.log", "build/", "cache/", "dist/"))
        and not (root / p).is_dir()
    }
    return tree_state(root), mtimes, git(root, "write-tree"), git(root, "symbolic-ref", "HEAD")


async def in_sandbox(workspace: Path, script: str) -> None:
    policy = SandboxPolicy.executing(workspace)
    result = await run_sandboxed(["bash", "-c", script], policy, timeout=30)
    assert result.exit_code == 0, result.stderr


EXECUTION = """
set -e
echo 'TOKEN=stolen' > .env && chmod 644 .env
rm build/sub/old.o && echo new > build/sub/new.o
ln -sfn /etc/passwd build/latest
chmod 700 build/run.sh && rmdir build/empty
rm -rf cache
mkdir -p dist/deep && echo shipped > dist/deep/app.whl
echo more >> debug.log
echo 'print(1)' > app.py
mkdir -p build/locked && touch build/locked/planted && chmod 500 build/locked build/sub
"""


async def test_discard_puts_back_ignored_files_and_directories_after_a_restart(
    workspace: Path, here: Path
) -> None:
    reviewed = full_state(workspace)
    record = await branches(workspace, here).start("p1", 1)
    kept = kept_under(here) / "p1-v1"
    assert kept.stat().st_mode & 0o777 == 0o700
    await in_sandbox(workspace, EXECUTION)
    await branches(workspace, here).commit_step(record, "Change things", record.reviewed_commit)

    # A fresh object, as after a restart, reads what was kept from the data directory.
    await branches(workspace, here).discard(record)

    assert full_state(workspace) == reviewed
    assert not kept.exists()
    assert git(workspace, "rev-parse", "main") == record.base_commit


async def test_discard_without_a_step_commit_also_restores(workspace: Path, here: Path) -> None:
    reviewed = full_state(workspace)
    branch = branches(workspace, here)
    record = await branch.start("p1", 1)
    await in_sandbox(workspace, EXECUTION)
    await branch.discard(record)
    assert full_state(workspace) == reviewed


async def test_an_ignored_directory_turned_into_a_link_out_is_not_written_through(
    workspace: Path, here: Path
) -> None:
    outside = here / "outside"
    outside.mkdir()
    reviewed = full_state(workspace)
    branch = branches(workspace, here)
    record = await branch.start("p1", 1)
    (workspace / "build").rename(here / "moved-build")
    (workspace / "build").symlink_to(outside)
    (workspace / "cache").rename(here / "moved-cache")
    (workspace / "cache").symlink_to(outside / "cache-target")
    await branch.discard(record)
    assert list(outside.iterdir()) == []
    assert full_state(workspace) == reviewed


async def test_merge_drops_what_was_kept(workspace: Path, here: Path) -> None:
    branch = branches(workspace, here)
    record = await branch.start("p1", 1)
    assert (kept_under(here) / "p1-v1").is_dir()
    await in_sandbox(workspace, "echo changed > app.py")
    commit = await branch.commit_step(record, "Change app", record.reviewed_commit)
    await branch.merge(replace(record, result_commit=commit))
    assert not (kept_under(here) / "p1-v1").exists()
    assert (workspace / ".env").read_text() == "TOKEN=reviewed\n"


@pytest.mark.parametrize(
    ("limits", "why"),
    [
        (KeepLimits(max_bytes=100), "ignored files hold 292 bytes; an execution keeps at most 100"),
        (KeepLimits(max_paths=5), "holds 10 ignored paths; an execution keeps at most 5"),
    ],
)
async def test_too_much_to_keep_refuses_the_start_and_changes_nothing(
    workspace: Path, here: Path, limits: KeepLimits, why: str
) -> None:
    before = full_state(workspace)
    base = git(workspace, "rev-parse", "main")
    with pytest.raises(BranchError, match=why):
        await branches(workspace, here, limits).start("p1", 1)
    assert full_state(workspace) == before
    assert git(workspace, "rev-parse", "main") == base
    assert git(workspace, "branch", "--list", "plancord/*") == ""
    assert not (kept_under(here) / "p1-v1").exists()


async def test_without_a_place_to_keep_discard_restores_what_git_keeps(
    workspace: Path,
) -> None:
    branch = ExecutionBranch(SandboxPolicy.executing(workspace).for_host_git())
    record: BranchRecord = await branch.start("p1", 1)
    await in_sandbox(workspace, "echo 'print(1)' > app.py && echo x > .env")
    await branch.discard(record)
    assert (workspace / "app.py").read_text() == "app\nreviewed, uncommitted\n"
    assert (workspace / ".env").read_text() == "x\n"
