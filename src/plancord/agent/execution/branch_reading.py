"""What an execution branch holds, read for the people who decide on it: each step's
files with their line counts, which written paths git ignores, and the result's full diff.

Why apart from :class:`~plancord.agent.execution.branch.ExecutionBranch`: that object moves
git's state (start, step commits, Merge, Discard, Roll back, Push); this one only reads it,
for the completion card, ``/plan diff result`` and the operator's ``plan result-diff``, and
keeps the one thing of its own the reading needs: the host's private folder its diffs are
written to. Git runs as in the branch, in the agent's sandbox.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import tempfile
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from plancord.agent.execution.branch import BranchRecord
from plancord.agent.execution.host_git import BranchError, checked_git
from plancord.agent.host_io.git_run import run_git
from plancord.core.execution import StepNumber
from plancord.sandbox import SandboxPolicy

DIFF_FILE = "result.diff"
MAX_DIFF_BYTES = 1 << 31
"""The largest diff the host writes for a card or the operator (git's output past it is
dropped and the diff refused)."""
RESULTS_DIR = "results"
"""The directory of an agent's home (next to its workspace) holding the host's diffs."""


@dataclass(frozen=True, slots=True)
class FileChange:
    """One file of a step: lines added and removed (None for a binary file)."""

    path: str
    added: int | None
    removed: int | None


@dataclass(frozen=True, slots=True)
class StepCommit:
    step: StepNumber
    """The step's number as shown, as the host recorded it."""
    commit: str
    files: tuple[FileChange, ...]


class BranchReading:
    """Reads an execution branch of one workspace, through git in the agent's sandbox."""

    def __init__(self, policy: SandboxPolicy, results: Path | None = None) -> None:
        """``results``: the host's directory (outside the workspace) for the diffs it
        writes; without it the system's temporary directory."""
        self._policy = policy
        self._folder = results

    async def tip(self, record: BranchRecord) -> str:
        """The commit the execution branch points at now."""
        ref = f"refs/heads/{record.branch}^{{commit}}"
        return (await self._checked("rev-parse", "--verify", ref)).strip()

    async def steps(self, recorded: Sequence[tuple[StepNumber, str]]) -> list[StepCommit]:
        """The step commits the host recorded (``(step, commit)``, oldest first), with
        their files and line counts against each one's parent."""
        if not recorded:
            return []
        out = await self._checked(
            "log",
            "--no-walk=unsorted",
            "--no-renames",
            "--numstat",
            "-z",
            "--format=%x01%H",
            *(commit for _, commit in recorded),
            max_output=50_000_000,
        )
        files: dict[str, tuple[FileChange, ...]] = {}
        for chunk in out.split("\x01")[1:]:
            commit, _, numstat = chunk.partition("\x00")
            files[commit.strip()] = tuple(_numstat(numstat))
        return [StepCommit(step, commit, files.get(commit, ())) for step, commit in recorded]

    async def before_plan(self, record: BranchRecord) -> tuple[FileChange, ...]:
        """The work that was in the workspace before the plan and is on the branch from its
        first commit (the reviewed state's uncommitted and untracked changes, from the base
        at approval to the reviewed state), with line counts; none when there was none.
        Merge brings it with the steps' work, so the card shows it apart."""
        if record.reviewed_commit == record.base_commit:
            return ()
        return await self.changes(record.base_commit, record.reviewed_commit)

    async def changes(self, since: str, until: str) -> tuple[FileChange, ...]:
        """Every file that differs from commit ``since`` to ``until``, with line counts (the
        tree's own attributes not read)."""
        out = await self._bare_checked(
            "diff",
            "--no-renames",
            "--numstat",
            "-z",
            "--no-ext-diff",
            "--no-textconv",
            since,
            until,
            max_output=50_000_000,
        )
        return tuple(_numstat(out))

    async def ignored(self, paths: Sequence[str]) -> tuple[str, ...]:
        """Those of ``paths`` that are files git ignores (so no step commit holds them), in
        order."""
        asked = [p for p in dict.fromkeys(paths) if p and not p.startswith("-")][:500]
        if not asked:
            return ()
        found = await self._checked(
            "--literal-pathspecs",
            "ls-files",
            "-z",
            "--others",
            "--ignored",
            "--exclude-standard",
            "--",
            *asked,
        )
        hits = set(found.split("\x00"))
        return tuple(p for p in asked if p in hits)

    @contextlib.asynccontextmanager
    async def diff_file(self, record: BranchRecord) -> AsyncIterator[Path]:
        """The result's full diff: everything Merge brings, from the base at approval (so
        the work already in the workspace before the plan is in it too) to the pinned
        commit (or the branch's tip while none is pinned), in a file of the host's own
        (0600, in a 0700 folder outside the workspace: ``results``, else the system's
        temporary directory), removed when the block ends. Git's output reaches it through
        a pipe: git is never told a file name, so no link the agent left can redirect it;
        and the tree's own attributes are not read (only the git directory's, the host's).
        Raises BranchError when git cannot diff (the branch is gone) or the diff is past
        ``MAX_DIFF_BYTES``."""
        folder = await asyncio.to_thread(_private_folder, self._folder)
        try:
            target = folder / DIFF_FILE
            out = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
            try:
                output = await run_git(
                    self._policy,
                    *self._bare,
                    "diff",
                    "--binary",
                    "--no-color",
                    "--no-ext-diff",
                    "--no-textconv",
                    record.base_commit,
                    record.result_commit or f"refs/heads/{record.branch}",
                    max_output=MAX_DIFF_BYTES,
                    stdout_to=out,
                )
            finally:
                os.close(out)
            if not output.ok:
                raise BranchError(f"git diff failed: {output.message or output.code}")
            if output.truncated:
                raise BranchError(f"the diff is larger than the {MAX_DIFF_BYTES:,} bytes kept")
            yield target
        finally:
            await asyncio.to_thread(shutil.rmtree, folder, True)

    @property
    def _bare(self) -> tuple[str, ...]:
        """As a bare repository, from outside the tree: git then reads no ``.gitattributes``
        of the tree's, a file a step may commit (``* -diff`` would show every change as
        binary); the git directory's own still count."""
        return ("-C", "/", f"--git-dir={self._policy.workspace / '.git'}", "--bare")

    async def _checked(self, *args: str, max_output: int = 1_000_000) -> str:
        return await checked_git(self._policy, *args, max_output=max_output)

    async def _bare_checked(self, *args: str, max_output: int = 1_000_000) -> str:
        return await checked_git(self._policy, *self._bare, *args, max_output=max_output)


def _private_folder(parent: Path | None) -> Path:
    """A new folder only the host's user can enter, under ``parent`` (made 0700 too)."""
    if parent is not None:
        parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(parent, 0o700)
    return Path(tempfile.mkdtemp(prefix="diff-", dir=parent))


def _numstat(text: str) -> list[FileChange]:
    """``git log --numstat -z`` records: ``added\\tremoved\\tpath`` each ended by NUL."""
    changes: list[FileChange] = []
    for record in text.split("\x00"):
        record = record.strip("\n")
        if not record:
            continue
        added, removed, path = record.split("\t", 2)
        changes.append(
            FileChange(
                path,
                None if added == "-" else int(added),
                None if removed == "-" else int(removed),
            )
        )
    return changes
