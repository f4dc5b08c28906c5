"""Opening workspace files so that what is checked is what is read or written.

The jail (``paths.resolve_in_workspace``) decides on a path's text: it names the file a path
leads to, inside the workspace. The disk can still hold a surprise under that name while the
tool runs: a process of the agent's (an MCP server, an explore sub-agent's command) may swap
a directory on the way for a symbolic link to a host folder between the check and the open,
and a hard link inside the workspace is the same file as its other name, which may lie
outside (``ln ~/.ssh/id_ed25519 notes.txt``). So every file tool reaches the name the jail
gave through the workspace's one door (``host_io.walk.WorkspaceTree``): from a descriptor
of the workspace root, one component at a time, ``O_NOFOLLOW`` on every component, never
``..``; a link met on the way is refused, never followed. The file itself is opened
``O_NONBLOCK`` (a FIFO does not hang the worker thread), then ``fstat`` on the descriptor must
show a regular file with exactly one link, and all reading and writing goes through it.

It also holds the small text helpers the file tools share, and ``Deadline``, the time limit
every walk checks.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import time
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from plancord.agent.host_io.walk import WorkspaceTree, split

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


def tree_of(workspace: Path) -> WorkspaceTree:
    """The workspace as the file tools reach it: only from its root, never through a link."""
    return WorkspaceTree(workspace.resolve())


def relative_name(shown: str) -> str:
    """The walk's name for a path the jail showed ('' for the workspace root)."""
    return "" if shown == "." else shown


@contextlib.contextmanager
def parent_of(tree: WorkspaceTree, shown: str, *, make: bool = False) -> Iterator[tuple[int, str]]:
    """The descriptor of the real directory holding the workspace path ``shown`` and its
    last name there, reached from the root with no link followed.

    ``make``: missing directories on the way are created (never one in place of a link or
    a file). Raises ``UnsafeFile`` for a link on the way, ``NotADirectoryError`` for a file
    on the way, ``FileNotFoundError`` for a missing directory without ``make``."""
    try:
        *parents, name = split(shown)
    except ValueError:
        raise UnsafeFile(f"{shown} is not a file inside the workspace.") from None
    fd = tree.open_root()
    try:
        walked: list[str] = []
        for part in parents:
            walked.append(part)
            inner = _enter(fd, part, "/".join(walked), make=make)
            os.close(fd)
            fd = inner
        yield fd, name
    finally:
        os.close(fd)


def _enter(directory: int, name: str, shown: str, *, make: bool) -> int:
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        return os.open(name, flags, dir_fd=directory)
    except FileNotFoundError:
        if not make:
            raise
    except OSError as exc:
        if exc.errno == errno.ELOOP or _is_link(directory, name):
            raise UnsafeFile(_on_the_way(shown)) from None
        raise
    with contextlib.suppress(FileExistsError):
        os.mkdir(name, 0o777, dir_fd=directory)
    return _enter(directory, name, shown, make=False)


def _on_the_way(link: str) -> str:
    return (
        f"{link} is a symbolic link (it was replaced by one while the tool ran); file tools "
        "reach files only through real directories and do not follow it."
    )


def _is_link(directory: int, name: str) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=directory, follow_symlinks=False).st_mode)
    except OSError:
        return False


def open_regular(tree: WorkspaceTree, shown: str, *, write: bool = False) -> int:
    """A descriptor on the existing regular, singly linked file at the workspace path
    ``shown``, reached with no link followed.

    Raises ``UnsafeFile`` for anything else, ``FileNotFoundError`` when there is no file, and
    other ``OSError`` as the system reports them.
    """
    flags = (os.O_RDWR if write else os.O_RDONLY) | _OPEN_FLAGS
    with parent_of(tree, shown) as (directory, name):
        try:
            fd = os.open(name, flags, dir_fd=directory)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                message = f"{shown} is a symbolic link; file tools do not follow it."
                raise UnsafeFile(message) from None
            raise
    try:
        check_opened(fd, shown)
    except BaseException:
        os.close(fd)
        raise
    return fd


def create_regular(tree: WorkspaceTree, shown: str) -> int:
    """A descriptor on a new, empty file at the workspace path ``shown``, its missing parent
    directories made; ``FileExistsError`` if the name is taken (even by a dangling symlink)."""
    with parent_of(tree, shown, make=True) as (directory, name):
        return os.open(
            name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _OPEN_FLAGS, 0o666, dir_fd=directory
        )


def open_directory(tree: WorkspaceTree, shown: str) -> int:
    """A descriptor on the real directory at the workspace path ``shown`` ('.' is the root).
    Raises ``UnsafeFile`` when it is a link, ``NotADirectoryError`` when it is no directory."""
    if shown == ".":
        return tree.open_root()
    with parent_of(tree, shown) as (directory, name):
        return _enter(directory, name, shown, make=False)


def status(tree: WorkspaceTree, shown: str) -> os.stat_result | None:
    """The workspace path ``shown``'s own status, or None when it is not there. Raises
    ``UnsafeFile`` when a directory on the way is a link."""
    if shown == ".":
        fd = tree.open_root()
        try:
            return os.fstat(fd)
        finally:
            os.close(fd)
    try:
        with parent_of(tree, shown) as (directory, name):
            return os.stat(name, dir_fd=directory, follow_symlinks=False)
    except (FileNotFoundError, NotADirectoryError):
        return None


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
