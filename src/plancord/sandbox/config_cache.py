"""git's reading of a repository's config, kept while nothing git read has changed.

Why this exists: before every sandboxed process in a repository, git reads the repository's
config in a sandbox of its own (``config_view``), which doubles the cost of each command.
The reading only changes when a file git read changes, so it is kept, keyed by the ``stat``
(device, inode, mode, size, mtime and ctime in nanoseconds) of every file it depends on:

* the git program, the git directory (its device and inode), ``HEAD`` (an ``includeIf "onbranch:"``
  depends on it), the repository's ``config`` and ``config.worktree``;
* every file git reported reading (``--show-origin``);
* every file an ``include.path`` or ``includeIf.*.path`` names, read or not (one that does
  not exist yet is recorded as missing, so its appearing is a change).

Any of these changed, appeared or vanished: the reading is made again. A reading is not kept
at all (fail closed: read again next time) when one of these files lies outside the
directories mounted at the same path in the sandbox (the workspace and the shared
directories: ``/proc/self/cwd``, ``/tmp`` or ``~`` mean something else inside), when a path
goes through a symbolic link, when an origin is not a file, or when a file was changed less
than :data:`SETTLE_NS` before git read it (coarse timestamps could hide a second write in
the same tick; ctime also changes on a rewrite that restores size and mtime).
"""

from __future__ import annotations

import os
import shutil
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

from plancord.sandbox import git_config

#: How long a file must have been left alone before a reading that depends on it is kept.
SETTLE_NS = 1_000_000_000
#: Readings kept at most (the least recently used goes first).
CAPACITY = 512

Stat = tuple[int, int, int, int, int, int] | None


def _stat(path: str) -> Stat:
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError:
        return (-1, -1, -1, -1, -1, -1)
    return (
        info.st_dev,
        info.st_ino,
        info.st_mode,
        info.st_size,
        info.st_mtime_ns,
        info.st_ctime_ns,
    )


def _identity(path: str) -> tuple[int, int] | None:
    """Which directory ``path`` is (device and inode): its times change with every file
    created in it, its identity only when it is replaced."""
    stat = _stat(path)
    return None if stat is None else (stat[0], stat[1])


@dataclass(frozen=True, slots=True)
class Fingerprint:
    """The files a reading depends on and their ``stat`` when it was made, and the git
    directory's identity."""

    paths: tuple[str, ...]
    stats: tuple[Stat, ...]
    git_dir: str
    git_dir_identity: tuple[int, int] | None

    def holds(self) -> bool:
        """Whether every file is as it was (checked now, on the host)."""
        if _identity(self.git_dir) != self.git_dir_identity:
            return False
        return tuple(_stat(path) for path in self.paths) == self.stats


def _include_targets(root: Path, listing: git_config.Listing) -> list[Path] | None:
    """Where each include in ``listing`` points, resolved as git resolves it; None when one
    cannot be resolved outside the sandbox (``~``, ``%(prefix)``, an origin not a file)."""
    targets: list[Path] = []
    for (key, value), origin in zip(listing.entries, listing.origins, strict=True):
        if origin is None:
            return None
        section, _, rest = key.partition(".")
        if section not in ("include", "includeif") or rest.rpartition(".")[2] != "path":
            continue
        if value is None or not value or value.startswith(("~", "%(")):
            return None
        base = (root / origin).parent
        targets.append(base / value)
    return targets


def _plain_inside(path: Path, roots: tuple[Path, ...]) -> bool:
    """``path`` is absolute, inside one of ``roots``, and no part of it is a symbolic link
    (so it names the same file on the host as in the sandbox)."""
    normal = os.path.normpath(path)
    if not os.path.isabs(normal) or os.path.realpath(normal) != normal:
        return False
    return any(Path(normal).is_relative_to(root) for root in roots)


def fingerprint(
    root: Path,
    repository: git_config.Repository,
    listing: git_config.Listing,
    roots: tuple[Path, ...],
    *,
    read_at_ns: int,
) -> Fingerprint | None:
    """What the reading of ``root``'s config made just now depends on; None when it must not
    be kept. ``read_at_ns``: ``time.time_ns()`` before git started reading."""
    targets = _include_targets(root, listing)
    if targets is None:
        return None
    if not _plain_inside(repository.directory, roots):
        return None
    read = [root / origin for origin in listing.origins if origin is not None]
    if not all(path.is_file() for path in read):
        # git printed its origins relative to where it ended up; a file that is not there
        # from ``root`` means git read another repository's config than ``root``'s.
        return None
    depends = [
        repository.directory / "HEAD",
        repository.config,
        repository.directory / "config.worktree",
        *read,
        *targets,
    ]
    paths: list[str] = []
    for path in depends:
        if not _plain_inside(path, roots):
            return None
        if (normal := os.path.normpath(path)) not in paths:
            paths.append(normal)
    stats = [_stat(path) for path in paths]
    if any(stat is not None and max(stat[4], stat[5]) > read_at_ns - SETTLE_NS for stat in stats):
        return None
    git = shutil.which("git") or "git"
    paths.append(git)
    stats.append(_stat(os.path.realpath(git)))
    directory = os.path.normpath(repository.directory)
    return Fingerprint(tuple(paths), tuple(stats), directory, _identity(directory))


Key = tuple[str, str, str, tuple[str, ...], str | None]


class ViewCache:
    """Readings by repository; safe to use from the runner's worker threads."""

    def __init__(self, capacity: int = CAPACITY) -> None:
        self._entries: OrderedDict[Key, tuple[Fingerprint, git_config.ConfigView]] = OrderedDict()
        self._lock = threading.Lock()
        self._capacity = capacity

    def get(self, key: Key) -> git_config.ConfigView | None:
        """The kept view when every file it depends on is unchanged, else None."""
        with self._lock:
            found = self._entries.get(key)
        if found is None:
            return None
        kept, view = found
        if not kept.holds():
            with self._lock:
                if self._entries.get(key) is found:
                    del self._entries[key]
            return None
        with self._lock:
            if key in self._entries:
                self._entries.move_to_end(key)
        return view

    def put(self, key: Key, kept: Fingerprint, view: git_config.ConfigView) -> None:
        with self._lock:
            self._entries[key] = (kept, view)
            self._entries.move_to_end(key)
            while len(self._entries) > self._capacity:
                self._entries.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


def key(
    root: Path, repository: git_config.Repository, shared: tuple[Path, ...], git_dir: Path | None
) -> Key:
    """A reading is of the repository git finds from ``root``, with what the sandbox mounts."""
    return (
        str(root),
        str(repository.directory),
        str(repository.config),
        tuple(str(path) for path in shared),
        str(git_dir) if git_dir else None,
    )


def now_ns() -> int:
    return time.time_ns()


#: The process's one cache of readings.
VIEWS = ViewCache()
