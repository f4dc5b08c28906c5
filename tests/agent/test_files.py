"""view, glob, grep, create_file and str_replace on real files in a real workspace."""

from __future__ import annotations

from pathlib import Path

import pytest

from plancord.agent.tools import files
from plancord.agent.tools import grep as grep_module
from plancord.agent.tools.base import ToolContext
from plancord.agent.tools.files import (
    MAX_GLOB_MATCHES,
    MAX_VIEW_LINES,
    CreateFileTool,
    GlobTool,
    GrepTool,
    StrReplaceTool,
    ViewTool,
)
from plancord.agent.tools.globmatch import GlobPattern

from .conftest import call

VIEW, GLOB, GREP = ViewTool(), GlobTool(), GrepTool()
CREATE, REPLACE = CreateFileTool(), StrReplaceTool()


def write(root: Path, relative: str, text: str) -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def names(directory: Path) -> list[str]:
    return sorted(entry.name for entry in directory.iterdir())


# -- view ----------------------------------------------------------------------------------


async def test_view_numbers_lines_like_cat_n(ctx: ToolContext, workspace: Path) -> None:
    write(workspace, "a.py", "one\ntwo\nthree\n")
    result = await call(VIEW, ctx, path="a.py")
    assert not result.is_error
    assert result.content == "     1\tone\n     2\ttwo\n     3\tthree"


async def test_view_a_line_range(ctx: ToolContext, workspace: Path) -> None:
    write(workspace, "a.py", "".join(f"line {n}\n" for n in range(1, 11)))
    result = await call(VIEW, ctx, path="a.py", start_line=4, end_line=6)
    assert result.content == "     4\tline 4\n     5\tline 5\n     6\tline 6"


async def test_view_range_errors(ctx: ToolContext, workspace: Path) -> None:
    write(workspace, "a.py", "x\ny\n")
    past = await call(VIEW, ctx, path="a.py", start_line=9)
    assert past.is_error
    assert "has 2 lines" in past.content
    backwards = await call(VIEW, ctx, path="a.py", start_line=5, end_line=2)
    assert backwards.is_error


async def test_view_of_a_huge_file_shows_a_page_and_says_how_to_continue(
    ctx: ToolContext, workspace: Path
) -> None:
    write(workspace, "big.txt", "".join(f"row {n}\n" for n in range(1, 10_001)))
    first = await call(VIEW, ctx, path="big.txt")
    lines = first.content.splitlines()
    assert lines[0] == "     1\trow 1"
    assert lines[MAX_VIEW_LINES - 1] == f"{MAX_VIEW_LINES:>6}\trow {MAX_VIEW_LINES}"
    assert f"start_line={MAX_VIEW_LINES + 1}" in lines[-1]
    later = await call(VIEW, ctx, path="big.txt", start_line=9999)
    assert later.content == "  9999\trow 9999\n 10000\trow 10000"


async def test_view_caps_bytes_and_cuts_very_long_lines(ctx: ToolContext, workspace: Path) -> None:
    write(workspace, "wide.txt", ("x" * 5000 + "\n") * 100)
    result = await call(VIEW, ctx, path="wide.txt")
    assert "[line cut at 2000 bytes]" in result.content
    assert len(result.content.encode()) < files.MAX_VIEW_BYTES + 5000
    assert "start_line=" in result.content.splitlines()[-1]


async def test_view_of_a_binary_file_reports_its_size(ctx: ToolContext, workspace: Path) -> None:
    (workspace / "blob.bin").write_bytes(b"\x89PNG\x00\x01" * 100)
    result = await call(VIEW, ctx, path="blob.bin")
    assert not result.is_error
    assert result.content == "blob.bin is a binary file, 600 bytes; view shows text files only."


async def test_view_of_a_directory_lists_it(ctx: ToolContext, workspace: Path) -> None:
    write(workspace, "src/a.py", "")
    write(workspace, "README.md", "")
    result = await call(VIEW, ctx, path=".")
    assert "README.md" in result.content
    assert "src/" in result.content
    assert ".git/" in result.content
    empty = workspace / "empty"
    empty.mkdir()
    assert "empty directory" in (await call(VIEW, ctx, path="empty")).content


