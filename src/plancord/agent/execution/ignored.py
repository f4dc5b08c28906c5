"""What git does not keep of the reviewed tree, kept per execution so Discard is exact.

Why this exists: an execution branch's first commit holds the reviewed tree as git sees it,
tracked files and the untracked ones that are not ignored. Ignored paths (``.env``,
``build/``, whatever ``.gitignore`` or ``.git/info/exclude`` name) and empty directories
are in no commit, so ``git reset --hard`` and ``git clean`` can neither put back an ignored
file execution changed or deleted nor remove one it created. When execution starts,
:meth:`IgnoredKeep.keep` records every workspace path outside the reviewed commit's tree
(kind, mode, mtime, symlink target; file contents in one pack) in a private directory of the
data directory, so it survives a restart. :meth:`IgnoredKeep.restore`, once git has put
back what it keeps, removes each path outside that tree that was not kept and writes back
each kept one that differs. The keep is bounded in bytes and paths: past either bound
execution does not start, and the approver is told why.

The workspace is the agent's: every read and write goes through its one door
(``walk.WorkspaceTree``), which never follows a symlink in any component.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import stat
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from plancord.agent.execution.pack import PackFull, Slice, copy_out, matches, write_pack
from plancord.agent.host_io.walk import WorkspaceTree

log = logging.getLogger(__name__)

KEPT_DIR = "kept"
"""The directory of an agent's home (next to its workspace) holding the executions' keeps."""
_MANIFEST = "manifest.json"
_CONTENT = "content"
_GIT_DIR = ".git"
WHOLE_KEEP = "*"
"""What ``IgnoredKeep.restore`` names when the whole keep is missing or unreadable."""


@dataclass(frozen=True, slots=True)
class KeepLimits:
    """How much of the workspace's ignored paths one execution may keep."""

    max_bytes: int = 1 << 30
    max_paths: int = 200_000


class KeepTooLarge(Exception):
    """The ignored paths are more than an execution may keep; the message says how much."""


@dataclass(frozen=True, slots=True)
class _Kept:
    kind: str
    """``dir``, ``file`` or ``link``."""
    mode: int
    mtime_ns: int
    target: str = ""
    offset: int = 0
    size: int = 0


