"""The file tools: view, glob and grep to explore, create_file and str_replace to change.

Every path goes through the workspace jail (``paths.resolve_in_workspace``) before the disk is
touched, and every read, write and directory walk runs in a worker thread (or, for ripgrep, a
subprocess) so a large workspace never stalls the event loop the Discord connection lives on.
Output is capped and each cap says how to ask for the rest, because a model that is silently
given half a file draws wrong conclusions.
"""

from __future__ import annotations

import asyncio
import functools
import os
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from plancord.agent.tools.base import Tool, ToolContext, ToolResult
from plancord.agent.tools.paths import (
    GIT_DIR_NAME,
    PathOutsideWorkspace,
    display_path,
    resolve_in_workspace,
)
from plancord.core.gate import ToolKind
from plancord.core.shell.sandbox import SandboxPolicy, SandboxUnavailable, run_sandboxed

MAX_PATH_CHARS = 4096
BINARY_SNIFF_BYTES = 8192
MAX_VIEW_LINES = 2000
MAX_VIEW_BYTES = 50_000
MAX_LINE_BYTES = 2000
MAX_DIR_ENTRIES = 1000
MAX_GLOB_MATCHES = 500
MAX_WALK_ENTRIES = 200_000
MAX_GREP_RESULTS = 1000
DEFAULT_GREP_RESULTS = 100
MAX_GREP_OUTPUT_BYTES = 100_000
GREP_MAX_COLUMNS = 500
GREP_TIMEOUT_SECONDS = 30.0
LONG_LINE_NOTE = f"[line longer than {GREP_MAX_COLUMNS} bytes omitted; view the file there]"
_RG_OMITTED = re.compile(r"(:\d+:)\[Omitted long [^\]]*\]\Z")
MAX_WRITE_BYTES = 1_000_000
MAX_EDIT_FILE_BYTES = 4_000_000
SNIPPET_CONTEXT_LINES = 3