async def test_view_of_missing_and_empty_files(ctx: ToolContext, workspace: Path) -> None:
    missing = await call(VIEW, ctx, path="nope.txt")
    assert missing.is_error
    assert "does not exist" in missing.content
    write(workspace, "empty.txt", "")
    assert "empty" in (await call(VIEW, ctx, path="empty.txt")).content


async def test_view_refuses_paths_outside(ctx: ToolContext, workspace: Path, outside: Path) -> None:
    (workspace / "out").symlink_to(outside)
    for path in ("../outside/secret.txt", str(outside / "secret.txt"), "out/secret.txt"):
        result = await call(VIEW, ctx, path=path)
        assert result.is_error
        assert "top secret" not in result.content


# -- glob ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        ("**/*.py", "a.py", True),
        ("**/*.py", "src/deep/b.py", True),
        ("*.py", "src/b.py", False),
        ("src/*.py", "src/b.py", True),
        ("src/*.py", "src/deep/b.py", False),
        ("src/**", "src/deep/b.py", True),
        ("test_?.py", "test_1.py", True),
        ("[ab].txt", "b.txt", True),
        ("[!ab].txt", "b.txt", False),
    ],
)
def test_glob_semantics(pattern: str, path: str, matches: bool) -> None:
    assert GlobPattern(pattern).match(path) is matches


async def test_glob_finds_sorted_matches_and_skips_git(ctx: ToolContext, workspace: Path) -> None:
    for relative in ("src/b.py", "src/a.py", "top.py", "notes.md", "src/deep/c.py"):
        write(workspace, relative, "")
    write(workspace, ".git/hooks/x.py", "")
    result = await call(GLOB, ctx, pattern="**/*.py")
    assert result.content.splitlines() == ["src/a.py", "src/b.py", "src/deep/c.py", "top.py"]
    only_top = await call(GLOB, ctx, pattern="*.py")
    assert only_top.content == "top.py"
    in_src = await call(GLOB, ctx, pattern="*", path="src")
    assert in_src.content.splitlines() == ["src/a.py", "src/b.py", "src/deep/"]


async def test_glob_caps_its_output(ctx: ToolContext, workspace: Path) -> None:
    for n in range(MAX_GLOB_MATCHES + 10):
        (workspace / f"f{n:04}.txt").touch()
    result = await call(GLOB, ctx, pattern="*.txt")
    lines = result.content.splitlines()
    assert len(lines) == MAX_GLOB_MATCHES + 1
    assert "10 more matches not shown" in lines[-1]


async def test_glob_without_matches_suggests_recursion(ctx: ToolContext, workspace: Path) -> None:
    result = await call(GLOB, ctx, pattern="*.rs")
    assert not result.is_error
    assert "**/*.rs" in result.content


@pytest.mark.parametrize(("pattern", "path"), [("../*", "."), ("/etc/*", "."), ("*", "..")])
async def test_glob_never_leaves_the_workspace(
    ctx: ToolContext, outside: Path, pattern: str, path: str
) -> None:
    result = await call(GLOB, ctx, pattern=pattern, path=path)
    assert result.is_error
    assert "secret" not in result.content


async def test_glob_does_not_follow_symlinked_directories(
    ctx: ToolContext, workspace: Path, outside: Path
) -> None:
    (workspace / "out").symlink_to(outside)
    result = await call(GLOB, ctx, pattern="**/*.txt")
    assert "secret" not in result.content


# -- grep ----------------------------------------------------------------------------------


@pytest.fixture
def tree(workspace: Path, outside: Path) -> Path:
    write(workspace, "src/app.py", "import os\n\ndef main():\n    return TODO_fix\n")
    write(workspace, "src/util.py", "def helper():\n    pass  # todo later\n")
    write(workspace, "src.py", "todo = 1\n")
    write(workspace, "docs/guide.md", "Nothing to do here.\nTODO: write docs\n")
    write(workspace, ".hidden/conf.py", "todo_hidden = True\n")
    write(workspace, "long.txt", "todo " + "y" * 600 + "\n")
    (workspace / "blob.bin").write_bytes(b"todo\x00binary")
    write(workspace, ".git/info/todo", "todo in git\n")
    (workspace / "out").symlink_to(outside)
    write(outside, "todo.txt", "todo outside\n")
    return workspace


