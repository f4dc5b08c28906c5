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
        workspace = Path(os.path.realpath(workspace))
        manifest = json.loads((self._directory / _MANIFEST).read_text())
        kept = {path: _Kept(*row) for path, row in manifest["paths"].items()}
        for path, info in sorted(_outside(workspace, tracked).items()):
            want = kept.get(path)
            if want is None or want.kind != _kind(info.st_mode):
                _remove(workspace / path)
        directories: list[str] = []
        for path in sorted(kept):
            want = kept[path]
            target = workspace / path
            _check_parent(workspace, path)
            if want.kind == "dir":
                if not target.is_dir() or target.is_symlink():
                    _remove(target)
                    target.mkdir(mode=0o700)
                os.chmod(target, 0o700)  # writable until its children are back
                directories.append(path)
            elif want.kind == "link":
                if not target.is_symlink() or os.readlink(target) != want.target:
                    temporary = _temporary(target)
                    os.symlink(want.target, temporary)
                    os.replace(temporary, target)
            else:
                self._write_file(target, want)
            if want.kind != "dir":
                os.utime(target, ns=(want.mtime_ns, want.mtime_ns), follow_symlinks=False)
        for path in sorted(directories, key=lambda p: p.count("/"), reverse=True):
            want = kept[path]
            os.chmod(workspace / path, want.mode)
            os.utime(workspace / path, ns=(want.mtime_ns, want.mtime_ns))

    def forget(self) -> None:
        """Remove the keep (after Merge or Discard)."""
        shutil.rmtree(self._directory, ignore_errors=True)

    def _write_file(self, target: Path, want: _Kept) -> None:
        piece = Slice(_CONTENT, want.offset, want.size)
        if target.is_file() and not target.is_symlink() and matches(self._directory, piece, target):
            os.chmod(target, want.mode)
            return
        temporary = _temporary(target)
        out = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        try:
            copy_out(self._directory, piece, out)
        finally:
            os.close(out)
        os.chmod(temporary, want.mode)
        if target.is_dir() and not target.is_symlink():
            _remove(target)
        os.replace(temporary, target)


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


def _check_parent(workspace: Path, path: str) -> None:
    """Refuse to write ``path`` when its directory is not a real directory in its place."""
    parent = os.path.dirname(os.path.join(workspace, path))
    if os.path.realpath(parent) != os.path.normpath(parent):
        raise OSError(f"the directory of {path} is not where it was (a symlink is in the way)")


def _temporary(target: Path) -> Path:
    temporary = target.with_name(f".{target.name}.plancord-restore")
    _remove(temporary)
    return temporary


def _remove(path: Path) -> None:
    """Remove a path whatever it is (a directory with all it holds, made writable first)."""
    try:
        info = path.lstat()
    except FileNotFoundError:
        return
    if not stat.S_ISDIR(info.st_mode):
        path.unlink()
        return
    for directory, _, _ in os.walk(path):
        os.chmod(directory, 0o700)
    shutil.rmtree(path)
