"""The tools that change files: ``create_file`` and ``str_replace``.

Every path goes through the workspace jail, and every file is reached through ``fileio``:
from the workspace root, no symlink followed on any component (a link swapped in after the
check is refused), and a file with a second hard link (whose other name may lie outside the
workspace) is refused, so what was checked is what is written. The work runs in a
worker thread.

The documents ``self_edit_docs`` writes (``AGENTS.md`` and Markdown under ``docs/``) shape
every later run, so they are guarded on every write path: a ``create_file`` or
``str_replace`` on one of them is decided by the permission profile as ``self_edit_docs``
(``guarded_as``), which the ``standard`` profile asks a human about.
"""

from __future__ import annotations

import asyncio
import os
import stat
from pathlib import Path, PurePosixPath
from typing import ClassVar

from pydantic import BaseModel, Field

from plancord.agent.host_io.walk import WorkspaceTree
from plancord.agent.tools.base import StrictInput, Tool, ToolContext, ToolResult
from plancord.agent.tools.fileio import (
    UnsafeFile,
    create_regular,
    is_binary,
    number_lines,
    open_regular,
    read_limited,
    replace_contents,
    status,
    strip_newline,
    tree_of,
)
from plancord.agent.tools.paths import (
    MAX_PATH_CHARS,
    PathOutsideWorkspace,
    display_path,
    resolve_in_workspace,
)
from plancord.core.gate import ToolKind
from plancord.core.holding import KnownWrites

MAX_WRITE_BYTES = 1_000_000
MAX_EDIT_FILE_BYTES = 4_000_000
SNIPPET_CONTEXT_LINES = 3
#: The tool whose permission governs writes to the agent's own standing documents.
GUARD_TOOL = "self_edit_docs"
ALLOWED_DOCS = "AGENTS.md at the workspace root, or a .md file under docs/"


def is_guarded_doc(relative: PurePosixPath) -> bool:
    """Whether ``relative`` (to the workspace root) is one of the agent's standing documents."""
    if relative == PurePosixPath("AGENTS.md"):
        return True
    return len(relative.parts) >= 2 and relative.parts[0] == "docs" and relative.suffix == ".md"


def guarded_path(workspace: Path, user_path: str) -> bool:
    """``is_guarded_doc`` for the path as the model wrote it, normalised without the disk (the
    jail refuses ``..`` and symlinks, so the text decides where a write lands)."""
    joined = os.path.normpath(os.path.join(workspace, user_path.strip()))
    relative = os.path.relpath(joined, os.path.normpath(workspace))
    return not relative.startswith("..") and is_guarded_doc(PurePosixPath(relative))


class CreateFileInput(StrictInput):
    path: str = Field(
        min_length=1,
        max_length=MAX_PATH_CHARS,
        description="File to create, relative to the workspace root.",
    )
    content: str = Field(
        max_length=MAX_WRITE_BYTES,
        description=f"The complete file content (UTF-8, at most {MAX_WRITE_BYTES:,} bytes).",
    )
    overwrite: bool = Field(
        default=False,
        description="Replace the file if it already exists. Default false: refuse to.",
    )


class CreateFileTool(Tool[CreateFileInput]):
    name: ClassVar[str] = "create_file"
    description: ClassVar[str] = (
        "Create a file with the given content, creating missing parent directories. Refuses "
        "to replace an existing file unless overwrite is true; to change part of an existing "
        f"file use str_replace instead. Content is at most {MAX_WRITE_BYTES:,} bytes of UTF-8. "
        "Cannot write outside the workspace or inside .git."
    )
    kind: ClassVar[ToolKind] = ToolKind.MUTATING
    workspace_edit: ClassVar[bool] = True
    Input: ClassVar[type[BaseModel]] = CreateFileInput

    def detail(self, args: CreateFileInput) -> str:
        return args.path

    def guarded_as(self, args: CreateFileInput, workspace: Path) -> str | None:
        return GUARD_TOOL if guarded_path(workspace, args.path) else None

    def writes(self, args: CreateFileInput, workspace: Path) -> KnownWrites | None:
        return written_path(workspace, args.path)

    async def run(self, args: CreateFileInput, ctx: ToolContext) -> ToolResult:
        return await write_text_file(ctx.workspace, args.path, args.content, args.overwrite)


def written_path(workspace: Path, user_path: str) -> KnownWrites | None:
    """The one workspace path a file tool writes, or None when ``user_path`` names none
    (the tool itself then refuses it)."""
    try:
        path = resolve_in_workspace(workspace, user_path, write=True)
    except PathOutsideWorkspace:
        return None
    shown = display_path(workspace, path)
    return KnownWrites((shown,)) if shown != "." else None


async def write_text_file(
    workspace: Path, user_path: str, content: str, overwrite: bool
) -> ToolResult:
    """Create (or, with ``overwrite``, replace) a UTF-8 text file inside the workspace."""
    data = content.encode("utf-8")
    if len(data) > MAX_WRITE_BYTES:
        return ToolResult.error(
            f"The content is {len(data):,} bytes; the limit is {MAX_WRITE_BYTES:,}. "
            "Split it into smaller files."
        )
    try:
        path = await asyncio.to_thread(resolve_in_workspace, workspace, user_path, write=True)
    except PathOutsideWorkspace as exc:
        return ToolResult.error(str(exc))
    shown = display_path(workspace, path)
    try:
        return await asyncio.to_thread(_write, tree_of(workspace), shown, data, overwrite)
    except UnsafeFile as exc:
        return ToolResult.error(str(exc))
    except OSError as exc:
        return ToolResult.error(f"Cannot write {shown}: {exc.strerror or exc}.")