class IgnoredKeep:
    """One execution's kept paths, in ``directory`` (private, 0700)."""

    def __init__(self, directory: Path, limits: KeepLimits | None = None) -> None:
        self._directory = directory
        self._limits = limits or KeepLimits()

    @property
    def kept(self) -> bool:
        """Whether a complete keep is there to restore from."""
        return (self._directory / _MANIFEST).is_file()

    def keep(self, workspace: Path, tracked: Collection[str]) -> None:
        """Record every path of ``workspace`` outside ``tracked`` (the reviewed commit's
        file paths). Raises KeepTooLarge past the limits, OSError when a path cannot be
        read; nothing is left behind then."""
        tree = WorkspaceTree(workspace)
        outside = _outside(tree, tracked)
        if len(outside) > self._limits.max_paths:
            raise KeepTooLarge(
                f"the workspace holds {len(outside):,} ignored paths; an execution keeps at "
                f"most {self._limits.max_paths:,} to restore them on Discard"
            )
        files = [p for p, info in outside.items() if stat.S_ISREG(info.st_mode)]
        total = sum(outside[p].st_size for p in files)
        if total > self._limits.max_bytes:
            raise KeepTooLarge(
                f"the workspace's ignored files hold {total:,} bytes; an execution keeps at "
                f"most {self._limits.max_bytes:,} to restore them on Discard"
            )
        self.forget()
        self._directory.mkdir(mode=0o700, parents=True)
        os.chmod(self._directory, 0o700)
        try:
            try:
                content = write_pack(
                    self._directory, _CONTENT, tree, files, max_bytes=self._limits.max_bytes
                )
            except PackFull as exc:
                raise KeepTooLarge(f"the workspace's ignored files grew while kept: {exc}") from exc
            listed = {}
            for path, info in outside.items():
                kept = _entry(tree, path, info, content)
                if kept is not None:
                    listed[path] = _as_row(kept)
            temporary = self._directory / f"{_MANIFEST}.partial"
            temporary.write_text(json.dumps({"version": 1, "paths": listed}))
            os.replace(temporary, self._directory / _MANIFEST)
        except BaseException:
            self.forget()
            raise

    def restore(self, workspace: Path, tracked: Collection[str]) -> tuple[str, ...]:
        """Make the paths of ``workspace`` outside ``tracked`` exactly the kept ones, parents
        before children, as far as the keep allows: the kept paths that could not be put
        back (their copy damaged), or ``(WHOLE_KEEP,)`` when the keep is missing or
        unreadable (nothing is then removed or written). Raises OSError only when the
        workspace itself cannot be written."""
        try:
            manifest = json.loads((self._directory / _MANIFEST).read_text())
            kept = {path: _Kept(*row) for path, row in manifest["paths"].items()}
        except (OSError, ValueError, KeyError, TypeError):
            return (WHOLE_KEEP,)
        tree = WorkspaceTree(workspace)
        outside = _outside(tree, tracked)
        for path in sorted(p for p, info in outside.items() if stat.S_ISDIR(info.st_mode)):
            tree.chmod(path, 0o700)  # so what it holds can be removed or written
        for path, info in sorted(outside.items()):
            want = kept.get(path)
            if want is None or want.kind != _kind(info.st_mode):
                tree.remove(path)  # (gone already when a directory above it went)
        failed: list[str] = []
        for path in sorted(kept):
            try:
                self._put(tree, path, kept[path])
            except (OSError, ValueError) as exc:
                failed.append(path)
                log.warning("the kept copy of %s could not be put back: %s", path, exc)
        directories = [p for p in kept if kept[p].kind == "dir" and p not in failed]
        for path in sorted(directories, key=lambda p: p.count("/"), reverse=True):
            tree.chmod(path, kept[path].mode)
            tree.utime(path, kept[path].mtime_ns)
        return tuple(failed)

    def forget(self) -> None:
        """Remove the keep (after Merge or Discard)."""
        shutil.rmtree(self._directory, ignore_errors=True)

    def _put(self, tree: WorkspaceTree, path: str, want: _Kept) -> None:
        """One kept path back in its place (a directory stays writable until the end)."""
        now = tree.lstat(path)
        if want.kind == "dir":
            tree.make_directory(path, 0o700)
            return
        if want.kind == "link":
            if now is None or not stat.S_ISLNK(now.st_mode) or tree.readlink(path) != want.target:
                tree.put_link(path, want.target, want.mtime_ns)
            else:
                tree.utime(path, want.mtime_ns)
            return
        piece = Slice(_CONTENT, want.offset, want.size)
        same = now is not None and stat.S_IMODE(now.st_mode) == want.mode
        if same and self._holds(tree, path, piece):
            tree.utime(path, want.mtime_ns)
            return
        write = lambda out: copy_out(self._directory, piece, out)  # noqa: E731
        tree.put_file(path, write, want.mode, want.mtime_ns)

    def _holds(self, tree: WorkspaceTree, path: str, piece: Slice) -> bool:
        try:
            fd = tree.open_file(path)
        except OSError:
            return False
        try:
            return matches(self._directory, piece, fd)
        finally:
            os.close(fd)


def _outside(tree: WorkspaceTree, tracked: Collection[str]) -> dict[str, os.stat_result]:
    """Every path of ``tree`` (not its ``.git``) that is neither a tracked file nor a real
    directory holding one, by ``lstat``; a directory outside is listed with all it holds."""
    files = set(tracked)
    holding = {p.rsplit("/", i)[0] for p in files for i in range(1, p.count("/") + 1)}

    def tracked_or_git(path: str) -> bool:
        return path == _GIT_DIR or path in files

    found: dict[str, os.stat_result] = {}
    for path, info in tree.scan(prune=tracked_or_git):
        parent = path.rpartition("/")[0]
        inside = not parent or (parent in holding and parent not in found)
        if inside and path in holding and stat.S_ISDIR(info.st_mode):
            continue
        found[path] = info
    return found


def _entry(
    tree: WorkspaceTree, path: str, info: os.stat_result, content: dict[str, Slice]
) -> _Kept | None:
    mode, kind = stat.S_IMODE(info.st_mode), _kind(info.st_mode)
    if kind == "file":
        piece = content[path]
        return _Kept(kind, mode, info.st_mtime_ns, offset=piece.offset, size=piece.size)
    if kind == "link":
        return _Kept(kind, mode, info.st_mtime_ns, target=tree.readlink(path))
    if kind == "dir":
        return _Kept(kind, mode, info.st_mtime_ns)
    return None  # a socket or a device: not kept, removed on restore


def _as_row(kept: _Kept) -> list[object]:
    return [kept.kind, kept.mode, kept.mtime_ns, kept.target, kept.offset, kept.size]


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "dir"
    if stat.S_ISLNK(mode):
        return "link"
    if stat.S_ISREG(mode):
        return "file"
    return "other"
