"""The host sees what a call changed, and puts it back byte for byte."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from plancord.agent.execution.observe import (
    Effects,
    ObserveLimits,
    RestoreFailed,
    Unobserved,
    WorkspaceObserver,
)
from plancord.agent.execution.snapshot import ChangeKind, PathChange


def tree_state(root: Path) -> dict[str, tuple[str, int, bytes]]:
    """Every path outside .git: kind, permission bits, content or link target."""
    state: dict[str, tuple[str, int, bytes]] = {}
    for directory, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not (directory == str(root) and d == ".git")]
        for name in [*dirs, *files]:
            path = Path(directory, name)
            relative = path.relative_to(root).as_posix()
            info = path.lstat()
            if path.is_symlink():
                state[relative] = ("link", 0, os.readlink(path).encode())
            elif path.is_dir():
                state[relative] = ("dir", info.st_mode & 0o7777, b"")
            else:
                state[relative] = ("file", info.st_mode & 0o7777, path.read_bytes())
    return state


def append(path: Path, text: str) -> None:
    with path.open("a") as through:
        through.write(text)


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "workspace"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("print('hi')\n")
    (root / "README.md").write_text("readme\n")
    (root / "tool.sh").write_text("#!/bin/sh\n")
    (root / "data.bin").write_bytes(bytes(range(256)) * 40)
    (root / "link").symlink_to("README.md")
    (root / ".gitignore").write_text("build/\n")
    (root / "build").mkdir()
    (root / "build" / "out.o").write_bytes(b"\x00\x01")
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x")
    (root / "untracked.txt").write_text("untracked\n")
    return root


@pytest.fixture(params=[True, False], ids=["kernel-watch", "walk-only"])
async def observer(
    workspace: Path, tmp_path: Path, request: pytest.FixtureRequest
) -> AsyncIterator[WorkspaceObserver]:
    observer = WorkspaceObserver(workspace, tmp_path / "stash", kernel_watch=request.param)
    assert await observer.start() is None
    yield observer
    observer.close()


async def effects_of(observer: WorkspaceObserver) -> Effects:
    effects = await observer.observe()
    assert isinstance(effects, Effects)
    return effects


async def test_nothing_changed(observer: WorkspaceObserver) -> None:
    assert (await effects_of(observer)).empty


async def test_tracked_untracked_and_ignored_changes(
    observer: WorkspaceObserver, workspace: Path
) -> None:
    (workspace / "src" / "app.py").write_text("print('bye')\n")
    (workspace / "untracked.txt").unlink()
    (workspace / "build" / "out.o").write_bytes(b"\x00\x02")
    (workspace / "new.txt").write_text("new\n")
    effects = await effects_of(observer)
    assert effects.changes == (
        PathChange("build/out.o", ChangeKind.MODIFIED),
        PathChange("new.txt", ChangeKind.ADDED),
        PathChange("src/app.py", ChangeKind.MODIFIED),
        PathChange("untracked.txt", ChangeKind.DELETED),
    )


async def test_same_size_rewrite_within_the_clock_tick_is_seen(
    observer: WorkspaceObserver, workspace: Path
) -> None:
    target = workspace / "README.md"
    before = target.stat()
    target.write_text("README\n")
    os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert (await effects_of(observer)).paths == ("README.md",)


async def test_rename_mode_and_symlinks(observer: WorkspaceObserver, workspace: Path) -> None:
    (workspace / "src" / "app.py").rename(workspace / "src" / "main.py")
    (workspace / "tool.sh").chmod(0o755)
    append(workspace / "link", "via link\n")
    (workspace / "outside").symlink_to("/etc/passwd")
    effects = await effects_of(observer)
    assert effects.changes == (
        PathChange("README.md", ChangeKind.MODIFIED),
        PathChange("outside", ChangeKind.ADDED),
        PathChange("src/main.py", ChangeKind.RENAMED, "src/app.py"),
        PathChange("tool.sh", ChangeKind.MODE),
    )
    assert effects.paths == ("README.md", "outside", "src/app.py", "src/main.py", "tool.sh")


async def test_git_state_is_reported_apart(observer: WorkspaceObserver, workspace: Path) -> None:
    git(workspace, "add", "untracked.txt")
    effects = await effects_of(observer)
    assert effects.changes == ()
    assert ".git/index" in effects.git_state


async def test_restore_puts_every_kind_of_change_back(
    observer: WorkspaceObserver, workspace: Path
) -> None:
    reviewed = tree_state(workspace)
    (workspace / "src" / "app.py").rename(workspace / "src" / "main.py")
    (workspace / "README.md").write_text("overwritten\n")
    (workspace / "data.bin").write_bytes(b"short")
    (workspace / "tool.sh").chmod(0o700)
    (workspace / "untracked.txt").unlink()
    (workspace / "build" / "out.o").unlink()
    (workspace / "link").unlink()
    (workspace / "link").symlink_to("/etc/passwd")
    (workspace / "fresh" / "deep").mkdir(parents=True)
    (workspace / "fresh" / "deep" / "x.txt").write_text("x")
    (workspace / "src").chmod(0o700)
    effects = await effects_of(observer)
    await observer.restore(effects.paths)
    assert tree_state(workspace) == reviewed
    assert (await effects_of(observer)).empty


async def test_restore_only_the_chosen_paths(observer: WorkspaceObserver, workspace: Path) -> None:
    (workspace / "README.md").write_text("kept\n")
    (workspace / "new.txt").write_text("denied\n")
    await effects_of(observer)
    await observer.restore(["new.txt"])
    assert not (workspace / "new.txt").exists()
    assert (workspace / "README.md").read_text() == "kept\n"


async def test_restore_goes_back_one_call_only(
    observer: WorkspaceObserver, workspace: Path
) -> None:
    (workspace / "README.md").write_text("first call\n")
    await effects_of(observer)
    (workspace / "README.md").write_text("second call\n")
    effects = await effects_of(observer)
    await observer.restore(effects.paths)
    assert (workspace / "README.md").read_text() == "first call\n"


async def test_restore_before_any_observation_fails(observer: WorkspaceObserver) -> None:
    with pytest.raises(RestoreFailed, match="no earlier look"):
        await observer.restore(["README.md"])


async def test_too_many_paths_is_unobserved(workspace: Path, tmp_path: Path) -> None:
    observer = WorkspaceObserver(workspace, tmp_path / "stash", ObserveLimits(max_paths=5))
    refused = await observer.start()
    assert isinstance(refused, Unobserved) and "more than 5 paths" in refused.reason
    assert isinstance(await observer.observe(), Unobserved)


async def test_stash_keeps_only_what_two_looks_need(
    observer: WorkspaceObserver, workspace: Path, tmp_path: Path
) -> None:
    stash = tmp_path / "stash"
    assert len(list(stash.iterdir())) == 1  # the first look's one pack
    for round_ in range(3):
        (workspace / "README.md").write_text(f"round {round_}\n")
        await effects_of(observer)
    # The first look's pack (unchanged files still need it) and the two newest looks' packs.
    assert len(list(stash.iterdir())) == 3
    assert stash.stat().st_mode & 0o777 == 0o700


async def test_many_overwritten_files_come_back_from_their_packs(
    observer: WorkspaceObserver, workspace: Path
) -> None:
    (workspace / "empty").touch()
    (workspace / "big.bin").write_bytes(os.urandom(3 << 20))
    for n in range(50):
        (workspace / "src" / f"m{n}.py").write_text(f"module {n}\n" * n)
    await effects_of(observer)
    reviewed = tree_state(workspace)
    for path in [*(workspace / "src").iterdir(), workspace / "empty", workspace / "big.bin"]:
        path.write_bytes(b"overwritten")
    (workspace / "README.md").unlink()
    effects = await effects_of(observer)
    assert len(effects.paths) == 54
    await observer.restore(effects.paths)
    assert tree_state(workspace) == reviewed


async def test_a_workspace_past_the_stash_bound_is_unobserved(
    workspace: Path, tmp_path: Path
) -> None:
    limits = ObserveLimits(max_stash_bytes=1000)
    refused = await WorkspaceObserver(workspace, tmp_path / "stash", limits).start()
    assert isinstance(refused, Unobserved) and "more than 1,000 bytes" in refused.reason


async def test_a_file_changed_under_another_of_its_names(
    observer: WorkspaceObserver, workspace: Path
) -> None:
    os.link(workspace / "README.md", workspace / "src" / "alias")
    append(workspace / "src" / "alias", "changed under its other name\n")
    assert (await effects_of(observer)).paths == ("README.md", "src/alias")
    append(workspace / "src" / "alias", "again\n")
    assert (await effects_of(observer)).paths == ("README.md", "src/alias")


async def test_a_writable_place_on_the_same_disk_means_full_walks(
    workspace: Path, tmp_path: Path
) -> None:
    """A hard link made outside the workspace (where the kernel's notices for it do not
    reach) still shows its change: the observer walks when such a place exists."""
    elsewhere = tmp_path / "shared"
    elsewhere.mkdir()
    observer = WorkspaceObserver(workspace, tmp_path / "stash", writable_elsewhere=[elsewhere])
    assert await observer.start() is None
    os.link(workspace / "README.md", elsewhere / "alias")
    append(elsewhere / "alias", "changed elsewhere\n")
    assert (await effects_of(observer)).paths == ("README.md",)
    observer.close()


async def test_a_removed_tree_and_a_new_one_in_its_place(
    observer: WorkspaceObserver, workspace: Path
) -> None:
    shutil.rmtree(workspace / "src")
    (workspace / "src" / "pkg").mkdir(parents=True)
    (workspace / "src" / "pkg" / "mod.py").write_text("x = 1\n")
    effects = await effects_of(observer)
    # ``src`` itself shows as changed unless the new directory reused the old one's inode.
    assert set(effects.paths) - {"src"} == {"src/app.py", "src/pkg", "src/pkg/mod.py"}
    (workspace / "src" / "pkg" / "mod.py").write_text("x = 2\n")
    assert (await effects_of(observer)).paths == ("src/pkg/mod.py",)
    await observer.restore(["src/pkg/mod.py"])
    assert (workspace / "src" / "pkg" / "mod.py").read_text() == "x = 1\n"


async def test_the_repository_itself_moving_away_is_seen(
    observer: WorkspaceObserver, workspace: Path, tmp_path: Path
) -> None:
    (workspace / ".git").rename(tmp_path / "moved.git")
    effects = await effects_of(observer)
    assert ".git/HEAD" in effects.git_state and effects.changes == ()


async def test_a_checkout_is_restored_with_the_repository_state(
    observer: WorkspaceObserver, workspace: Path
) -> None:
    reviewed = tree_state(workspace)
    head = (workspace / ".git" / "HEAD").read_bytes()
    git(workspace, "checkout", "-q", "-b", "elsewhere")
    (workspace / "README.md").write_text("on another branch\n")
    git(workspace, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "moved")
    effects = await effects_of(observer)
    assert ".git/HEAD" in effects.git_state and "README.md" in effects.paths
    await observer.restore([*effects.paths, *effects.git_state])
    assert (workspace / ".git" / "HEAD").read_bytes() == head
    assert tree_state(workspace) == reviewed
    assert (await effects_of(observer)).empty


async def change_everything(workspace: Path) -> None:
    (workspace / "README.md").write_text("changed by the call\n")
    (workspace / "tool.sh").chmod(0o700)
    (workspace / "untracked.txt").unlink()
    (workspace / "link").unlink()
    (workspace / "link").symlink_to("src/app.py")
    (workspace / "fresh").mkdir()
    (workspace / "fresh" / "x.bin").write_bytes(os.urandom(5000))


async def test_a_held_back_change_is_put_back_exactly(
    observer: WorkspaceObserver, workspace: Path
) -> None:
    before = tree_state(workspace)
    await change_everything(workspace)
    after = tree_state(workspace)
    effects = await effects_of(observer)
    await observer.hold_back(effects.paths)
    assert tree_state(workspace) == before
    await observer.reapply()
    assert tree_state(workspace) == after
    assert (await effects_of(observer)).empty
    with pytest.raises(RestoreFailed, match="nothing was held back"):
        await observer.reapply()


async def test_a_released_change_stays_undone(
    observer: WorkspaceObserver, workspace: Path, tmp_path: Path
) -> None:
    before = tree_state(workspace)
    await change_everything(workspace)
    await observer.hold_back((await effects_of(observer)).paths)
    packs = len(list((tmp_path / "stash").iterdir()))
    await observer.release()
    assert tree_state(workspace) == before
    assert len(list((tmp_path / "stash").iterdir())) < packs
    assert (await effects_of(observer)).empty
