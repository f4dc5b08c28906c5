"""Where a read-only command may look: the workspace, and the system paths the sandbox shows.

Every operand that names a file, every option value that does, and every ``<`` redirection
is resolved the way the program will open it (relative to the directory the command runs
in, through symlinks) and must land inside the workspace or under one of
``SYSTEM_READ_PATHS``. ``/proc`` (another process's environment holds the bot's secrets),
``/sys`` and ``/dev`` (``/dev/zero`` never ends, ``/dev/tcp`` is a socket) are refused;
``/dev/null`` is the one device allowed. Named pipes, sockets and devices inside the workspace
are refused too: reading one can block forever.

Git is held to the workspace's own repository: a command run in a directory that holds a
different repository (a nested ``.git``, a checked-in bare repository with ``HEAD`` and
``objects``, or a git directory that finds its repository through ``commondir``) is refused,
because that repository's configuration could name programs.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from plancord.core.sandbox_policy import ETC_ENTRIES, SYSTEM_DIRS
from plancord.core.shell.readonly.structure import DEV_NULL
from plancord.core.shell.readonly.substitution import is_piped_input
from plancord.core.shell.readonly.verdict import Denied, shown

SYSTEM_READ_PATHS: Final = (
    "/usr",
    *SYSTEM_DIRS,
    *(f"/etc/{entry}" for entry in ETC_ENTRIES),
)
"""System paths a read-only command may read besides the workspace: exactly what the
sandbox shows (``policy.py``): ``/usr``, the top-level program and library directories, and
the ``/etc`` entries it binds. The sandbox, not this list, decides what can be read; the list
keeps the filter from judging read-only what the sandbox would not show."""

LISTED_ONLY: Final = ("/",)
"""Directories whose names may be listed (``find / -name …``, ``ls /``, ``tree /``) but whose
files are not all readable: the sandbox's root shows only what it mounts."""

_REFUSED_ROOTS: Final = {
    "/proc": "`/proc` shows other processes, and their environments hold secrets",
    "/sys": "`/sys` is the kernel's interface, not project files",
    "/dev": "devices are not files: some never end (`/dev/zero`), some open connections",
    "/etc/ssl/private": "`/etc/ssl/private` holds the host's private keys",
}


@dataclass(frozen=True, slots=True)
class Place:
    """The workspace and the directory a command runs in (the workspace, or after ``cd``)."""

    workspace: Path
    cwd: Path

    @classmethod
    def at(cls, workspace: Path | str) -> Place:
        root = Path(os.path.realpath(workspace))
        return cls(root, root)

    def resolve(self, path: str) -> str:
        return os.path.realpath(os.path.join(self.cwd, path))

    def inside(self, resolved: str) -> bool:
        root = str(self.workspace)
        return resolved == root or resolved.startswith(root.rstrip("/") + "/")


def check_path(place: Place, path: str, *, what: str = "reads") -> str:
    """Refuse ``path`` unless it resolves inside the workspace or an allowed system path.

    Returns the resolved path. ``-`` (standard input) and ``/dev/null`` pass; so do the
    ``LISTED_ONLY`` directories when the command only ``lists`` names.
    """
    if path in ("-", DEV_NULL):
        return path
    if is_piped_input(path):
        if what in ("reads", "lists"):
            return path
        raise Denied(f"a process substitution cannot be what a command {what}")
    if "\0" in path:
        raise Denied("a path holds a NUL character")
    resolved = place.resolve(path)
    if resolved == DEV_NULL:
        return resolved
    if what == "lists" and resolved in LISTED_ONLY:
        return resolved
    if not place.inside(resolved):
        for root, why in _REFUSED_ROOTS.items():
            if resolved == root or resolved.startswith(root + "/"):
                raise Denied(f"`{shown(path)}`: {why}")
        if not any(resolved == p or resolved.startswith(p + "/") for p in SYSTEM_READ_PATHS):
            raise Denied(
                f"`{shown(path)}` is outside the workspace; plan mode {what} only the "
                "workspace and a few system paths"
            )
    _refuse_special(path, resolved)
    return resolved


def _refuse_special(path: str, resolved: str) -> None:
    try:
        mode = os.stat(resolved).st_mode
    except OSError:
        return  # a missing file: the program reports it
    if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        raise Denied(f"`{shown(path)}` is a pipe, socket or device, and reading it may never end")


def check_directory(place: Place, path: str) -> Path:
    """A directory to ``cd`` into: inside the workspace and existing."""
    resolved = check_path(place, path, what="enters")
    if not place.inside(resolved):
        raise Denied(f"`cd {shown(path)}` leaves the workspace")
    if not os.path.isdir(resolved):
        raise Denied(f"`cd {shown(path)}`: no such directory in the workspace")
    return Path(resolved)


def check_own_repository(place: Place) -> None:
    """Refuse git where it would find a repository other than the workspace's own."""
    directory = place.cwd
    while True:
        if directory != place.workspace and _holds_repository(directory):
            raise Denied(
                f"`{shown(str(directory.relative_to(place.workspace)))}` holds another git "
                "repository, whose configuration could run programs; git runs only on the "
                "workspace's own"
            )
        if directory == place.workspace or directory == directory.parent:
            return
        directory = directory.parent


def _holds_repository(directory: Path) -> bool:
    """Whether git would take ``directory`` for a repository: a ``.git`` inside, or a git
    directory itself: ``HEAD`` with ``objects``, or with a ``commondir`` file naming where
    its objects and configuration are (a linked worktree's git directory)."""
    if os.path.lexists(directory / ".git"):
        return True
    if not os.path.lexists(directory / "HEAD"):
        return False
    return os.path.isdir(directory / "objects") or os.path.lexists(directory / "commondir")


def looks_like_path(word: str) -> bool:
    """Whether a word that is not declared a path still reads as one to be checked."""
    return word.startswith(("/", "~")) or ".." in word.split("/")
