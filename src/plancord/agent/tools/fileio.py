"""Opening workspace files so that what is checked is what is read or written.

The jail (``paths.resolve_in_workspace``) decides on a path's text; the disk can still hold a
surprise under that name. A hard link inside the workspace is the same file as its other name,
which may lie outside (``ln ~/.ssh/id_ed25519 notes.txt``), and a file can be swapped for a
symlink or a FIFO between a check and an ``open``. So every file tool opens through here:
``O_NOFOLLOW`` (a symlink where a file was resolved is refused), ``O_NONBLOCK`` (a FIFO does
not hang the worker thread), then ``fstat`` on the opened descriptor, which must be a regular
file with exactly one link, and all reading and writing goes through that descriptor.

It also holds the small text helpers the file tools share, and ``Deadline``, the time limit
every walk checks.
"""

from __future__ import annotations

import errno
import os
import stat
import time
from collections.abc import Iterator
from typing import BinaryIO

BINARY_SNIFF_BYTES = 8192
MAX_LINE_BYTES = 2000
#: How long one directory walk (glob, grep without ripgrep, a directory listing) may take.
WALK_DEADLINE_SECONDS = 10.0

_OPEN_FLAGS = os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


class UnsafeFile(Exception):
    """The file cannot be used; ``str(exc)`` tells the model why."""


def hard_link_refusal(shown: str, links: int) -> str:
    return (
        f"{shown} has {links} hard links (names for the same file). File tools refuse such "
        "files for reading and for writing, because another of its names may lie outside "
        "the workspace."
    )


def check_opened(fd: int, shown: str) -> os.stat_result:
    """The descriptor's status; raises ``UnsafeFile`` unless it is a regular file with one name."""
    status = os.fstat(fd)
    if not stat.S_ISREG(status.st_mode):
        raise UnsafeFile(f"{shown} is not a regular file.")
    if status.st_nlink > 1:
        raise UnsafeFile(hard_link_refusal(shown, status.st_nlink))
    return status


def open_regular(path: str | os.PathLike[str], shown: str, *, write: bool = False) -> int:
    """A descriptor on an existing regular, singly linked file, never through a final symlink.

    Raises ``UnsafeFile`` for anything else, ``FileNotFoundError`` when there is no file, and
    other ``OSError`` as the system reports them.
    """
    flags = (os.O_RDWR if write else os.O_RDONLY) | _OPEN_FLAGS
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UnsafeFile(f"{shown} is a symbolic link; file tools do not follow it.") from None
        raise
    try:
        check_opened(fd, shown)
    except BaseException:
        os.close(fd)
        raise
    return fd


def create_regular(path: str | os.PathLike[str]) -> int:
    """A descriptor on a new, empty file; ``FileExistsError`` if the name is taken (even by a
    dangling symlink)."""
    return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _OPEN_FLAGS, 0o666)


def replace_contents(fd: int, data: bytes) -> None:
    """Make the open file hold exactly ``data``."""
    os.ftruncate(fd, 0)
    view = memoryview(data)
    offset = 0
    while offset < len(view):
        offset += os.pwrite(fd, view[offset:], offset)


def read_limited(fd: int, limit: int) -> bytes:
    """Up to ``limit`` bytes from the start of the file."""
    chunks: list[bytes] = []
    offset = 0
    while offset < limit:
        chunk = os.pread(fd, min(1 << 20, limit - offset), offset)
        if not chunk:
            break
        chunks.append(chunk)
        offset += len(chunk)
    return b"".join(chunks)


class Deadline:
    """A point in time a walk must stop at; ``expired`` is cheap enough to call per entry."""

    def __init__(self, seconds: float = WALK_DEADLINE_SECONDS) -> None:
        self.seconds = seconds
        self._end = time.monotonic() + seconds

    def expired(self) -> bool:
        return time.monotonic() >= self._end


def is_binary(sample: bytes) -> bool:
    return b"\x00" in sample[:BINARY_SNIFF_BYTES]


def strip_newline(line: str) -> str:
    if line.endswith("\n"):
        line = line[:-1]
    if line.endswith("\r"):
        line = line[:-1]
    return line


def iter_lines(handle: BinaryIO) -> Iterator[tuple[bytes, bool]]:
    """Lines of a binary file, each at most ``MAX_LINE_BYTES`` long, and whether it was cut."""
    while True:
        line = handle.readline(MAX_LINE_BYTES + 1)
        if not line:
            return
        if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
            while True:
                rest = handle.readline(64 * 1024)
                if not rest or rest.endswith(b"\n"):
                    break
            yield line[:MAX_LINE_BYTES], True
        else:
            yield line, False


def number_lines(first: int, lines: list[str]) -> str:
    return "\n".join(f"{number:>6}\t{text}" for number, text in enumerate(lines, start=first))
