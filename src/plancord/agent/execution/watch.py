"""Which workspace paths may have changed since the last look, from the kernel (inotify).

Why this exists: a stat of every path after every call costs a walk of the whole workspace;
the kernel can say instead which names were written, created, deleted, moved or had their
attributes changed, in every directory of the workspace, whichever process (in whichever
mount namespace) did it. The observer then looks only at those paths. Events are kept by
inode, so they cover every way a process changes a file: a write (``IN_MODIFY``), a writable
descriptor closed (``IN_CLOSE_WRITE``: also catches writes through a shared mapping, whose
process closes or exits within the call), ``chmod``/``utime``/link counts (``IN_ATTRIB``).

Whenever the watch cannot vouch for what it saw (the queue overflowed, a watch could not be
added, the fd failed) :meth:`ChangeWatch.drain` answers None and the caller walks the whole
workspace. Only Linux has inotify; elsewhere :func:`open_watch` answers None.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
import struct
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

IN_MODIFY = 0x2
IN_ATTRIB = 0x4
IN_CLOSE_WRITE = 0x8
IN_MOVED_FROM = 0x40
IN_MOVED_TO = 0x80
IN_CREATE = 0x100
IN_DELETE = 0x200
IN_DELETE_SELF = 0x400
IN_MOVE_SELF = 0x800
IN_Q_OVERFLOW = 0x4000
IN_IGNORED = 0x8000
IN_ONLYDIR = 0x01000000
IN_DONT_FOLLOW = 0x02000000
IN_ISDIR = 0x40000000
IN_NONBLOCK = os.O_NONBLOCK
IN_CLOEXEC = os.O_CLOEXEC

_MASK = (
    IN_MODIFY
    | IN_ATTRIB
    | IN_CLOSE_WRITE
    | IN_MOVED_FROM
    | IN_MOVED_TO
    | IN_CREATE
    | IN_DELETE
    | IN_DELETE_SELF
    | IN_MOVE_SELF
    | IN_ONLYDIR
    | IN_DONT_FOLLOW
)
_HEADER = struct.Struct("iIII")
_READ_BYTES = 1 << 16


@dataclass(slots=True)
class Touched:
    """What the kernel reported since the last drain: ``paths`` to look at again, and
    ``trees``, directories that appeared (created or moved in), to walk whole."""

    paths: set[str] = field(default_factory=set)
    trees: set[str] = field(default_factory=set)


class ChangeWatch:
    """inotify watches on a workspace's directories. Not thread-safe: one user at a time."""

    def __init__(self, root: Path, fd: int, libc: ctypes.CDLL) -> None:
        self._root = root
        self._fd = fd
        self._libc = libc
        self._dirs: dict[int, str] = {}
        self._wds: dict[str, int] = {}
        self._broken = False

    def watch(self, directories: Iterable[str]) -> bool:
        """Watch each workspace-relative directory ('' is the root); False when one cannot
        be watched (the watch then answers None until rebuilt)."""
        for directory in directories:
            if directory in self._wds:
                continue
            path = os.fsencode(self._root / directory if directory else self._root)
            wd = int(self._libc.inotify_add_watch(self._fd, path, _MASK))
            if wd < 0:
                if ctypes.get_errno() in (errno.ENOENT, errno.ENOTDIR):
                    continue
                self._broken = True
                return False
            self._dirs[wd] = directory
            self._wds[directory] = wd
        return True

    def reset(self) -> None:
        """Drop every watch and pending event (before a full walk rebuilds them)."""
        for wd in list(self._dirs):
            self._libc.inotify_rm_watch(self._fd, wd)
        self._dirs.clear()
        self._wds.clear()
        self._read_all()
        self._broken = False

    def drain(self) -> Touched | None:
        """The paths touched since the last drain, or None when they cannot be known."""
        data = self._read_all()
        if data is None or self._broken:
            self._broken = True
            return None
        touched = Touched()
        offset = 0
        while offset < len(data):
            wd, mask, _cookie, length = _HEADER.unpack_from(data, offset)
            offset += _HEADER.size
            name = data[offset : offset + length].rstrip(b"\0").decode("utf-8", "surrogateescape")
            offset += length
            if mask & IN_Q_OVERFLOW:
                self._broken = True
                return None
            directory = self._dirs.get(wd)
            if directory is None:
                continue
            if mask & IN_IGNORED:
                self._dirs.pop(wd, None)
                self._wds.pop(directory, None)
                continue
            if mask & (IN_DELETE_SELF | IN_MOVE_SELF):
                touched.paths.add(directory)
                continue
            path = f"{directory}/{name}" if directory and name else directory or name
            if not path:
                continue  # the top itself, which no look keeps
            touched.paths.add(path)
            if mask & IN_ISDIR and mask & (IN_CREATE | IN_MOVED_TO):
                touched.trees.add(path)
        return touched

    def close(self) -> None:
        os.close(self._fd)

    def _read_all(self) -> bytes | None:
        chunks: list[bytes] = []
        while True:
            try:
                chunk = os.read(self._fd, _READ_BYTES)
            except BlockingIOError:
                return b"".join(chunks)
            except OSError:
                return None
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)


def open_watch(root: Path) -> ChangeWatch | None:
    """A watch for ``root`` (no directory watched yet), or None where inotify is missing."""
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        libc = ctypes.CDLL(name, use_errno=True)
        init = libc.inotify_init1
    except (OSError, AttributeError):
        return None
    fd = int(init(IN_NONBLOCK | IN_CLOEXEC))
    if fd < 0:
        return None
    return ChangeWatch(root, fd, libc)
