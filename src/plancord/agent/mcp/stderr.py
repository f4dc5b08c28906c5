"""A stdio server's stderr: drained as it comes, and only its last bytes kept.

Why this exists: a server writes what it likes to stderr for as long as it runs. Sent to a
file, a chatty or hostile server fills the disk; sent to a pipe nobody reads, it blocks once
the pipe is full, and a blocked server answers nothing. So its stderr is a pipe the MCP
loop drains whenever bytes arrive, keeping only the last ``limit`` bytes: enough to say why
a server died (in the error and in ``plancord doctor``), never more.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from typing import TextIO

TAIL_BYTES = 64 * 1024
_READ = 64 * 1024


class StderrTail:
    """Create it on the loop that will drain it; hand ``writer`` to the process as its
    stderr, call ``spawned`` once the process has it, and ``close`` at the end."""

    def __init__(self, limit: int = TAIL_BYTES) -> None:
        self.limit = limit
        self.total = 0
        """Bytes the server wrote in all."""
        self._tail = bytearray()
        read, write = os.pipe()
        os.set_blocking(read, False)
        self._read: int | None = read
        self.writer: TextIO = os.fdopen(write, "w", encoding="utf-8", errors="replace")
        self._loop = asyncio.get_running_loop()
        self._loop.add_reader(read, self._drain)

    def _drain(self) -> None:
        if self._read is None:
            return
        try:
            chunk = os.read(self._read, _READ)
        except BlockingIOError:
            return
        except OSError:
            chunk = b""
        if not chunk:
            self._stop_reading()
            return
        self.total += len(chunk)
        self._tail += chunk
        if len(self._tail) > self.limit:
            del self._tail[: len(self._tail) - self.limit]

    def _stop_reading(self) -> None:
        if self._read is not None:
            self._loop.remove_reader(self._read)
            os.close(self._read)
            self._read = None

    def spawned(self) -> None:
        """The process holds its own copy of the pipe now: drop ours, so the pipe ends when
        the process does."""
        with contextlib.suppress(OSError):
            self.writer.close()

    def text(self) -> str:
        """What is kept, as text (a cut at the start of a character is dropped)."""
        self._drain_now()
        return bytes(self._tail).decode("utf-8", errors="replace").lstrip("\ufffd")

    def _drain_now(self) -> None:
        """Read what is already in the pipe (a server that died just now said why last)."""
        for _ in range(64):
            if self._read is None:
                return
            before = self.total
            self._drain()
            if self.total == before:
                return

    def close(self) -> None:
        self._drain_now()
        self._stop_reading()
        self.spawned()
