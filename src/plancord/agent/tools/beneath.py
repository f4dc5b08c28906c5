"""Which path a path the model gave leads to, found without leaving the workspace.

Why this exists: the jail (``paths``) must know which file a path names, following the
links the workspace holds as the kernel would, so that ``view alias/app.py`` shows
``src/app.py`` and ``out/secret.txt`` with ``out -> /home/bot`` is refused. Asking the host
(``realpath``) would look at whatever the agent's links point to, host folders included,
with the bot's rights. So the path is followed here, inside the workspace only: each
component is looked at (``lstat``, and ``readlink`` for a link) relative to a descriptor of
its real parent directory, reached from the workspace root, never through a link; a link's
text is spliced in where it stands. Outside the workspace a path is only text: ``..`` above
the root, or an absolute link target, is joined and normalised as text, never looked at on
the host, and leads back into the workspace only by naming it.

A component that does not exist, or that is not a directory, ends the looking: what follows
it is joined as text, as ``realpath`` does.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections import deque
from pathlib import Path

#: Links followed in one path before it counts as a loop (the kernel's limit).
MAX_LINKS = 40

_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class LinkLoop(Exception):
    """More than ``MAX_LINKS`` links in one path."""


def resolve_beneath(root: Path, aliases: tuple[Path, ...], path: Path) -> Path:
    """Where the absolute ``path`` leads: inside ``root`` (a real directory's resolved path),
    its links followed from ``root``'s descriptor; outside it, the text joined. ``aliases``:
    other names of ``root`` (the workspace as configured, through a link of the host's).
    Raises LinkLoop, and OSError when ``root`` cannot be opened."""
    resolver = _Resolver(root, aliases)
    try:
        return resolver.run(deque(path.parts))
    finally:
        resolver.close()


class _Resolver:
    def __init__(self, root: Path, aliases: tuple[Path, ...]) -> None:
        self._root = root
        self._entries = [root.parts, *(alias.parts for alias in aliases)]
        self._fds = [os.open(root, _DIRECTORY)]
        self._names: list[str] = []
        self._links = 0

    def close(self) -> None:
        for fd in self._fds:
            os.close(fd)
        self._fds = []

    def run(self, pending: deque[str]) -> Path:
        outside = self._outside([], pending)
        while outside is None:
            outside = self._inside(pending)
        return outside

    def _reset(self) -> None:
        while len(self._fds) > 1:
            os.close(self._fds.pop())
        self._names = []

    def _outside(self, position: list[str], pending: deque[str]) -> Path | None:
        """Walk ``pending`` as text from ``position`` (parts of an absolute path) until it
        names the workspace (then None: ``pending`` holds the rest, to follow inside) or
        ends (then the path it names, outside)."""
        while True:
            if tuple(position) in self._entries:
                self._reset()
                return None
            if not pending:
                return Path(*position) if position else Path("/")
            part = pending.popleft()
            if part == "/":
                position[:] = ["/"]
            elif part == "..":
                if len(position) > 1:
                    position.pop()
            elif part not in ("", "."):
                position.append(part)

    def _inside(self, pending: deque[str]) -> Path | None:
        """Follow ``pending`` from where the walk stands inside the workspace; the path
        reached, or None when it left the workspace and came back (``pending`` then holds the
        rest, from the root)."""
        while pending:
            part = pending.popleft()
            if part in ("", "."):
                continue
            if part == "..":
                if not self._names:
                    left = self._outside(list(self._root.parent.parts), pending)
                    if left is not None:
                        return left
                    continue
                self._names.pop()
                while len(self._fds) > len(self._names) + 1:
                    os.close(self._fds.pop())
                continue
            if len(self._fds) <= len(self._names):
                self._names.append(part)  # below something missing or not a directory
                continue
            left = self._step(part, pending)
            if left is not None:
                return left
        return self._root.joinpath(*self._names)

    def _step(self, part: str, pending: deque[str]) -> Path | None:
        parent = self._fds[-1]
        try:
            info = os.stat(part, dir_fd=parent, follow_symlinks=False)
        except OSError:
            self._names.append(part)
            return None
        if stat.S_ISLNK(info.st_mode):
            self._links += 1
            if self._links > MAX_LINKS:
                raise LinkLoop(part)
            target = os.readlink(part, dir_fd=parent)
            pending.extendleft(reversed(Path(target).parts))
            if target.startswith("/"):
                pending.popleft()
                return self._outside(["/"], pending)
            return None
        self._names.append(part)
        if stat.S_ISDIR(info.st_mode):
            # Replaced since it was looked at: what follows is text.
            with contextlib.suppress(OSError):
                self._fds.append(os.open(part, _DIRECTORY, dir_fd=parent))
        return None
