"""A stat snapshot of a workspace, and what differs between two of them.

Why this exists: the host must see what a call changed, not what the agent says it changed,
and it must see it cheaply after every call that can change files. One ``lstat`` per path
(inode, size, mtime, ctime, mode) catches every change a process can make: a write moves
ctime, which no process can set back; a replace changes the inode. The one blind spot is a
same-size write within the file system clock's tick of the previous look ("racy" entries, as
git calls them); the observer compares those by content.

The walk goes through the workspace's one door (``walk.WorkspaceTree``) and never follows a
symlink, in any component (a write through a link inside the workspace shows as a change of
its target, which is walked in its own place; a link pointing outside is itself a path).
Inside ``.git`` only the repository's state is kept (HEAD, index, refs, config, hooks,
info), not its objects or logs. The walk is bounded in paths and time: past either bound it
gives up, and the caller must treat the call as unobserved.
"""

from __future__ import annotations

import errno
import os
import stat
import time
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

from plancord.agent.host_io.walk import WorkspaceTree

GIT_DIR = ".git"
_GIT_STATE = frozenset({"HEAD", "index", "packed-refs", "config", "refs", "hooks", "info"})


@dataclass(frozen=True, slots=True)
class Entry:
    """One path as a look saw it."""

    ino: int
    size: int
    mtime_ns: int
    ctime_ns: int
    mode: int
    links: int = 1
    """The hard-link count: a file with several names can change under any of them."""

    @property
    def is_dir(self) -> bool:
        return stat.S_ISDIR(self.mode)

    @property
    def is_link(self) -> bool:
        return stat.S_ISLNK(self.mode)

    @property
    def is_file(self) -> bool:
        return stat.S_ISREG(self.mode)


Snapshot = Mapping[str, Entry]
"""Workspace-relative POSIX path → its entry."""


class TooLarge(Exception):
    """The walk passed its bound in paths or time; nothing it saw can be trusted."""


def take_snapshot(
    tree: WorkspaceTree, *, max_paths: int, max_seconds: float, under: str = ""
) -> dict[str, Entry]:
    """Every path of ``tree`` (or under its directory ``under``, the keys then starting
    with ``under/``), by ``lstat``, not the top itself. Raises TooLarge past ``max_paths``
    paths or ``max_seconds``, OSError when the top cannot be read. An ``under`` that is no
    longer a real directory holds nothing."""
    deadline = time.monotonic() + max_seconds
    found: dict[str, Entry] = {}
    try:
        for count, (relative, info) in enumerate(tree.scan(under, prune=_outside_git_state)):
            if relative != GIT_DIR:
                found[relative] = entry_of(info)
            if count % 256 == 0:
                if time.monotonic() > deadline:
                    raise TooLarge(f"looking at the workspace took longer than {max_seconds:g} s")
                if len(found) > max_paths:
                    raise TooLarge(f"the workspace holds more than {max_paths:,} paths")
    except (FileNotFoundError, NotADirectoryError):
        if not under:
            raise
        return {}
    except OSError as exc:
        if not under or exc.errno != errno.ELOOP:
            raise
        return {}
    if len(found) > max_paths:
        raise TooLarge(f"the workspace holds more than {max_paths:,} paths")
    return found


def look_at(tree: WorkspaceTree, path: str) -> Entry | None:
    """One workspace path's entry now, or None when it is gone."""
    info = tree.lstat(path)
    return None if info is None else entry_of(info)


def is_git_state(path: str) -> bool:
    """Whether a path under ``.git`` is part of what a snapshot keeps of the repository."""
    parts = path.split("/")
    return parts[0] == GIT_DIR and (len(parts) == 1 or parts[1] in _GIT_STATE)


def entry_of(info: os.stat_result) -> Entry:
    return Entry(
        info.st_ino,
        info.st_size,
        info.st_mtime_ns,
        info.st_ctime_ns,
        info.st_mode,
        info.st_nlink,
    )


def _outside_git_state(path: str) -> bool:
    """Whether a walk leaves ``path`` out: the repository's objects and logs are not its
    state."""
    return path.startswith(GIT_DIR + "/") and not is_git_state(path)


class ChangeKind(StrEnum):
    ADDED = "added"
    MODIFIED = "modified"
    DELETED = "deleted"
    RENAMED = "renamed"
    MODE = "mode"
    """Only the permission bits changed."""