def _write(tree: WorkspaceTree, shown: str, data: bytes, overwrite: bool) -> ToolResult:
    found = status(tree, shown)
    if found is not None and stat.S_ISDIR(found.st_mode):
        return ToolResult.error(f"{shown} is a directory.")
    try:
        fd = create_regular(tree, shown)
        existed = False
    except FileExistsError:
        if not overwrite:
            return ToolResult.error(
                f"{shown} already exists. Pass overwrite=true to replace it, or use str_replace "
                "to change part of it."
            )
        fd = open_regular(tree, shown, write=True)
        existed = True
    try:
        replace_contents(fd, data)
    finally:
        os.close(fd)
    lines = data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
    verb = "Replaced" if existed else "Created"
    return ToolResult(f"{verb} {shown} ({lines} lines, {len(data):,} bytes).")


class StrReplaceInput(StrictInput):
    path: str = Field(
        min_length=1,
        max_length=MAX_PATH_CHARS,
        description="File to edit, relative to the workspace root.",
    )
    old_str: str = Field(
        min_length=1,
        max_length=100_000,
        description=(
            "The exact text to replace, including whitespace and indentation. It must occur "
            "exactly once in the file; include surrounding lines to make it unique."
        ),
    )
    new_str: str = Field(
        max_length=MAX_WRITE_BYTES,
        description="The replacement text (may be empty to delete old_str).",
    )


class StrReplaceTool(Tool[StrReplaceInput]):
    name: ClassVar[str] = "str_replace"
    description: ClassVar[str] = (
        "Edit a text file by replacing one exact occurrence of old_str with new_str. old_str "
        "must match the file exactly (whitespace included) and occur exactly once; if it "
        "occurs several times, include more surrounding context. Returns the edited region "
        "with line numbers. View the file first so old_str is copied exactly. Files larger "
        f"than {MAX_EDIT_FILE_BYTES // 1_000_000} MB cannot be edited this way."
    )
    kind: ClassVar[ToolKind] = ToolKind.MUTATING
    workspace_edit: ClassVar[bool] = True
    Input: ClassVar[type[BaseModel]] = StrReplaceInput

    def detail(self, args: StrReplaceInput) -> str:
        return args.path

    def guarded_as(self, args: StrReplaceInput, workspace: Path) -> str | None:
        return GUARD_TOOL if guarded_path(workspace, args.path) else None

    def writes(self, args: StrReplaceInput, workspace: Path) -> KnownWrites | None:
        return written_path(workspace, args.path)

    async def run(self, args: StrReplaceInput, ctx: ToolContext) -> ToolResult:
        if args.old_str == args.new_str:
            return ToolResult.error("old_str and new_str are identical; nothing would change.")
        try:
            path = await asyncio.to_thread(
                resolve_in_workspace, ctx.workspace, args.path, write=True
            )
        except PathOutsideWorkspace as exc:
            return ToolResult.error(str(exc))
        shown = display_path(ctx.workspace, path)
        try:
            return await asyncio.to_thread(
                _replace, tree_of(ctx.workspace), shown, args.old_str, args.new_str
            )
        except UnsafeFile as exc:
            return ToolResult.error(str(exc))
        except FileNotFoundError:
            return ToolResult.error(f"{shown} does not exist; use create_file to create it.")
        except OSError as exc:
            return ToolResult.error(f"Cannot edit {shown}: {exc.strerror or exc}.")


def _replace(tree: WorkspaceTree, shown: str, old: str, new: str) -> ToolResult:
    fd = open_regular(tree, shown, write=True)
    try:
        return _replace_in(fd, shown, old, new)
    finally:
        os.close(fd)


def _replace_in(fd: int, shown: str, old: str, new: str) -> ToolResult:
    size = os.fstat(fd).st_size
    if size > MAX_EDIT_FILE_BYTES:
        return ToolResult.error(
            f"{shown} is {size:,} bytes; str_replace edits files up to {MAX_EDIT_FILE_BYTES:,}."
        )
    data = read_limited(fd, MAX_EDIT_FILE_BYTES + 1)
    if is_binary(data):
        return ToolResult.error(f"{shown} is a binary file; str_replace edits text files only.")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return ToolResult.error(f"{shown} is not valid UTF-8 text; str_replace cannot edit it.")
    count = text.count(old)
    if count == 0 and "\r\n" in text and "\n" in old and "\r\n" not in old:
        old, new = old.replace("\n", "\r\n"), new.replace("\n", "\r\n")
        count = text.count(old)
    if count == 0:
        return ToolResult.error(
            f"old_str was not found in {shown}. It must match the file exactly, including "
            "whitespace and indentation; view the file and copy the text."
        )
    if count > 1:
        return ToolResult.error(
            f"old_str occurs {count} times in {shown}; include more context to make it unique."
        )
    at = text.index(old)
    edited = text[:at] + new + text[at + len(old) :]
    replace_contents(fd, edited.encode("utf-8"))
    first = text.count("\n", 0, at) + 1
    last = first + new.count("\n")
    all_lines = edited.split("\n")
    begin = max(1, first - SNIPPET_CONTEXT_LINES)
    finish = min(len(all_lines), last + SNIPPET_CONTEXT_LINES)
    snippet = number_lines(begin, [strip_newline(x) for x in all_lines[begin - 1 : finish]])
    return ToolResult(f"Edited {shown} (lines {first}-{last} now read):\n{snippet}")
