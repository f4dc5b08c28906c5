"""The repositories nested in a workspace, each of which git may read the config of.

Why this exists: the allow-listed config view (``config_view``) is of a repository's own
config. A workspace may hold other repositories: a sub-directory with its own ``.git``, a
submodule (a ``.git`` file leading into ``.git/modules``), a workspace that is not itself a
repository but holds several. A command that runs git there (``git -C sub status``, a tool
run in ``sub``, ``cd sub && git log``) makes git read *that* repository's config, so each
must get its own view. :func:`repositories` finds them: every directory under the workspace
holding a ``.git`` entry, without descending into ``.git`` directories or through symbolic
links (git's discovery from a directory inside the workspace finds no others; a ``.git``
that is itself a symbolic link or leads outside is refused by ``git_config.locate``).

Walking a large workspace before every command would cost more than the command, so the
result is kept with the identity and times of every directory walked; when none changed
(creating, renaming or removing an entry changes its directory's times), no walk is made.
A directory changed less than ``config_cache.SETTLE_NS`` before the walk is not trusted:
the result is not kept. More than :data:`MAX_DIRECTORIES` directories: the run is refused,
since what lies beyond is unknown.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from pathlib import Path

from plancord.sandbox import config_cache

#: The most directories walked in one workspace; beyond it git could find a repository
#: plancord has not seen, so the run is refused.
MAX_DIRECTORIES = 200_000

_DirStat = tuple[int, int, int, int]


class TooManyDirectories(Exception):
    """The workspace has more directories than plancord walks."""


def _dir_stat(path: str) -> _DirStat | None:
    try:
        info = os.lstat(path)
    except OSError:
        return None
    return (info.st_dev, info.st_ino, info.st_mtime_ns, info.st_ctime_ns)


@dataclass(frozen=True, slots=True)
class _Walk:
    directories: dict[str, _DirStat | None]
    found: tuple[Path, ...]

    def holds(self) -> bool:
        return all(_dir_stat(path) == stat for path, stat in self.directories.items())


def _walk(workspace: Path) -> _Walk:
    directories: dict[str, _DirStat | None] = {}
    found: list[Path] = []
    pending = [str(workspace)]
    while pending:
        directory = pending.pop()
        directories[directory] = _dir_stat(directory)
        if len(directories) > MAX_DIRECTORIES:
            raise TooManyDirectories(
                f"the workspace holds more than {MAX_DIRECTORIES:,} directories; plancord "
                "cannot check them for nested repositories, whose config git would obey"
            )
        try:
            entries = os.scandir(directory)
        except OSError:
            continue
        with entries:
            for entry in entries:
                if entry.name == ".git":
                    if directory != str(workspace):
                        found.append(Path(directory))
                elif entry.is_dir(follow_symlinks=False):
                    pending.append(entry.path)
    return _Walk(directories, tuple(sorted(found)))


_lock = threading.Lock()
_walks: dict[str, _Walk] = {}


def repositories(workspace: Path) -> tuple[Path, ...]:
    """The directories under ``workspace`` (not itself) that hold a ``.git`` entry.

    Raises :class:`TooManyDirectories` when the workspace is too large to walk.
    """
    key = str(workspace)
    with _lock:
        kept = _walks.get(key)
    if kept is not None and kept.holds():
        return kept.found
    started = config_cache.now_ns()
    walk = _walk(workspace)
    settled = all(
        stat is not None and max(stat[2], stat[3]) <= started - config_cache.SETTLE_NS
        for stat in walk.directories.values()
    )
    with _lock:
        if settled:
            _walks[key] = walk
        else:
            _walks.pop(key, None)
    return walk.found


def forget() -> None:
    """Drop every kept walk (tests, benchmarks)."""
    with _lock:
        _walks.clear()
