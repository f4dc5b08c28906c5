"""Following a path's links from the workspace root only: the same answer as ``realpath``
for links that stay inside, and never a look at the host through a link that leaves."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from plancord.agent.tools.beneath import LinkLoop, resolve_beneath


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "src" / "deep").mkdir(parents=True)
    (root / "src" / "app.py").write_text("x")
    (root / "alias").symlink_to("src")
    (root / "src" / "up").symlink_to("..")
    (root / "absolute").symlink_to(root / "src")
    (root / "chain").symlink_to("alias/deep/../up/alias")
    (root / "file-link").symlink_to("src/app.py")
    (root / "dangling").symlink_to("nowhere/yet")
    return root.resolve()


@pytest.mark.parametrize(
    "relative",
    [
        "src/app.py",
        "alias/app.py",
        "alias/deep/../app.py",
        "src/up/src/up/alias/app.py",
        "absolute/deep",
        "chain/app.py",
        "file-link",
        "dangling",
        "dangling/../x",
        "missing/../src/app.py",
        "src/app.py/../deep",
        "../ws/alias/app.py",
        ".",
        "",
    ],
)
def test_links_inside_resolve_as_realpath_does(ws: Path, relative: str) -> None:
    path = ws / relative
    assert resolve_beneath(ws, (), path) == Path(os.path.realpath(path))


def test_a_link_that_leaves_is_followed_as_text_only(ws: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "back").symlink_to(ws / "src")
    (ws / "out").symlink_to(outside)
    # realpath looks at the host folder and comes back inside; the walk does not look.
    assert os.path.realpath(ws / "out" / "back" / "app.py") == str(ws / "src" / "app.py")
    assert resolve_beneath(ws, (), ws / "out" / "back" / "app.py") == outside / "back" / "app.py"
    assert resolve_beneath(ws, (), ws / "out" / ".." / "ws" / "src") == ws / "src"


def test_the_workspace_by_another_name_is_the_workspace(ws: Path, tmp_path: Path) -> None:
    other_name = tmp_path / "ws-link"
    other_name.symlink_to(ws)
    (ws / "by-name").symlink_to(other_name / "src")
    assert resolve_beneath(ws, (other_name,), other_name / "alias") == ws / "src"
    assert resolve_beneath(ws, (other_name,), ws / "by-name" / "app.py") == ws / "src" / "app.py"


def test_a_loop_is_reported(ws: Path) -> None:
    (ws / "a").symlink_to("b")
    (ws / "b").symlink_to("a")
    with pytest.raises(LinkLoop):
        resolve_beneath(ws, (), ws / "a" / "x")
