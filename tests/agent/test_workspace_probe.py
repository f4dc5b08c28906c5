"""The reviewed-tree fingerprint covers the whole change: any size, untracked files by
content, ignored files by name, size and mtime."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from plancord.agent.workspace_probe import tree_fingerprint
from plancord.sandbox import SandboxPolicy


def git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t", *args],
        check=True,
        capture_output=True,
    )


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path.resolve() / "workspace"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / ".gitignore").write_text("*.log\n")
    (root / "big.txt").write_text("x" * 6_000_000)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    return root


async def fingerprint(root: Path) -> str:
    found = await tree_fingerprint(SandboxPolicy.read_only(root))
    assert found is not None
    return found


async def test_a_clean_tree_and_a_stable_dirty_one(workspace: Path) -> None:
    assert (await fingerprint(workspace)).endswith(" clean")
    (workspace / "new.txt").write_text("a\n")
    first = await fingerprint(workspace)
    assert " dirty:" in first
    assert await fingerprint(workspace) == first


def same_size_rewrite(path: Path, text: str) -> None:
    before = path.stat()
    path.write_text(text)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


async def test_an_untracked_file_counts_by_content(workspace: Path) -> None:
    (workspace / "new.txt").write_text("aaaa\n")
    first = await fingerprint(workspace)
    same_size_rewrite(workspace / "new.txt", "bbbb\n")
    assert await fingerprint(workspace) != first


async def test_a_change_past_the_first_megabytes_counts(workspace: Path) -> None:
    (workspace / "big.txt").write_text("y" + "x" * 5_999_999)
    first = await fingerprint(workspace)
    (workspace / "big.txt").write_text("y" + "x" * 5_999_998 + "z")
    assert await fingerprint(workspace) != first


async def test_ignored_files_count_by_name_size_and_mtime(workspace: Path) -> None:
    log = workspace / "build.log"
    log.write_text("one\n")
    first = await fingerprint(workspace)
    os.utime(log, ns=(0, 1_000_000_000))
    second = await fingerprint(workspace)
    assert second != first
    log.write_text("three\n")
    os.utime(log, ns=(0, 1_000_000_000))
    assert await fingerprint(workspace) not in (first, second)
    log.rename(workspace / "other.log")
    assert await fingerprint(workspace) not in (first, second)


async def test_modes_links_and_staging_count(workspace: Path) -> None:
    (workspace / "run.sh").write_text("#!/bin/sh\n")
    (workspace / "link").symlink_to("big.txt")
    states = [await fingerprint(workspace)]
    (workspace / "run.sh").chmod(0o755)
    states.append(await fingerprint(workspace))
    (workspace / "link").unlink()
    (workspace / "link").symlink_to("run.sh")
    states.append(await fingerprint(workspace))
    git(workspace, "add", "run.sh")
    states.append(await fingerprint(workspace))
    (workspace / "big.txt").chmod(0o755)
    states.append(await fingerprint(workspace))
    assert len(set(states)) == len(states)


async def test_not_a_repository(tmp_path: Path) -> None:
    assert await tree_fingerprint(SandboxPolicy.read_only(tmp_path)) is None