@dataclass(frozen=True, slots=True)
class PathChange:
    """One path a call changed; ``source`` is where a renamed path came from."""

    path: str
    kind: ChangeKind
    source: str | None = None


def compare(before: Snapshot, after: Snapshot, suspect: frozenset[str]) -> list[PathChange]:
    """What changed from ``before`` to ``after``. ``suspect`` are paths whose entries are
    equal but whose content changed (found by the caller's content check of racy entries).
    A deleted file and an added one with the same inode, size and mtime are a rename."""
    changes: list[PathChange] = []
    added: list[str] = []
    for path, new in after.items():
        old = before.get(path)
        if old is None:
            added.append(path)
        elif _kind(old) != _kind(new) or old.ino != new.ino:
            changes.append(PathChange(path, ChangeKind.MODIFIED))
        elif new.is_dir:
            if old.mode != new.mode:
                changes.append(PathChange(path, ChangeKind.MODE))
        elif (old.size, old.mtime_ns) != (new.size, new.mtime_ns) or path in suspect:
            changes.append(PathChange(path, ChangeKind.MODIFIED))
        elif old.mode != new.mode:
            changes.append(PathChange(path, ChangeKind.MODE))
        elif old.ctime_ns != new.ctime_ns:
            changes.append(PathChange(path, ChangeKind.MODIFIED))
    deleted: dict[int, list[str]] = {}
    for path, old in before.items():
        if path not in after:
            deleted.setdefault(old.ino, []).append(path)
    for path in added:
        sources = deleted.get(after[path].ino)
        if sources and _same_file(before[sources[0]], after[path]):
            changes.append(PathChange(path, ChangeKind.RENAMED, sources.pop(0)))
        else:
            changes.append(PathChange(path, ChangeKind.ADDED))
    changes += [
        PathChange(path, ChangeKind.DELETED) for paths in deleted.values() for path in paths
    ]
    changes.sort(key=lambda change: change.path)
    return changes


def _same_file(old: Entry, new: Entry) -> bool:
    """A rename keeps the inode, the size and the mtime; a new file that happens to reuse a
    deleted one's inode number does not keep all three."""
    return old.is_file and new.is_file and (old.size, old.mtime_ns) == (new.size, new.mtime_ns)


def _kind(entry: Entry) -> int:
    return stat.S_IFMT(entry.mode)


def refresh(
    tree: WorkspaceTree,
    previous: Snapshot,
    paths: set[str],
    trees: set[str],
    *,
    max_paths: int,
    max_seconds: float,
) -> tuple[dict[str, Entry], set[str]]:
    """``previous`` brought up to date by looking again only at ``paths`` and walking the
    directories ``trees`` whole (the kernel said nothing else changed), and at every other
    name of a file with several hard links among them; the new snapshot and the paths whose
    entries may differ. Raises TooLarge as ``take_snapshot`` does."""
    entries = dict(previous)
    candidates: set[str] = set()

    def drop_under(directory: str) -> None:
        under = [p for p in entries if p.startswith(directory + "/")]
        for path in under:
            del entries[path]
        candidates.update(under)

    def walk(directory: str) -> None:
        drop_under(directory)
        found = take_snapshot(tree, max_paths=max_paths, max_seconds=max_seconds, under=directory)
        entries.update(found)
        candidates.update(found)

    for directory in sorted(trees):
        walk(directory)
    wanted = sorted(p for p in paths if not (p.startswith(GIT_DIR) and not is_git_state(p)))
    looked = tree.lstat_many(wanted)
    for path in wanted:
        old = entries.get(path)
        info = looked[path]
        new = None if info is None else entry_of(info)
        candidates.add(path)
        if new is None:
            entries.pop(path, None)
            if old is not None and old.is_dir:
                drop_under(path)
            continue
        entries[path] = new
        if new.is_dir and path not in trees and (old is None or not old.is_dir):
            walk(path)
        elif old is not None and old.is_dir and not new.is_dir:
            drop_under(path)
    shared = {entries[p].ino for p in candidates if p in entries and entries[p].links > 1}
    if shared:
        for path, entry in list(entries.items()):
            if entry.ino in shared and path not in candidates:
                candidates.add(path)
                now = look_at(tree, path)
                if now is None:
                    del entries[path]
                else:
                    entries[path] = now
    if len(entries) > max_paths:
        raise TooLarge(f"the workspace holds more than {max_paths:,} paths")
    return entries, candidates
