"""The ``view`` tool: a text file with line numbers, or a directory's entries.

Output is capped and each cap says how to ask for the rest, because a model that is silently
given half a file draws wrong conclusions. The file or directory is reached through ``fileio``
(from the workspace root, no symlink followed on the way, no FIFO, no file with a second hard
link) and read in a worker thread.
"""

from __future__ import annotations

import asyncio
import os
import stat
from typing import ClassVar

from pydantic import BaseModel, Field

from plancord.agent.host_io.walk import WorkspaceTree
from plancord.agent.tools.base import StrictInput, Tool, ToolContext, ToolResult
from plancord.agent.tools.fileio import (
    BINARY_SNIFF_BYTES,
    MAX_LINE_BYTES,
    Deadline,
    UnsafeFile,
    is_binary,
    iter_lines,
    number_lines,
    open_directory,
    open_regular,
    status,
    strip_newline,
    tree_of,
)
from plancord.agent.tools.paths import (
    MAX_PATH_CHARS,
    PathOutsideWorkspace,
    display_path,
    resolve_off_loop,
)
from plancord.core.gate import ToolKind

MAX_VIEW_LINES = 2000
MAX_VIEW_BYTES = 50_000
MAX_DIR_ENTRIES = 1000
#: A listing stops reading a directory after this many entries.
MAX_LISTED_ENTRIES = 100_000


class ViewInput(StrictInput):
    path: str = Field(
        min_length=1,
        max_length=MAX_PATH_CHARS,
        description="File or directory to show, relative to the workspace root.",
    )
    start_line: int | None = Field(
        default=None, ge=1, description="First line to show (1-based). Default: 1."
    )
    end_line: int | None = Field(
        default=None,
        ge=1,
        description="Last line to show, inclusive. Default: as far as the display limit allows.",
    )


class ViewTool(Tool[ViewInput]):
    name: ClassVar[str] = "view"
    description: ClassVar[str] = (
        "Show a text file with line numbers (like `cat -n`), or list a directory's entries. "
        f"At most {MAX_VIEW_LINES} lines or {MAX_VIEW_BYTES // 1000} KB are shown per call, and "
        f"lines longer than {MAX_LINE_BYTES} bytes are cut; when a file continues, the result "
        "says which start_line to ask for next. Use start_line/end_line to read a part of a "
        "large file. Binary files are reported with their size, not shown. Paths are relative "
        "to the workspace root. Use this to read code before changing it; use grep to find "
        "where something is and glob to find files by name."
    )
    kind: ClassVar[ToolKind] = ToolKind.READ_ONLY
    Input: ClassVar[type[BaseModel]] = ViewInput

    def detail(self, args: ViewInput) -> str:
        return args.path

    async def run(self, args: ViewInput, ctx: ToolContext) -> ToolResult:
        if (
            args.start_line is not None
            and args.end_line is not None
            and args.end_line < args.start_line
        ):
            return ToolResult.error(
                f"end_line ({args.end_line}) is before start_line ({args.start_line})."
            )
        try:
            path = await resolve_off_loop(ctx.workspace, args.path)
        except PathOutsideWorkspace as exc:
            return ToolResult.error(str(exc))
        shown = display_path(ctx.workspace, path)
        try:
            return await asyncio.to_thread(
                _view, tree_of(ctx.workspace), shown, args.start_line or 1, args.end_line
            )
        except UnsafeFile as exc:
            return ToolResult.error(str(exc))
        except OSError as exc:
            return ToolResult.error(f"Cannot read {shown}: {exc.strerror or exc}.")


def _view(tree: WorkspaceTree, shown: str, start: int, end: int | None) -> ToolResult:
    found = status(tree, shown)
    if found is None:
        return ToolResult.error(
            f"{shown} does not exist. Paths are relative to the workspace root; "
            "use glob to find a file by name."
        )
    if stat.S_ISDIR(found.st_mode):
        return _list_directory(tree, shown)
    return _view_file(tree, shown, start, end)


def _list_directory(tree: WorkspaceTree, shown: str) -> ToolResult:
    deadline = Deadline()
    names: list[str] = []
    cut = False
    fd = open_directory(tree, shown)
    try:
        with os.scandir(fd) as entries:
            for entry in entries:
                if len(names) >= MAX_LISTED_ENTRIES or deadline.expired():
                    cut = True
                    break
                is_dir = entry.is_dir(follow_symlinks=False)
                link = "@" if entry.is_symlink() else ""
                names.append(entry.name + ("/" if is_dir else "") + link)
    finally:
        os.close(fd)
    names.sort()
    label = "The workspace root" if shown == "." else f"{shown}/"
    if not names:
        return ToolResult(f"{label} is an empty directory.")
    counted = f"at least {len(names)}" if cut else str(len(names))
    text = f"{label} has {counted} entries (directories end in /, symlinks in @):\n"
    text += "\n".join(names[:MAX_DIR_ENTRIES])
    if len(names) > MAX_DIR_ENTRIES or cut:
        text += (
            f"\n[{len(names) - MAX_DIR_ENTRIES if not cut else 'many'} more entries not shown; "
            "use glob with a pattern to narrow the listing]"
        )
    return ToolResult(text)


def _view_file(tree: WorkspaceTree, shown: str, start: int, end: int | None) -> ToolResult:
    fd = open_regular(tree, shown)
    with os.fdopen(fd, "rb") as handle:
        size = os.fstat(fd).st_size
        lines: list[str] = []
        shown_bytes = 0
        number = 0
        more = False
        if is_binary(handle.read(BINARY_SNIFF_BYTES)):
            return ToolResult(
                f"{shown} is a binary file, {size:,} bytes; view shows text files only."
            )
        handle.seek(0)
        for raw, cut in iter_lines(handle):
            number += 1
            if number < start:
                continue
            if end is not None and number > end:
                break
            if len(lines) >= MAX_VIEW_LINES or shown_bytes + len(raw) > MAX_VIEW_BYTES:
                more = True
                break
            text = strip_newline(raw.decode("utf-8", errors="replace"))
            if cut:
                text += f" … [line cut at {MAX_LINE_BYTES} bytes]"
            lines.append(text)
            shown_bytes += len(raw)
    if number == 0:
        return ToolResult(f"{shown} is empty (0 bytes).")
    if not lines:
        return ToolResult.error(f"{shown} has {number} lines; start_line {start} is past its end.")
    text = number_lines(start, lines)
    if more:
        last = start + len(lines) - 1
        text += (
            f"\n[showing lines {start}-{last} of {shown} ({size:,} bytes); the file continues: "
            f"call view with start_line={last + 1} to see more]"
        )
    return ToolResult(text)
