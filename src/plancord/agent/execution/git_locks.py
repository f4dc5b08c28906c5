"""The lock files a killed git left in a workspace's git directory, removed when provably stale.

Why this exists: git takes a lock by creating ``<file>.lock`` (``index.lock``, ``HEAD.lock``,
``refs/heads/<branch>.lock``, ``packed-refs.lock``, …) and renames or removes it when done. A
git the host ran that is killed mid-way (the bot SIGKILLed with its children, a machine that
went down) leaves the file behind, and every later git write in the repository then fails
("Unable to create '….lock': File exists"), the recovery's own undo included: the agent is
wedged until a person deletes the file.

A lock file is removed only when it is provably stale: no other plancord process whose lease
is live holds git in the workspace (``lease.ProcessLease.holding``: a process in another
container or on another host is invisible to this one's ``/proc``), a regular file whose
name ends in ``.lock``, that no process of this user holds open (each ``/proc/<pid>/fd``
is compared by device and inode, so a sandboxed git, which runs as the same user, counts
wherever its mount shows the file), and that nobody touched for :data:`STALE_SECONDS` (a
git that has just created it, or that closed it and is about to rename it, is not raced). A
process whose open files cannot be read makes no lock provably stale. Anything else is left
and named, so the refusal says which file blocks git; when the only locks left are too
recent, the sweep says how long until they are old enough (a recovery right after a restart
waits that long).

Only the workspace's own git directory is looked at, reached through the workspace's one
no-follow walk (``walk.WorkspaceTree``): a link anywhere in it, to a file or a directory, is
never followed, and a name is re-checked right before it is removed.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
import time
from dataclasses import dataclass
from pathlib import Path

from plancord.agent.host_io.walk import WorkspaceTree

STALE_SECONDS = 60.0
"""How long a lock file must have been left untouched before it may be removed."""

GIT_DIR = ".git"
_LOOSE_OBJECTS = re.compile(r"\.git/objects/[0-9a-f]{2}")
_LOCK_REFUSED = re.compile(r"\.lock'?:? File exists")

_Identity = tuple[int, int]


@dataclass(frozen=True, slots=True)
class LockSweep:
    """What a sweep of a git directory did: the lock files it removed, and those it left
    with why (workspace-relative paths, ``.git/HEAD.lock``)."""

    removed: tuple[str, ...] = ()
    left: tuple[tuple[str, str], ...] = ()
    stale_in: float | None = None
    """When every lock left was left only for being too recent: the seconds until the last
    of them is old enough (a sweep then may remove them all); None otherwise."""

    def removed_text(self) -> str:
        """A sentence for the agent's channel about what was removed ("" when nothing)."""
        if not self.removed:
            return ""
        names = ", ".join(f"`{path}`" for path in self.removed)
        return (
            f" Git's lock files {names} were left by a git that was stopped mid-way (no "
            f"process had them open and none was touched for {STALE_SECONDS:.0f} s); "
            "plancord removed them."
        )

    def left_text(self) -> str:
        """What blocks git, for a refusal ("" when nothing was left)."""
        if not self.left:
            return ""
        names = "; ".join(f"`{path}` ({why})" for path, why in self.left)
        return (
            f" Git's lock file blocks it: {names}. It can be removed by hand once no git "
            "runs in this repository."
        )


def refused_by_lock(message: str) -> bool:
    """Whether git's ``message`` says it could not take a lock because its file exists."""
    return _LOCK_REFUSED.search(message) is not None


def sweep_stale_locks(
    workspace: Path, *, stale_seconds: float = STALE_SECONDS, held_elsewhere: str = ""
) -> LockSweep:
    """Remove the provably stale lock files of ``workspace``'s own git directory (see the
    module's docstring); what was removed and what was left. ``held_elsewhere``: where
    other live plancord processes hold git in it ("" when none; else nothing is removed).
    Blocking: run it in a thread."""
    tree = WorkspaceTree(workspace)
    try:
        found = [
            (path, info)
            for path, info in tree.scan(GIT_DIR, prune=_loose_objects)
            if path.endswith(".lock")
        ]
    except OSError:
        return LockSweep()  # no real git directory here: nothing of git's to clear
    if not found:
        return LockSweep()
    if held_elsewhere:
        why = f"plancord on {held_elsewhere} is running git here (its lease is live)"
        return LockSweep(left=tuple((path, why) for path, _ in found))
    held = _open_files({(info.st_dev, info.st_ino) for _, info in found})
    removed: list[str] = []
    left: list[tuple[str, str]] = []
    recent: list[float] = []
    now = time.time()
    for path, info in found:
        if not stat.S_ISREG(info.st_mode):
            left.append((path, "not a regular file"))
        elif held is None:
            left.append((path, "a process whose open files cannot be read may hold it"))
        elif (info.st_dev, info.st_ino) in held:
            left.append((path, "a running process holds it open"))
        elif info.st_mtime > now - stale_seconds:
            left.append((path, f"changed less than {stale_seconds:.0f} s ago"))
            recent.append(info.st_mtime + stale_seconds - now)
        elif _remove_if_unchanged(tree, path, info):
            removed.append(path)
    stale_in = max(recent) if recent and len(recent) == len(left) else None
    return LockSweep(tuple(removed), tuple(left), stale_in)


def _loose_objects(path: str) -> bool:
    """A loose object directory: git keeps no lock there, and it may hold many files."""
    return _LOOSE_OBJECTS.fullmatch(path) is not None


def _open_files(wanted: set[_Identity]) -> set[_Identity] | None:
    """Which of ``wanted`` (device, inode) a process of this user holds open; None when the
    open files of one of its processes cannot be read (nothing is then provably unheld)."""
    uid = os.getuid()
    held: set[_Identity] = set()
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            if os.stat(f"/proc/{name}").st_uid != uid:
                continue
            descriptors = os.listdir(f"/proc/{name}/fd")
        except (FileNotFoundError, ProcessLookupError):
            continue  # the process ended meanwhile
        except PermissionError:
            return None
        for fd in descriptors:
            with contextlib.suppress(OSError):  # closed meanwhile
                info = os.stat(f"/proc/{name}/fd/{fd}")
                if (info.st_dev, info.st_ino) in wanted:
                    held.add((info.st_dev, info.st_ino))
    return held


def _remove_if_unchanged(tree: WorkspaceTree, path: str, seen: os.stat_result) -> bool:
    """Unlink ``path`` if it is still the regular file judged stale (same inode, same
    modification time), reached without following a link; False when it changed or went."""
    try:
        with tree.parent(path) as (directory, name):
            now = os.stat(name, dir_fd=directory, follow_symlinks=False)
            same = (now.st_dev, now.st_ino, now.st_mtime_ns) == (
                seen.st_dev,
                seen.st_ino,
                seen.st_mtime_ns,
            )
            if not same or not stat.S_ISREG(now.st_mode):
                return False
            os.unlink(name, dir_fd=directory)
    except OSError:
        return False
    return True
