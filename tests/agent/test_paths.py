"""The workspace jail: what resolves inside, and every way out that must be refused."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from plancord.agent.tools.paths import PathOutsideWorkspace, display_path, resolve_in_workspace


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    (path / "src").mkdir(parents=True)
    (path / "src" / "app.py").write_text("print('hi')\n")
    (path / ".git").mkdir()
    (path / ".git" / "config").write_text("[core]\n")
    return path


def test_relative_path_resolves_against_the_workspace(ws: Path) -> None:
    assert resolve_in_workspace(ws, "src/app.py") == (ws / "src" / "app.py").resolve()


def test_the_root_itself_and_dot_segments_inside_are_fine(ws: Path) -> None:
    assert resolve_in_workspace(ws, ".") == ws.resolve()
    assert resolve_in_workspace(ws, "src/../src/./app.py") == (ws / "src" / "app.py").resolve()


def test_absolute_path_inside_is_allowed(ws: Path) -> None:
    target = str(ws / "src" / "app.py")
    assert resolve_in_workspace(ws, target) == Path(target).resolve()


def test_missing_files_and_directories_resolve_for_creation(ws: Path) -> None:
    assert resolve_in_workspace(ws, "new/dir/file.txt") == ws.resolve() / "new/dir/file.txt"


@pytest.mark.parametrize(
    "user_path", ["../x", "src/../../x", "missing/../../x", "/etc/passwd", "/", "~/../../etc"]
)
def test_paths_leading_outside_are_refused(ws: Path, user_path: str) -> None:
    with pytest.raises(PathOutsideWorkspace, match="outside the workspace"):
        resolve_in_workspace(ws, user_path)


def test_a_sibling_directory_sharing_the_prefix_is_outside(ws: Path) -> None:
    sibling = ws.parent / (ws.name + "-evil")
    sibling.mkdir()
    with pytest.raises(PathOutsideWorkspace):
        resolve_in_workspace(ws, str(sibling / "x"))


def test_symlinks_pointing_outside_are_refused(ws: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret").write_text("s")
    (ws / "dir-link").symlink_to(outside)
    (ws / "file-link").symlink_to(outside / "secret")
    (ws / "dangling").symlink_to(outside / "not-yet")
    for user_path in ("dir-link", "dir-link/secret", "dir-link/new.txt", "file-link", "dangling"):
        with pytest.raises(PathOutsideWorkspace):
            resolve_in_workspace(ws, user_path)


def test_symlinks_inside_the_workspace_resolve_to_their_target(ws: Path) -> None:
    (ws / "alias").symlink_to(ws / "src")
    assert resolve_in_workspace(ws, "alias/app.py") == (ws / "src" / "app.py").resolve()


def test_writes_never_follow_a_symlink_even_inside_the_workspace(ws: Path) -> None:
    (ws / "alias").symlink_to(ws / "src")
    (ws / "link.py").symlink_to("src/app.py")
    for user_path, target in (("alias/app.py", "src/app.py"), ("link.py", "src/app.py")):
        with pytest.raises(PathOutsideWorkspace, match=f"symbolic link to {target}"):
            resolve_in_workspace(ws, user_path, write=True)
    assert (
        resolve_in_workspace(ws, "src/../src/app.py", write=True)
        == (ws / "src" / "app.py").resolve()
    )


def test_a_workspace_reached_through_a_symlink_still_works(ws: Path, tmp_path: Path) -> None:
    link = tmp_path / "ws-link"
    link.symlink_to(ws)
    assert resolve_in_workspace(link, "src/app.py") == (ws / "src" / "app.py").resolve()
    assert resolve_in_workspace(link, str(link / "src")) == (ws / "src").resolve()
    assert resolve_in_workspace(link, "src/app.py", write=True) == (ws / "src/app.py").resolve()
    written = resolve_in_workspace(link, str(link / "src/app.py"), write=True)
    assert written == (ws / "src/app.py").resolve()


def test_nul_bytes_are_refused(ws: Path) -> None:
    with pytest.raises(PathOutsideWorkspace, match="NUL"):
        resolve_in_workspace(ws, "src/app.py\x00.txt")


def test_symlink_loops_are_refused(ws: Path) -> None:
    (ws / "a").symlink_to(ws / "b")
    (ws / "b").symlink_to(ws / "a")
    with pytest.raises(PathOutsideWorkspace):
        resolve_in_workspace(ws, "a/x")


@pytest.mark.parametrize(
    "user_path", [".git/config", ".git/hooks/pre-commit", "sub/.git/x", ".GIT/x"]
)
def test_writes_into_git_directories_are_refused(ws: Path, user_path: str) -> None:
    with pytest.raises(PathOutsideWorkspace, match=r"\.git"):
        resolve_in_workspace(ws, user_path, write=True)


def test_a_symlink_to_the_git_directory_cannot_be_written_through(ws: Path) -> None:
    (ws / "meta").symlink_to(ws / ".git")
    with pytest.raises(PathOutsideWorkspace, match=r"\.git"):
        resolve_in_workspace(ws, "meta/config", write=True)


def test_reading_git_files_is_allowed(ws: Path) -> None:
    assert resolve_in_workspace(ws, ".git/config") == (ws / ".git" / "config").resolve()
    assert resolve_in_workspace(ws, ".gitignore", write=True) == ws.resolve() / ".gitignore"


def test_display_path_is_relative_to_the_root(ws: Path) -> None:
    assert display_path(ws, (ws / "src" / "app.py").resolve()) == "src/app.py"
    assert display_path(ws, ws.resolve()) == "."
    assert os.sep not in display_path(ws, (ws / "src").resolve()).replace("/", "")
