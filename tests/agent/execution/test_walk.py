"""The workspace's one door: no component of a path is followed if it is a link, parents are
made real directories before a child is written, and nothing outside the root is reached."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from plancord.agent.host_io.walk import WorkspaceTree


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "host"
    folder.mkdir()
    (folder / "secret").write_text("host secret\n")
    return folder


@pytest.fixture
def tree(tmp_path: Path, outside: Path) -> WorkspaceTree:
    root = tmp_path / "workspace"
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "x.pth").write_text("import os\n")
    (root / "linked").symlink_to(outside)
    return WorkspaceTree(root)


def test_reads_through_a_linked_parent_fail_and_read_nothing(tree: WorkspaceTree) -> None:
    with pytest.raises(OSError, match=r"symbolic links|Not a directory"):
        tree.open_file("linked/secret")
    with pytest.raises(OSError, match=r"symbolic links|Not a directory"):
        tree.read_bytes("linked/secret", 100)
    assert tree.lstat("linked/secret") is None
    assert tree.read_bytes("docs/x.pth", 100) == b"import os\n"


def test_a_link_at_the_last_component_is_not_opened(tree: WorkspaceTree) -> None:
    os.symlink("x.pth", tree.root / "docs" / "alias")
    with pytest.raises(OSError, match=r"symbolic links|Not a directory"):
        tree.open_file("docs/alias")
    assert tree.readlink("docs/alias") == "x.pth"


@pytest.mark.parametrize("path", ["", "/etc/passwd", "../host/secret", "docs/../linked", "a//b"])
def test_paths_that_could_leave_the_root_are_refused(tree: WorkspaceTree, path: str) -> None:
    with pytest.raises(ValueError, match="not a path inside the workspace"):
        tree.lstat(path)


def test_a_write_under_a_linked_parent_replaces_the_link_with_a_directory(
    tree: WorkspaceTree, outside: Path
) -> None:
    tree.put_file("linked/secret", lambda fd: os.write(fd, b"restored\n") and None, 0o644)

    assert sorted(p.name for p in outside.iterdir()) == ["secret"]
    assert (outside / "secret").read_text() == "host secret\n"
    assert (tree.root / "linked").is_dir() and not (tree.root / "linked").is_symlink()
    assert (tree.root / "linked" / "secret").read_text() == "restored\n"


def test_remove_and_chmod_never_reach_through_a_link(tree: WorkspaceTree, outside: Path) -> None:
    tree.remove("linked/secret")
    tree.chmod("linked", 0o000)
    assert (outside / "secret").exists()
    assert outside.stat().st_mode & 0o777 != 0
    tree.remove("linked")
    assert outside.is_dir() and not (tree.root / "linked").exists()


def test_scan_lists_links_as_paths_and_never_descends_them(tree: WorkspaceTree) -> None:
    seen = dict(tree.scan())
    assert set(seen) == {"docs", "docs/x.pth", "linked"}
    assert dict(tree.scan(prune=lambda p: p == "docs")).keys() == {"linked"}


def test_a_directory_without_write_permission_is_removed_whole(tree: WorkspaceTree) -> None:
    (tree.root / "locked" / "inner").mkdir(parents=True)
    (tree.root / "locked" / "inner" / "f").write_text("f")
    (tree.root / "locked" / "inner").chmod(0o500)
    (tree.root / "locked").chmod(0o500)
    tree.remove("locked")
    assert not (tree.root / "locked").exists()
