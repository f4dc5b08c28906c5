"""File contents kept in one file, so the host can put files back exactly.

Why this exists: restoring a workspace needs the content of the files a call may overwrite,
kept outside the workspace. One copy per file costs a file creation each, which made the
observer's first look on 10,000 files take seconds; appending every content to one pack
file costs a read each and a few large writes. A pack is written once, private (0600),
and read back by slices (offset and size).

Sources are files of a workspace, opened through its one door (``walk.WorkspaceTree``: no
component followed if it is a link) and must be regular files; a pack never grows past the
bound it is given.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from plancord.agent.host_io.walk import WorkspaceTree

_CHUNK = 1 << 20


@dataclass(frozen=True, slots=True)
class Slice:
    """One file's content: ``size`` bytes at ``offset`` of the pack named ``pack``."""

    pack: str
    offset: int
    size: int


class PackFull(Exception):
    """The contents to keep are larger than the pack may grow."""


def write_pack(
    directory: Path, name: str, tree: WorkspaceTree, paths: Iterable[str], *, max_bytes: int
) -> dict[str, Slice]:
    """Append the content of each of ``paths`` (files of ``tree``) to a new pack
    ``directory/name``; each path's slice. Raises PackFull past ``max_bytes`` (the partial
    pack is removed), OSError when a path is not a regular file or cannot be read."""
    target = directory / name
    out = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    slices: dict[str, Slice] = {}
    offset = 0
    try:
        for path, fd in tree.open_files(sorted(paths)):
            size = _append(out, fd, max_bytes - offset)
            slices[path] = Slice(name, offset, size)
            offset += size
    except BaseException:
        os.close(out)
        target.unlink(missing_ok=True)
        raise
    os.close(out)
    return slices


def _append(out: int, fd: int, room: int) -> int:
    copied = 0
    while chunk := os.read(fd, _CHUNK):
        copied += len(chunk)
        if copied > room:
            raise PackFull(f"more than the {room:,} bytes left to keep")
        _write_all(out, chunk)
    return copied


def copy_out(directory: Path, piece: Slice, out: int) -> None:
    """Write ``piece``'s content to the open file ``out``."""
    fd = os.open(directory / piece.pack, os.O_RDONLY | os.O_NOFOLLOW)
    try:
        at, end = piece.offset, piece.offset + piece.size
        while at < end:
            chunk = os.pread(fd, min(_CHUNK, end - at), at)
            if not chunk:
                raise OSError(f"the pack {piece.pack} ends early")
            _write_all(out, chunk)
            at += len(chunk)
    finally:
        os.close(fd)


def matches(directory: Path, piece: Slice, fd: int) -> bool:
    """Whether the open file ``fd`` holds exactly ``piece``'s content."""
    if os.fstat(fd).st_size != piece.size:
        return False
    kept = os.open(directory / piece.pack, os.O_RDONLY | os.O_NOFOLLOW)
    try:
        at = 0
        while at < piece.size:
            want = min(_CHUNK, piece.size - at)
            if os.pread(fd, want, at) != os.pread(kept, want, piece.offset + at):
                return False
            at += want
        return os.pread(fd, 1, at) == b""
    finally:
        os.close(kept)


def _write_all(out: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(out, view) :]
