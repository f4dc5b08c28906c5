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

The workspace is the agent's: the walk never follows a symlink, and nothing is written
under a directory that resolves anywhere but its own place in the workspace.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import stat
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from plancord.agent.execution.pack import PackFull, Slice, copy_out, matches, write_pack

KEPT_DIR = "kept"
"""The directory of an agent's home (next to its workspace) holding the executions' keeps."""
_MANIFEST = "manifest.json"
_CONTENT = "content"
_GIT_DIR = ".git"
_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW


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
        outside = _outside(workspace, tracked)
        if len(outside) > self._limits.max_paths:
            raise KeepTooLarge(
                f"the workspace holds {len(outside):,} ignored paths; an execution keeps at "
                f"most {self._limits.max_paths:,} to restore them on Discard"
            )
        files = [(p, workspace / p) for p, info in outside.items() if stat.S_ISREG(info.st_mode)]
        total = sum(outside[p].st_size for p, _ in files)
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
                    self._directory, _CONTENT, files, max_bytes=self._limits.max_bytes
                )
            except PackFull as exc:
                raise KeepTooLarge(f"the workspace's ignored files grew while kept: {exc}") from exc
            listed = {}
            for path, info in outside.items():
                kept = _entry(workspace, path, info, content)
                if kept is not None:
                    listed[path] = _as_row(kept)
            temporary = self._directory / f"{_MANIFEST}.partial"
            temporary.write_text(json.dumps({"version": 1, "paths": listed}))
            os.replace(temporary, self._directory / _MANIFEST)
        except BaseException:
            self.forget()
            raise

    def restore(self, workspace: Path, tracked: Collection[str]) -> None:
        """Make the paths of ``workspace`` outside ``tracked`` exactly the kept ones. Raises
        OSError when the keep cannot be read or a path cannot be put back."""
        manifest = json.loads((self._directory / _MANIFEST).read_text())
        kept = {path: _Kept(*row) for path, row in manifest["paths"].items()}
        outside = _outside(workspace, tracked)
        root = os.open(workspace, _DIRECTORY)
        try:
            for path in sorted(p for p, info in outside.items() if stat.S_ISDIR(info.st_mode)):
                with _At(root, path) as at:
                    at.chmod(0o700)  # so what it holds can be removed or written
            for path, info in sorted(outside.items()):
                want = kept.get(path)
                if want is None or want.kind != _kind(info.st_mode):
                    with contextlib.suppress(FileNotFoundError), _At(root, path) as at:
                        at.remove()  # (gone already when a directory above it went)
            for path in sorted(kept):
                with _At(root, path) as at:
                    self._put(at, kept[path])
            directories = [p for p in kept if kept[p].kind == "dir"]
            for path in sorted(directories, key=lambda p: p.count("/"), reverse=True):
                with _At(root, path) as at:
                    at.chmod(kept[path].mode)
                    at.utime(kept[path].mtime_ns)
        finally:
            os.close(root)

    def forget(self) -> None:
        """Remove the keep (after Merge or Discard)."""
        shutil.rmtree(self._directory, ignore_errors=True)

    def _put(self, at: _At, want: _Kept) -> None:
        """One kept path back in its place (a directory stays writable until the end)."""
        now = at.lstat()
        if want.kind == "dir":
            if now is None:
                os.mkdir(at.name, 0o700, dir_fd=at.dir)
            return
        if want.kind == "link":
            if now is None or os.readlink(at.name, dir_fd=at.dir) != want.target:
                temporary = at.temporary()
                os.symlink(want.target, temporary, dir_fd=at.dir)
                at.replace_with(temporary)
        else:
            piece = Slice(_CONTENT, want.offset, want.size)
            same = now is not None and stat.S_IMODE(now.st_mode) == want.mode
            if not same or not at.holds(self._directory, piece):
                temporary = at.temporary()
                flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
                out = os.open(temporary, flags, 0o600, dir_fd=at.dir)
                try:
                    copy_out(self._directory, piece, out)
                    os.fchmod(out, want.mode)
                finally:
                    os.close(out)
                at.replace_with(temporary)
        at.utime(want.mtime_ns)