async def test_grep_output(ctx: ToolContext, tree: Path) -> None:
    result = await call(GREP, ctx, pattern="todo", ignore_case=True)
    assert result.content.splitlines() == [
        ".hidden/conf.py:1:todo_hidden = True",
        "docs/guide.md:2:TODO: write docs",
        f"long.txt:1:{files.LONG_LINE_NOTE}",
        "src/app.py:4:    return TODO_fix",
        "src/util.py:2:    pass  # todo later",
        "src.py:1:todo = 1",
    ]


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({"pattern": "todo"}, 4),
        ({"pattern": "todo", "ignore_case": True, "glob": "*.py"}, 4),
        ({"pattern": "todo", "ignore_case": True, "glob": "!*.py"}, 2),
        ({"pattern": "todo", "ignore_case": True, "path": "src"}, 2),
        ({"pattern": "todo", "ignore_case": True, "path": "src/util.py"}, 1),
    ],
)
async def test_grep_narrowing(
    ctx: ToolContext, tree: Path, arguments: dict[str, object], expected: list[str] | int
) -> None:
    result = await call(GREP, ctx, **arguments)
    assert not result.is_error
    lines = result.content.splitlines()
    if isinstance(expected, int):
        assert len(lines) == expected, lines
    else:
        assert lines == expected