class _Input(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _is_binary(sample: bytes) -> bool:
    return b"\x00" in sample[:BINARY_SNIFF_BYTES]


def _strip_newline(line: str) -> str:
    if line.endswith("\n"):
        line = line[:-1]
    if line.endswith("\r"):
        line = line[:-1]
    return line


def _iter_lines(handle: BinaryIO) -> Iterator[tuple[bytes, bool]]:
    """Lines of a binary file, each at most ``MAX_LINE_BYTES`` long, and whether it was cut."""
    while True:
        line = handle.readline(MAX_LINE_BYTES + 1)
        if not line:
            return
        if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
            while True:
                rest = handle.readline(64 * 1024)
                if not rest or rest.endswith(b"\n"):
                    break
            yield line[:MAX_LINE_BYTES], True
        else:
            yield line, False


def _number_lines(first: int, lines: list[str]) -> str:
    return "\n".join(f"{number:>6}\t{text}" for number, text in enumerate(lines, start=first))


# -- view ----------------------------------------------------------------------------------


class ViewInput(_Input):
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
            path = resolve_in_workspace(ctx.workspace, args.path)
        except PathOutsideWorkspace as exc:
            return ToolResult.error(str(exc))
        shown = display_path(ctx.workspace, path)
        try:
            return await asyncio.to_thread(_view, path, shown, args.start_line or 1, args.end_line)
        except OSError as exc:
            return ToolResult.error(f"Cannot read {shown}: {exc.strerror or exc}.")


def _view(path: Path, shown: str, start: int, end: int | None) -> ToolResult:
    if not path.exists():
        return ToolResult.error(
            f"{shown} does not exist. Paths are relative to the workspace root; "
            "use glob to find a file by name."
        )
    if path.is_dir():
        return _list_directory(path, shown)
    if not path.is_file():
        return ToolResult.error(f"{shown} is not a regular file.")
    return _view_file(path, shown, start, end)


def _list_directory(path: Path, shown: str) -> ToolResult:
    with os.scandir(path) as entries:
        names = sorted(
            entry.name
            + ("/" if entry.is_dir(follow_symlinks=False) else "")
            + ("@" if entry.is_symlink() else "")
            for entry in entries
        )
    label = "The workspace root" if shown == "." else f"{shown}/"
    if not names:
        return ToolResult(f"{label} is an empty directory.")
    text = f"{label} has {len(names)} entries (directories end in /, symlinks in @):\n"
    text += "\n".join(names[:MAX_DIR_ENTRIES])
    if len(names) > MAX_DIR_ENTRIES:
        text += (
            f"\n[{len(names) - MAX_DIR_ENTRIES} more entries not shown; "
            "use glob with a pattern to narrow the listing]"
        )
    return ToolResult(text)


def _view_file(path: Path, shown: str, start: int, end: int | None) -> ToolResult:
    size = path.stat().st_size
    lines: list[str] = []
    shown_bytes = 0
    number = 0
    more = False
    with path.open("rb") as handle:
        if _is_binary(handle.read(BINARY_SNIFF_BYTES)):
            return ToolResult(
                f"{shown} is a binary file, {size:,} bytes; view shows text files only."
            )
        handle.seek(0)
        for raw, cut in _iter_lines(handle):
            number += 1
            if number < start:
                continue
            if end is not None and number > end:
                break
            if len(lines) >= MAX_VIEW_LINES or shown_bytes + len(raw) > MAX_VIEW_BYTES:
                more = True
                break
            text = _strip_newline(raw.decode("utf-8", errors="replace"))
            if cut:
                text += f" … [line cut at {MAX_LINE_BYTES} bytes]"
            lines.append(text)
            shown_bytes += len(raw)
    if number == 0:
        return ToolResult(f"{shown} is empty (0 bytes).")
    if not lines:
        return ToolResult.error(f"{shown} has {number} lines; start_line {start} is past its end.")
    text = _number_lines(start, lines)
    if more:
        last = start + len(lines) - 1
        text += (
            f"\n[showing lines {start}-{last} of {shown} ({size:,} bytes); the file continues: "
            f"call view with start_line={last + 1} to see more]"
        )
    return ToolResult(text)


# -- glob ----------------------------------------------------------------------------------


def glob_to_regex(pattern: str) -> re.Pattern[str]:
    """A regex for a path glob: ``*``/``?`` stay within one directory, ``**`` spans many."""
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        char = pattern[i]
        if char == "*":
            if pattern.startswith("**", i):
                end = i + 2
                whole_segment = (i == 0 or pattern[i - 1] == "/") and (
                    end == n or pattern[end] == "/"
                )
                if whole_segment and end == n:
                    out.append(".*")
                    i = end
                elif whole_segment:
                    out.append("(?:.*/)?")
                    i = end + 1
                else:
                    out.append("[^/]*")
                    i = end
                continue
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[":
            close = i + 1
            if close < n and pattern[close] in "!^":
                close += 1
            if close < n and pattern[close] == "]":
                close += 1
            close = pattern.find("]", close)
            if close == -1:
                out.append(re.escape(char))
            else:
                body = pattern[i + 1 : close].replace("\\", "\\\\")
                if body[:1] in ("!", "^"):
                    body = "^" + body[1:]
                out.append(f"[{body}]")
                i = close
        else:
            out.append(re.escape(char))
        i += 1
    return re.compile("(?s:" + "".join(out) + r")\Z")


def _bad_pattern(pattern: str) -> str | None:
    if "\x00" in pattern:
        return "The pattern contains a NUL byte."
    if pattern.startswith("/"):
        return "The pattern must be relative; choose the directory to search with `path` instead."
    if ".." in pattern.split("/"):
        return "The pattern may not contain '..'; choose the directory with `path` instead."
    return None


class GlobInput(_Input):
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
        problem = _bad_pattern(args.pattern)
        if problem:
            return ToolResult.error(problem)
        try:
            base = resolve_in_workspace(ctx.workspace, args.path)
        except PathOutsideWorkspace as exc:
            return ToolResult.error(str(exc))
        shown = display_path(ctx.workspace, base)
        if not base.is_dir():
            return ToolResult.error(f"{shown} is not a directory; `path` must name a directory.")
        try:
            matches, walk_cut = await asyncio.to_thread(
                _glob, ctx.workspace.resolve(), base, args.pattern
            )
        except OSError as exc:
            return ToolResult.error(f"Cannot search {shown}: {exc.strerror or exc}.")
        where = "the workspace" if shown == "." else shown
        if not matches:
            text = f"No paths match {args.pattern!r} in {where}."
            if "**" not in args.pattern and "/" not in args.pattern:
                text += f" To search subdirectories too, use '**/{args.pattern}'."
            return ToolResult(text)
        text = "\n".join(matches[:MAX_GLOB_MATCHES])
        if len(matches) > MAX_GLOB_MATCHES:
            text += (
                f"\n[{len(matches) - MAX_GLOB_MATCHES} more matches not shown "
                f"({len(matches)} in all); use a narrower pattern or path]"
            )
        if walk_cut:
            text += (
                f"\n[stopped after looking at {MAX_WALK_ENTRIES:,} entries; "
                "narrow `path` to search the rest]"
            )
        return ToolResult(text)


def _glob(root: Path, base: Path, pattern: str) -> tuple[list[str], bool]:
    regex = glob_to_regex(pattern.rstrip("/") or pattern)
    max_depth = None if "**" in pattern else pattern.rstrip("/").count("/") + 1
    matches: list[str] = []
    seen = 0
    for directory, dirnames, filenames in os.walk(base, followlinks=False):
        here = Path(directory)
        relative_dir = here.relative_to(base)
        depth = 0 if relative_dir == Path(".") else len(relative_dir.parts)
        dirnames[:] = sorted(d for d in dirnames if d != GIT_DIR_NAME)
        entries = [(d, True) for d in dirnames] + [
            (f, False) for f in filenames if f != GIT_DIR_NAME
        ]
        for entry, is_dir in entries:
            seen += 1
            if seen > MAX_WALK_ENTRIES:
                return sorted(matches), True
            relative = (relative_dir / entry).as_posix()
            if regex.match(relative):
                full = here / entry
                is_real_dir = is_dir and not full.is_symlink()
                matches.append(
                    Path(os.path.relpath(full, root)).as_posix() + ("/" if is_real_dir else "")
                )
        if max_depth is not None and depth + 1 >= max_depth:
            dirnames[:] = []
    return sorted(matches), False


# -- grep ----------------------------------------------------------------------------------


class GrepInput(_Input):
    pattern: str = Field(
        min_length=1,
        max_length=1000,
        description=(
            "Regular expression searched for in each line (ripgrep syntax, which is close to "
            "Python's re without look-around or backreferences). Escape literal characters "
            "such as `(`, `.`, `[`."
        ),
    )
    path: str = Field(
        default=".",
        min_length=1,
        max_length=MAX_PATH_CHARS,
        description="File or directory to search, relative to the workspace root. Default: all.",
    )
    glob: str | None = Field(
        default=None,
        max_length=500,
        description=(
            "Only search files matching this glob, e.g. `*.py` (file name, any directory) or "
            "`src/**/*.ts` (path from the workspace root); prefix with `!` to exclude instead."
        ),
    )
    ignore_case: bool = Field(default=False, description="Match case-insensitively.")
    max_results: int = Field(
        default=DEFAULT_GREP_RESULTS,
        ge=1,
        le=MAX_GREP_RESULTS,
        description=f"Most matching lines to return (1 to {MAX_GREP_RESULTS}).",
    )


class GrepTool(Tool[GrepInput]):
    name: ClassVar[str] = "grep"
    description: ClassVar[str] = (
        "Search file contents for a regular expression. Returns `path:line:text` lines, paths "
        "relative to the workspace root, files in path order. Every file is searched, hidden "
        "and git-ignored ones included, except `.git` directories, binary files and symlinks; "
        "narrow with `path` or `glob` in large trees. Lines longer than "
        f"{GREP_MAX_COLUMNS} bytes are replaced by a note. At most max_results lines "
        f"(default {DEFAULT_GREP_RESULTS}) are returned. Use this to find definitions, "
        "usages and strings; then view the file around the line."
    )
    kind: ClassVar[ToolKind] = ToolKind.READ_ONLY
    Input: ClassVar[type[BaseModel]] = GrepInput

    def detail(self, args: GrepInput) -> str:
        return f"{args.path}:{args.pattern}"

    async def run(self, args: GrepInput, ctx: ToolContext) -> ToolResult:
        if args.glob is not None and (problem := _bad_pattern(args.glob.removeprefix("!"))):
            return ToolResult.error(f"glob: {problem}")
        if "\x00" in args.pattern:
            return ToolResult.error("The pattern contains a NUL byte.")
        try:
            target, exists = await asyncio.to_thread(_resolve_existing, ctx.workspace, args.path)
        except PathOutsideWorkspace as exc:
            return ToolResult.error(str(exc))
        shown = display_path(ctx.workspace, target)
        if not exists:
            return ToolResult.error(f"{shown} does not exist.")
        if _ripgrep_installed():
            outcome = await _grep_ripgrep(ctx.policy, shown, args)
        else:
            try:
                outcome = await asyncio.to_thread(
                    _grep_python, ctx.workspace.resolve(), target, args
                )
            except OSError as exc:
                return ToolResult.error(f"Cannot search {shown}: {exc.strerror or exc}.")
        if outcome.error is not None:
            return ToolResult.error(outcome.error)
        return ToolResult(_grep_report(outcome, args, shown))


def _resolve_existing(workspace: Path, path: str) -> tuple[Path, bool]:
    target = resolve_in_workspace(workspace, path)
    return target, target.exists()


@functools.cache
def _ripgrep_installed() -> bool:
    return shutil.which("rg") is not None


@dataclass(slots=True)
class _GrepOutcome:
    lines: list[str]
    more: bool = False
    timed_out: bool = False
    error: str | None = None


def _grep_report(outcome: _GrepOutcome, args: GrepInput, shown: str) -> str:
    if not outcome.lines:
        where = "the workspace" if shown == "." else shown
        text = f"No matches for {args.pattern!r} in {where}"
        text += f" (files matching {args.glob!r})." if args.glob else "."
        if outcome.timed_out:
            text += f" The search stopped after {GREP_TIMEOUT_SECONDS:.0f} s; narrow `path`."
        return text
    kept: list[str] = []
    size = 0
    for line in outcome.lines[: args.max_results]:
        size += len(line.encode("utf-8")) + 1
        if size > MAX_GREP_OUTPUT_BYTES:
            outcome.more = True
            break
        kept.append(line)
    text = "\n".join(kept)
    if outcome.more or len(outcome.lines) > args.max_results:
        text += (
            f"\n[showing the first {len(kept)} matching lines; there are more: narrow the "
            "pattern, path or glob, or raise max_results]"
        )
    if outcome.timed_out:
        text += f"\n[the search stopped after {GREP_TIMEOUT_SECONDS:.0f} s; results are partial]"
    return text


async def _grep_ripgrep(policy: SandboxPolicy, shown: str, args: GrepInput) -> _GrepOutcome:
    """ripgrep inside the agent's sandbox, like every process an agent causes."""
    argv = [
        "rg",
        "--no-config",
        "--line-number",
        "--with-filename",
        "--no-heading",
        "--color",
        "never",
        "--max-columns",
        str(GREP_MAX_COLUMNS),
        "--sort",
        "path",
        "--hidden",
        "--no-ignore",
        "--no-messages",
        "--glob",
        f"!{GIT_DIR_NAME}",
    ]
    if args.ignore_case:
        argv.append("--ignore-case")
    if args.glob:
        argv += ["--glob", args.glob]
    argv += ["--regexp", args.pattern, "--", shown]
    try:
        result = await run_sandboxed(
            argv, policy, timeout=GREP_TIMEOUT_SECONDS, max_output=MAX_GREP_OUTPUT_BYTES
        )
    except SandboxUnavailable as exc:
        return _GrepOutcome([], error=f"Not run: {exc}.")
    except OSError as exc:
        return _GrepOutcome([], error=f"The search could not start: {exc.strerror or exc}.")
    raw = result.stdout
    if result.truncated:
        raw = raw[: raw.rfind("\n", 0, raw.rfind("[output truncated")) + 1]
    lines: list[str] = []
    for line in raw.splitlines()[: args.max_results + 1]:
        line = _RG_OMITTED.sub(rf"\1{LONG_LINE_NOTE}", line)
        lines.append(line.removeprefix("./"))
    more = len(lines) > args.max_results or result.truncated
    if not lines and not result.timed_out and result.exit_code == 2:
        message = result.stderr.strip()
        return _GrepOutcome(
            [], error=f"The search failed: {message or 'ripgrep exited with status 2'}"
        )
    return _GrepOutcome(lines[: args.max_results], more=more, timed_out=result.timed_out)


def _walk_files(target: Path) -> Iterator[Path]:
    """Regular files under ``target`` in ripgrep's ``--sort path`` order; no symlinks, no .git."""
    if target.is_file():
        yield target
        return
    with os.scandir(target) as scan:
        entries = sorted(scan, key=lambda e: e.name)
    for entry in entries:
        if entry.name == GIT_DIR_NAME or entry.is_symlink():
            continue
        if entry.is_dir(follow_symlinks=False):
            yield from _walk_files(Path(entry.path))
        elif entry.is_file(follow_symlinks=False):
            yield Path(entry.path)


def _glob_filter(glob: str | None) -> tuple[re.Pattern[str], bool, bool] | None:
    """The glob as (regex, matched against the whole relative path, excludes)."""
    if not glob:
        return None
    body = glob.removeprefix("!")
    return glob_to_regex(body), "/" in body, glob.startswith("!")


def _grep_python(root: Path, target: Path, args: GrepInput) -> _GrepOutcome:
    flags = re.IGNORECASE if args.ignore_case else 0
    try:
        regex = re.compile(args.pattern, flags)
    except re.error as exc:
        return _GrepOutcome([], error=f"Invalid regular expression {args.pattern!r}: {exc}.")
    glob_filter = _glob_filter(args.glob)
    lines: list[str] = []
    for file in _walk_files(target):
        relative = Path(os.path.relpath(file, root)).as_posix()
        if glob_filter is not None:
            glob_regex, by_path, negate = glob_filter
            subject = relative if by_path else file.name
            if bool(glob_regex.match(subject)) == negate:
                continue
        try:
            _grep_file(file, relative, regex, lines, args.max_results + 1)
        except OSError:
            continue
        if len(lines) > args.max_results:
            return _GrepOutcome(lines[: args.max_results], more=True)
    return _GrepOutcome(lines)


def _grep_file(
    file: Path, relative: str, regex: re.Pattern[str], lines: list[str], limit: int
) -> None:
    with file.open("rb") as handle:
        if _is_binary(handle.read(BINARY_SNIFF_BYTES)):
            return
        handle.seek(0)
        for number, raw in enumerate(handle, start=1):
            text = _strip_newline(raw.decode("utf-8", errors="replace"))
            if not regex.search(text):
                continue
            if len(raw.rstrip(b"\n")) > GREP_MAX_COLUMNS:
                text = LONG_LINE_NOTE
            lines.append(f"{relative}:{number}:{text}")
            if len(lines) >= limit:
                return


# -- create_file ---------------------------------------------------------------------------


class CreateFileInput(_Input):
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
    Input: ClassVar[type[BaseModel]] = CreateFileInput

    def detail(self, args: CreateFileInput) -> str:
        return args.path

    async def run(self, args: CreateFileInput, ctx: ToolContext) -> ToolResult:
        return await write_text_file(ctx.workspace, args.path, args.content, args.overwrite)


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
        path = resolve_in_workspace(workspace, user_path, write=True)
    except PathOutsideWorkspace as exc:
        return ToolResult.error(str(exc))
    shown = display_path(workspace, path)
    try:
        return await asyncio.to_thread(_write, path, shown, data, overwrite)
    except OSError as exc:
        return ToolResult.error(f"Cannot write {shown}: {exc.strerror or exc}.")


def _write(path: Path, shown: str, data: bytes, overwrite: bool) -> ToolResult:
    if path.is_dir():
        return ToolResult.error(f"{shown} is a directory.")
    existed = path.exists()
    if existed and not overwrite:
        return ToolResult.error(
            f"{shown} already exists. Pass overwrite=true to replace it, or use str_replace "
            "to change part of it."
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    lines = data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
    verb = "Replaced" if existed else "Created"
    return ToolResult(f"{verb} {shown} ({lines} lines, {len(data):,} bytes).")


# -- str_replace ---------------------------------------------------------------------------


class StrReplaceInput(_Input):
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
    Input: ClassVar[type[BaseModel]] = StrReplaceInput

    def detail(self, args: StrReplaceInput) -> str:
        return args.path

    async def run(self, args: StrReplaceInput, ctx: ToolContext) -> ToolResult:
        if args.old_str == args.new_str:
            return ToolResult.error("old_str and new_str are identical; nothing would change.")
        try:
            path = resolve_in_workspace(ctx.workspace, args.path, write=True)
        except PathOutsideWorkspace as exc:
            return ToolResult.error(str(exc))
        shown = display_path(ctx.workspace, path)
        try:
            return await asyncio.to_thread(_replace, path, shown, args.old_str, args.new_str)
        except OSError as exc:
            return ToolResult.error(f"Cannot edit {shown}: {exc.strerror or exc}.")


def _replace(path: Path, shown: str, old: str, new: str) -> ToolResult:
    if not path.is_file():
        if path.exists():
            return ToolResult.error(f"{shown} is not a regular file.")
        return ToolResult.error(f"{shown} does not exist; use create_file to create it.")
    size = path.stat().st_size
    if size > MAX_EDIT_FILE_BYTES:
        return ToolResult.error(
            f"{shown} is {size:,} bytes; str_replace edits files up to {MAX_EDIT_FILE_BYTES:,}."
        )
    data = path.read_bytes()
    if _is_binary(data):
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
    path.write_bytes(edited.encode("utf-8"))
    first = text.count("\n", 0, at) + 1
    last = first + new.count("\n")
    all_lines = edited.split("\n")
    begin = max(1, first - SNIPPET_CONTEXT_LINES)
    finish = min(len(all_lines), last + SNIPPET_CONTEXT_LINES)
    snippet = _number_lines(begin, [_strip_newline(x) for x in all_lines[begin - 1 : finish]])
    return ToolResult(f"Edited {shown} (lines {first}-{last} now read):\n{snippet}")
