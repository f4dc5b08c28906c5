"""The ``grep`` tool: search file contents with ripgrep, inside the agent's sandbox.

The pattern comes from the model. Matching a regular expression in Python's ``re`` can
backtrack for minutes and holds the GIL while it does, so no model-supplied pattern is ever
matched in the bot process: ripgrep (whose engine runs in linear time) runs in the agent's
sandbox, like every process an agent causes, with a timeout and a cap on its output. Where
ripgrep is not installed the tool says so instead of falling back to ``re``; the shell's
``grep`` is still there, sandboxed too.

Lines from a file with more than one hard link are dropped: its other name may lie outside
the workspace, and the file tools never show such a file.
"""

from __future__ import annotations

import asyncio
import functools
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from pydantic import BaseModel, Field

from plancord.agent.tools.base import StrictInput, Tool, ToolContext, ToolResult
from plancord.agent.tools.fileio import UnsafeFile, status, tree_of
from plancord.agent.tools.globbing import bad_pattern
from plancord.agent.tools.paths import (
    GIT_DIR_NAME,
    MAX_PATH_CHARS,
    PathOutsideWorkspace,
    display_path,
    resolve_in_workspace,
)
from plancord.core.gate import ToolKind
from plancord.sandbox import SandboxPolicy, SandboxUnavailable, run_sandboxed

MAX_GREP_RESULTS = 1000
DEFAULT_GREP_RESULTS = 100
MAX_GREP_OUTPUT_BYTES = 100_000
GREP_MAX_COLUMNS = 500
GREP_TIMEOUT_SECONDS = 30.0
LONG_LINE_NOTE = f"[line longer than {GREP_MAX_COLUMNS} bytes omitted; view the file there]"
_RG_OMITTED = re.compile(r"(:\d+:)\[Omitted long [^\]]*\]\Z")
_RESULT_FILE = re.compile(r"\A(.*?):\d+:")


class GrepInput(StrictInput):
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
        "Search file contents for a regular expression (ripgrep), inside the workspace. "
        "Returns matching lines as `path:line:text`, sorted by path; binary files and `.git` "
        "are skipped, hidden files included. Narrow the search with `path` and `glob`. "
        "Use view to read around a match."
    )
    kind: ClassVar[ToolKind] = ToolKind.READ_ONLY
    Input: ClassVar[type[BaseModel]] = GrepInput

    def detail(self, args: GrepInput) -> str:
        return f"{args.path}:{args.pattern}"

    async def run(self, args: GrepInput, ctx: ToolContext) -> ToolResult:
        if args.glob is not None and (problem := bad_pattern(args.glob.removeprefix("!"))):
            return ToolResult.error(f"glob: {problem}")
        if "\x00" in args.pattern:
            return ToolResult.error("The pattern contains a NUL byte.")
        try:
            shown, exists = await asyncio.to_thread(_resolve_existing, ctx.workspace, args.path)
        except (PathOutsideWorkspace, UnsafeFile) as exc:
            return ToolResult.error(str(exc))
        if not exists:
            return ToolResult.error(f"{shown} does not exist.")
        if not ripgrep_installed():
            return ToolResult.error(
                "The grep tool needs ripgrep, which is not installed on this host (ask the "
                "operator: apt-get install ripgrep). bash_execute's grep works meanwhile."
            )
        outcome = await _grep_ripgrep(ctx.read_only_policy, shown, args)
        if outcome.error is not None:
            return ToolResult.error(outcome.error)
        if outcome.lines:
            await asyncio.to_thread(_drop_hard_linked, ctx.workspace, outcome)
        return ToolResult(_grep_report(outcome, args, shown))


def _resolve_existing(workspace: Path, path: str) -> tuple[str, bool]:
    """The workspace path ``path`` names, and whether it is there (reached from the root,
    no link followed)."""
    shown = display_path(workspace, resolve_in_workspace(workspace, path))
    return shown, status(tree_of(workspace), shown) is not None


@functools.cache
def ripgrep_installed() -> bool:
    return shutil.which("rg") is not None


@dataclass(slots=True)
class _GrepOutcome:
    lines: list[str]
    more: bool = False
    timed_out: bool = False
    error: str | None = None
    hard_linked: list[str] = field(default_factory=list)


def _drop_hard_linked(workspace: Path, outcome: _GrepOutcome) -> None:
    """Remove the lines of files that have another name somewhere (``st_nlink > 1``)."""
    named = [
        (line, found.group(1) if (found := _RESULT_FILE.match(line)) else "")
        for line in outcome.lines
    ]
    try:
        looked = tree_of(workspace).lstat_many(sorted({name for _, name in named if name}))
    except (OSError, ValueError):
        looked = {}
    verdict = {name: info is not None and info.st_nlink > 1 for name, info in looked.items()}
    outcome.hard_linked = sorted(name for name, linked in verdict.items() if linked)
    outcome.lines = [line for line, name in named if not verdict.get(name, False)]


def _grep_report(outcome: _GrepOutcome, args: GrepInput, shown: str) -> str:
    if not outcome.lines:
        where = "the workspace" if shown == "." else shown
        text = f"No matches for {args.pattern!r} in {where}"
        text += f" (files matching {args.glob!r})." if args.glob else "."
        if outcome.timed_out:
            text += f" The search stopped after {GREP_TIMEOUT_SECONDS:.0f} s; narrow `path`."
    else:
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
            text += (
                f"\n[the search stopped after {GREP_TIMEOUT_SECONDS:.0f} s; results are partial]"
            )
    if outcome.hard_linked:
        text += (
            f"\n[matches in {', '.join(outcome.hard_linked)} are not shown: a file with more "
            "than one hard link may have another name outside the workspace]"
        )
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