class _At:
    """A workspace path reached from the workspace's top without following any symlink: an
    open descriptor of its directory and its name there, so nothing the host writes can
    land outside the workspace, whatever links the agent left."""

    def __init__(self, root: int, path: str) -> None:
        *parents, self.name = path.split("/")
        self.dir = os.dup(root)
        try:
            for part in parents:
                inner = os.open(part, _DIRECTORY, dir_fd=self.dir)
                os.close(self.dir)
                self.dir = inner
        except BaseException:
            os.close(self.dir)
            raise

    def __enter__(self) -> _At:
        return self

    def __exit__(self, *_: object) -> None:
        os.close(self.dir)

    def lstat(self) -> os.stat_result | None:
        try:
            return os.stat(self.name, dir_fd=self.dir, follow_symlinks=False)
        except FileNotFoundError:
            return None

    def holds(self, directory: Path, piece: Slice) -> bool:
        try:
            fd = os.open(self.name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=self.dir)
        except OSError:
            return False
        try:
            return stat.S_ISREG(os.fstat(fd).st_mode) and matches(directory, piece, fd)
        finally:
            os.close(fd)

    def chmod(self, mode: int) -> None:
        """Change the mode of the path itself, never of what a link points at."""
        fd = os.open(self.name, os.O_PATH | os.O_NOFOLLOW, dir_fd=self.dir)
        try:
            if not stat.S_ISLNK(os.fstat(fd).st_mode):
                os.chmod(f"/proc/self/fd/{fd}", mode)
        finally:
            os.close(fd)

    def utime(self, mtime_ns: int) -> None:
        os.utime(self.name, ns=(mtime_ns, mtime_ns), dir_fd=self.dir, follow_symlinks=False)

    def remove(self) -> None:
        now = self.lstat()
        if now is None:
            return
        if stat.S_ISDIR(now.st_mode):
            shutil.rmtree(self.name, dir_fd=self.dir)
        else:
            os.unlink(self.name, dir_fd=self.dir)

    def temporary(self) -> str:
        name = f".{self.name}.plancord-restore"
        with contextlib.suppress(FileNotFoundError):
            os.unlink(name, dir_fd=self.dir)
        return name

    def replace_with(self, temporary: str) -> None:
        now = self.lstat()
        if now is not None and stat.S_ISDIR(now.st_mode):
            self.remove()
        os.replace(temporary, self.name, src_dir_fd=self.dir, dst_dir_fd=self.dir)


def _outside(workspace: Path, tracked: Collection[str]) -> dict[str, os.stat_result]:
    """Every path under ``workspace`` (not its ``.git``) that is neither a tracked file nor
    a directory holding one, by ``lstat``; a directory outside is listed with all it holds."""
    files = set(tracked)
    holding = {p.rsplit("/", i)[0] for p in files for i in range(1, p.count("/") + 1)}
    found: dict[str, os.stat_result] = {}
    pending: list[tuple[str, str, bool]] = [(os.fspath(workspace), "", True)]
    while pending:
        directory, prefix, inside = pending.pop()
        with os.scandir(directory) as scanner:
            for item in scanner:
                relative = prefix + item.name
                if prefix == "" and item.name == _GIT_DIR:
                    continue
                info = item.stat(follow_symlinks=False)
                real_dir = stat.S_ISDIR(info.st_mode)
                if inside and relative in files:
                    continue
                if inside and relative in holding and real_dir:
                    pending.append((item.path, relative + "/", True))
                    continue
                found[relative] = info
                if real_dir:
                    pending.append((item.path, relative + "/", False))
    return found


def _entry(
    workspace: Path, path: str, info: os.stat_result, content: dict[str, Slice]
) -> _Kept | None:
    mode, kind = stat.S_IMODE(info.st_mode), _kind(info.st_mode)
    if kind == "file":
        piece = content[path]
        return _Kept(kind, mode, info.st_mtime_ns, offset=piece.offset, size=piece.size)
    if kind == "link":
        return _Kept(kind, mode, info.st_mtime_ns, target=os.readlink(workspace / path))
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
