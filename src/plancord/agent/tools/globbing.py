"""The ``glob`` tool: find paths by name pattern inside the workspace.

The pattern comes from the model, so it is matched with ``globmatch`` (bounded time, no
regular expression) and the walk runs in a worker thread that stops at an entry cap and at a
deadline, and says so. A directory no match can lie under is not entered.
"""

from __future__ import annotations

import asyncio
import os
from typing import ClassVar

from pydantic import BaseModel, Field

from plancord.agent.host_io.walk import WorkspaceTree
from plancord.agent.tools.base import StrictInput, Tool, ToolContext, ToolResult
from plancord.agent.tools.fileio import Deadline, UnsafeFile, open_directory, relative_name, tree_of
from plancord.agent.tools.globmatch import GlobPattern, GlobTooComplex, State
from plancord.agent.tools.paths import (
    GIT_DIR_NAME,
    MAX_PATH_CHARS,
    PathOutsideWorkspace,
    display_path,
    resolve_off_loop,
)
from plancord.core.gate import ToolKind

MAX_GLOB_MATCHES = 500
MAX_WALK_ENTRIES = 200_000


def bad_pattern(pattern: str) -> str | None:
    """Why a glob cannot be used, or None."""
    if "\x00" in pattern:
        return "The pattern contains a NUL byte."
    if pattern.startswith("/"):
        return "The pattern must be relative; choose the directory to search with `path` instead."
    if ".." in pattern.split("/"):
        return "The pattern may not contain '..'; choose the directory with `path` instead."
    return None


def compile_glob(pattern: str) -> GlobPattern | str:
    """The compiled pattern, or why it cannot be used."""
    problem = bad_pattern(pattern)
    if problem:
        return problem
    try:
        return GlobPattern(pattern.rstrip("/") or pattern)
    except GlobTooComplex as exc:
        return str(exc)


class GlobInput(StrictInput):
    pattern: str = Field(
        min_length=1,
        max_length=500,
        description=(
            "Glob matched against paths relative to `path`: `*` and `?` match within one "
            "directory, `**` spans directories, `[abc]` a character class. "
            "Examples: `**/*.py`, `src/*.ts`, `**/test_*.py`, `docs/**`."
        ),
    )
    path: str = Field(
        default=".",
        min_length=1,
        max_length=MAX_PATH_CHARS,
        description="Directory to search in, relative to the workspace root. Default: the root.",
    )


class GlobTool(Tool[GlobInput]):
    name: ClassVar[str] = "glob"
    description: ClassVar[str] = (
        "Find files and directories by name pattern inside the workspace. Returns matching "
        "paths relative to the workspace root, sorted, directories ending in /; at most "
        f"{MAX_GLOB_MATCHES} are listed. `.git` directories are skipped and symlinked "
        "directories are not followed. Use `**/*.ext` to search recursively; a pattern "
        "without `**` matches only at the depth it spells out."
    )
    kind: ClassVar[ToolKind] = ToolKind.READ_ONLY
    Input: ClassVar[type[BaseModel]] = GlobInput

    def detail(self, args: GlobInput) -> str:
        return f"{args.path}:{args.pattern}"

    async def run(self, args: GlobInput, ctx: ToolContext) -> ToolResult:
        pattern = compile_glob(args.pattern)
        if isinstance(pattern, str):
            return ToolResult.error(pattern)
        try:
            base = await resolve_off_loop(ctx.workspace, args.path)
        except PathOutsideWorkspace as exc:
            return ToolResult.error(str(exc))
        shown = display_path(ctx.workspace, base)
        try:
            walk = await asyncio.to_thread(_glob, tree_of(ctx.workspace), shown, pattern)
        except UnsafeFile as exc:
            return ToolResult.error(str(exc))
        except NotADirectoryError:
            return ToolResult.error(f"{shown} is not a directory; `path` must name a directory.")
        except OSError as exc:
            return ToolResult.error(f"Cannot search {shown}: {exc.strerror or exc}.")
        return ToolResult(_report(walk, args.pattern, shown))


class _Walk:
    def __init__(self) -> None:
        self.matches: list[str] = []
        self.seen = 0
        self.cut_entries = False
        self.cut_time = False


def _report(walk: _Walk, pattern: str, shown: str) -> str:
    where = "the workspace" if shown == "." else shown
    matches = sorted(walk.matches)
    if matches:
        text = "\n".join(matches[:MAX_GLOB_MATCHES])
        if len(matches) > MAX_GLOB_MATCHES:
            text += (
                f"\n[{len(matches) - MAX_GLOB_MATCHES} more matches not shown "
                f"({len(matches)} in all); use a narrower pattern or path]"
            )
    else:
        text = f"No paths match {pattern!r} in {where}."
        if "**" not in pattern and "/" not in pattern:
            text += f" To search subdirectories too, use '**/{pattern}'."
    if walk.cut_entries:
        text += (
            f"\n[stopped after looking at {MAX_WALK_ENTRIES:,} entries; "
            "narrow `path` to search the rest]"
        )
    if walk.cut_time:
        text += (
            f"\n[stopped after {Deadline().seconds:.0f} s, having looked at {walk.seen:,} "
            "entries; narrow `path` or the pattern to search the rest]"
        )
    return text


def _glob(tree: WorkspaceTree, shown: str, pattern: GlobPattern) -> _Walk:
    """Walk ``shown`` breadth-first, carrying each directory's match state to its entries;
    each directory is reached from the workspace root with no link followed."""
    try:
        os.close(open_directory(tree, shown))
    except FileNotFoundError:
        raise NotADirectoryError(shown) from None
    walk = _Walk()
    deadline = Deadline()
    base = relative_name(shown)
    pending: list[tuple[str, State]] = [("", pattern.start)]
    while pending:
        relative_dir, state = pending.pop()
        where = "/".join(part for part in (base, relative_dir) if part) or "."
        try:
            entries = _entries(tree, where)
        except (OSError, UnsafeFile):
            continue
        for name, is_dir in entries:
            walk.seen += 1
            if walk.seen > MAX_WALK_ENTRIES:
                walk.cut_entries = True
                return walk
            if deadline.expired():
                walk.cut_time = True
                return walk
            if name == GIT_DIR_NAME:
                continue
            after = pattern.step(state, name)
            if not after:
                continue
            relative = f"{relative_dir}/{name}" if relative_dir else name
            if pattern.accepts(after):
                found = relative if not base else f"{base}/{relative}"
                walk.matches.append(found + ("/" if is_dir else ""))
            if is_dir:
                pending.append((relative, after))
    return walk


def _entries(tree: WorkspaceTree, shown: str) -> list[tuple[str, bool]]:
    """The names in the real directory ``shown`` and whether each is a real directory."""
    fd = open_directory(tree, shown)
    try:
        with os.scandir(fd) as scan:
            return [(entry.name, entry.is_dir(follow_symlinks=False)) for entry in scan]
    finally:
        os.close(fd)
