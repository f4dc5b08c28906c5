"""The result's full diff as a Discord attachment, within Discord's upload limit.

Why this exists: a diff can be any size, and a card that fails to post because its file is
too large would lose the decision. Up to ``ATTACHMENT_LIMIT`` the diff is attached as it
is; past it, gzipped when that fits; past that too, cut at a line boundary. The card says
which (``DiffAttachment.note``); the operator CLI prints the whole diff however large.
"""

from __future__ import annotations

import asyncio
import gzip
import io
from dataclasses import dataclass
from pathlib import Path

import discord

ATTACHMENT_LIMIT = 8 * 1024 * 1024
"""The most plancord uploads in one file: under the 10 MiB Discord allows any server."""


@dataclass(frozen=True, slots=True)
class DiffAttachment:
    data: bytes
    filename: str
    note: str | None
    """What the card says of the file: gzipped, cut, or nothing to attach."""

    def file(self) -> discord.File:
        return discord.File(io.BytesIO(self.data), filename=self.filename)


async def diff_attachment(path: Path, name: str, limit: int = ATTACHMENT_LIMIT) -> DiffAttachment:
    """The diff at ``path`` as ``<name>.diff`` (or ``.diff.gz``), read off the event loop."""
    return await asyncio.to_thread(_prepare, path, name, limit)


def _prepare(path: Path, name: str, limit: int) -> DiffAttachment:
    size = path.stat().st_size
    if size == 0:
        return DiffAttachment(b"", "", "The branch changed nothing: no diff to attach.")
    if size <= limit:
        return DiffAttachment(path.read_bytes(), f"{name}.diff", None)
    packed = io.BytesIO()
    with path.open("rb") as source, gzip.GzipFile(fileobj=packed, mode="wb", mtime=0) as sink:
        while chunk := source.read(1 << 20):
            sink.write(chunk)
            if packed.tell() > limit:
                break
    if packed.tell() <= limit:
        return DiffAttachment(
            packed.getvalue(),
            f"{name}.diff.gz",
            f"The diff ({_mb(size)}) is past Discord's upload limit, so it is attached "
            f"gzipped ({_mb(packed.tell())}).",
        )
    with path.open("rb") as source:
        head = source.read(limit)
    cut = head.rfind(b"\n") + 1 or len(head)
    note = (
        f"The diff ({_mb(size)}) is past Discord's upload limit even gzipped, so the "
        f"attached file is **cut** after {_mb(cut)}; "
        "`plancord plan result-diff --agent NAME` prints all of it."
    )
    marker = b"\n# plancord: the diff is cut here; see the card.\n"
    return DiffAttachment(head[:cut] + marker, f"{name}-cut.diff", note)


def _mb(size: int) -> str:
    return f"{size / 1_000_000:.1f} MB"