async def test_grep_without_ripgrep_says_so(
    ctx: ToolContext, tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(grep_module, "ripgrep_installed", lambda: False)
    result = await call(GREP, ctx, pattern="todo")
    assert result.is_error
    assert "needs ripgrep" in result.content


async def test_grep_caps_results_and_says_so(ctx: ToolContext, workspace: Path) -> None:
    write(workspace, "many.txt", "hit\n" * 50)
    result = await call(GREP, ctx, pattern="hit", max_results=5)
    lines = result.content.splitlines()
    assert lines[:5] == [f"many.txt:{n}:hit" for n in range(1, 6)]
    assert "there are more" in lines[5]
    assert len(lines) == 6


async def test_grep_invalid_regex_is_an_error(ctx: ToolContext, tree: Path) -> None:
    assert (await call(GREP, ctx, pattern="(unclosed")).is_error


async def test_grep_never_searches_outside(ctx: ToolContext, tree: Path) -> None:
    assert (await call(GREP, ctx, pattern="outside")).content.startswith("No matches")
    result = await call(GREP, ctx, pattern="todo", path="../outside")
    assert result.is_error
    assert "todo outside" not in result.content


async def test_grep_without_matches(ctx: ToolContext, tree: Path) -> None:
    result = await call(GREP, ctx, pattern="zzz_nothing", glob="*.md")
    assert not result.is_error
    assert (
        result.content == "No matches for 'zzz_nothing' in the workspace (files matching '*.md')."
    )


# -- create_file ---------------------------------------------------------------------------


async def test_create_file_makes_parents(ctx: ToolContext, workspace: Path) -> None:
    result = await call(CREATE, ctx, path="pkg/sub/mod.py", content="x = 1\ny = 2\n")
    assert not result.is_error
    assert result.content == "Created pkg/sub/mod.py (2 lines, 12 bytes)."
    assert (workspace / "pkg/sub/mod.py").read_text() == "x = 1\ny = 2\n"


async def test_create_file_refuses_to_overwrite_unless_asked(
    ctx: ToolContext, workspace: Path
) -> None:
    write(workspace, "a.txt", "old\n")
    refused = await call(CREATE, ctx, path="a.txt", content="new\n")
    assert refused.is_error
    assert "overwrite=true" in refused.content
    assert (workspace / "a.txt").read_text() == "old\n"
    replaced = await call(CREATE, ctx, path="a.txt", content="new\n", overwrite=True)
    assert replaced.content.startswith("Replaced a.txt")
    assert (workspace / "a.txt").read_text() == "new\n"


async def test_create_file_size_cap_counts_bytes(ctx: ToolContext, workspace: Path) -> None:
    result = await call(CREATE, ctx, path="big.txt", content="é" * 600_000)
    assert result.is_error
    assert "1,200,000 bytes" in result.content
    assert not (workspace / "big.txt").exists()


async def test_create_file_onto_a_directory_is_an_error(ctx: ToolContext, workspace: Path) -> None:
    (workspace / "dir").mkdir()
    result = await call(CREATE, ctx, path="dir", content="x", overwrite=True)
    assert result.is_error


@pytest.mark.parametrize(
    "path", ["../escape.txt", "out/escape.txt", ".git/config", ".git/hooks/pre-commit", "a\x00b"]
)
async def test_create_file_refuses_escapes_and_git(
    ctx: ToolContext, workspace: Path, outside: Path, path: str
) -> None:
    (workspace / "out").symlink_to(outside)
    config_before = (workspace / ".git" / "config").read_text()
    result = await call(CREATE, ctx, path=path, content="pwned", overwrite=True)
    assert result.is_error
    assert names(outside) == ["secret.txt"]
    assert not (workspace.parent / "escape.txt").exists()
    assert (workspace / ".git" / "config").read_text() == config_before
    assert not (workspace / ".git" / "hooks" / "pre-commit").exists()


# -- str_replace ---------------------------------------------------------------------------


async def test_str_replace_exactly_one_match(ctx: ToolContext, workspace: Path) -> None:
    write(workspace, "x.py", "".join(f"line{n}\n" for n in range(1, 11)))
    result = await call(REPLACE, ctx, path="x.py", old_str="line5\n", new_str="five\nFIVE\n")
    assert not result.is_error
    assert (workspace / "x.py").read_text().splitlines()[3:7] == ["line4", "five", "FIVE", "line6"]
    assert result.content.splitlines() == [
        "Edited x.py (lines 5-7 now read):",
        "     2\tline2",
        "     3\tline3",
        "     4\tline4",
        "     5\tfive",
        "     6\tFIVE",
        "     7\tline6",
        "     8\tline7",
        "     9\tline8",
        "    10\tline9",
    ]


async def test_str_replace_not_found(ctx: ToolContext, workspace: Path) -> None:
    write(workspace, "x.py", "alpha\n")
    result = await call(REPLACE, ctx, path="x.py", old_str="beta", new_str="gamma")
    assert result.is_error
    assert "not found in x.py" in result.content
    assert (workspace / "x.py").read_text() == "alpha\n"


async def test_str_replace_many_matches(ctx: ToolContext, workspace: Path) -> None:
    write(workspace, "x.py", "a = 1\na = 1\na = 1\n")
    result = await call(REPLACE, ctx, path="x.py", old_str="a = 1", new_str="a = 2")
    assert result.is_error
    assert result.content == (
        "old_str occurs 3 times in x.py; include more context to make it unique."
    )
    assert (workspace / "x.py").read_text() == "a = 1\na = 1\na = 1\n"


async def test_str_replace_keeps_crlf_line_endings(ctx: ToolContext, workspace: Path) -> None:
    (workspace / "w.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    result = await call(REPLACE, ctx, path="w.txt", old_str="one\ntwo", new_str="1\n2")
    assert not result.is_error
    assert (workspace / "w.txt").read_bytes() == b"1\r\n2\r\nthree\r\n"


async def test_str_replace_errors(ctx: ToolContext, workspace: Path, outside: Path) -> None:
    (workspace / "blob.bin").write_bytes(b"a\x00b")
    (workspace / "out").symlink_to(outside)
    write(workspace, "same.txt", "same\n")
    cases = {
        "missing.txt": "does not exist",
        "blob.bin": "binary",
        "out/secret.txt": "outside the workspace",
        ".git/config": ".git",
        ".": "not a file",
        "src": "Is a directory",
    }
    (workspace / "src").mkdir(exist_ok=True)
    for path, message in cases.items():
        result = await call(REPLACE, ctx, path=path, old_str="a", new_str="b")
        assert result.is_error, path
        assert message in result.content, path
    identical = await call(REPLACE, ctx, path="same.txt", old_str="same", new_str="same")
    assert identical.is_error
    assert (outside / "secret.txt").read_text() == "top secret\n"
