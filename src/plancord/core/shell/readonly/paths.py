"""Where a read-only command may look: what the read-only sandbox shows, judged as it shows it.

Every operand that names a file, every option value that does, and every ``<`` redirection
is resolved the way the program will open it in the sandbox (relative to the directory the
command runs in) and judged by where it lands:

* inside the workspace or under ``SYSTEM_READ_PATHS``, which the sandbox shows as the host
  has them: symbolic links there are followed on the host, as the program will follow them;
  named pipes, sockets and devices are refused (reading one can block forever);
* under ``/proc`` (another process's environment holds the bot's secrets), ``/sys`` or
  ``/dev`` (``/dev/zero`` never ends, ``/dev/tcp`` is a socket): refused, ``/dev/null`` aside;
* anywhere else: the sandbox shows nothing there but the directories leading to what it
  mounts (bubblewrap), or refuses the read (Landlock), so the read finds nothing. It is
  allowed, resolved by its name alone (the host is never looked at there, so the answer
  does not depend on what the host holds), and noted in ``OutsideReads``: such a verdict
  holds only where a sandbox layer hides the host (``Verdict.without_view``).

Git is held to the workspace's own repository: a command run in a directory that holds a
different repository (a nested ``.git``, a checked-in bare repository with ``HEAD`` and
``objects``, or a git directory that finds its repository through ``commondir``) is refused,
because that repository's configuration could name programs. Outside the workspace git may
run only in a directory the workspace lies in: the sandbox shows there only the empty
directories leading to the workspace, so git finds no repository at all.
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

_REFUSED_ROOTS: Final = {
    "/proc": "`/proc` shows other processes, and their environments hold secrets",
    "/sys": "`/sys` is the kernel's interface, not project files",
    "/dev": "devices are not files: some never end (`/dev/zero`), some open connections",
    "/etc/ssl/private": "`/etc/ssl/private` holds the host's private keys",
}

MAX_LINKS: Final = 40
"""Symbolic links followed in one path before it is refused (the kernel's own bound)."""


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


class OutsideReads:
    """The paths one command line reads outside the workspace and the system paths, where
    only a sandbox layer stands between the command and the host (``Verdict.outside_view``)."""

    __slots__ = ("paths",)

    def __init__(self) -> None:
        self.paths: dict[str, None] = {}

    def note(self, path: str) -> None:
        self.paths[path] = None


@dataclass(frozen=True, slots=True)
class Place:
    """The workspace and the directory a command runs in (the workspace, or after ``cd``),
    with what the line read outside what the host and the sandbox show alike."""

    workspace: Path
    cwd: Path
    outside: OutsideReads

    @classmethod
    def at(cls, workspace: Path | str) -> Place:
        root = Path(os.path.realpath(workspace))
        return cls(root, root, OutsideReads())

    def moved_to(self, cwd: Path | str) -> Place:
        """This place with the command running in ``cwd`` (already resolved)."""
        return Place(self.workspace, Path(cwd), self.outside)

    def resolve(self, path: str) -> str:
        """``path`` as the sandbox resolves it from ``cwd``: symbolic links followed where
        the sandbox shows the host (``shows_host``), names taken as written elsewhere."""
        pending = [p for p in os.path.join(str(self.cwd), path).split("/") if p][::-1]
        current = "/"
        links = 0
        while pending:
            name = pending.pop()
            if name == ".":
                continue
            if name == "..":
                current = os.path.dirname(current)
                continue
            candidate = os.path.join(current, name)
            if self.shows_host(candidate) and os.path.islink(candidate):
                links += 1
                if links > MAX_LINKS:
                    raise Denied(f"`{shown(path)}` goes through too many symbolic links")
                target = os.readlink(candidate)
                pending.extend([p for p in target.split("/") if p][::-1])
                if target.startswith("/"):
                    current = "/"
                continue
            current = candidate
        return current

    def inside(self, resolved: str) -> bool:
        return _under(resolved, str(self.workspace))

    def shows_host(self, resolved: str) -> bool:
        """Whether the sandbox shows ``resolved`` as the host has it: the workspace and the
        system paths (the filter may look there; it never looks anywhere else)."""
        return self.inside(resolved) or any(_under(resolved, p) for p in SYSTEM_READ_PATHS)

    @property
    def shown_cwd(self) -> Path | None:
        """The directory the command runs in, when the host shows what the sandbox shows
        there (globs may be expanded in it); None elsewhere."""
        return self.cwd if self.shows_host(str(self.cwd)) else None


def check_path(place: Place, path: str, *, what: str = "reads") -> str:
    """Refuse ``path`` where the sandbox shows something plan mode must not read (``/proc``,
    ``/sys``, ``/dev`` but ``/dev/null``, a pipe, socket or device); note it when it lies
    where only the sandbox hides the host.

    Returns the resolved path. ``-`` (standard input) and ``/dev/null`` pass.
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
    if not place.inside(resolved):
        for root, why in _REFUSED_ROOTS.items():
            if _under(resolved, root):
                raise Denied(f"`{shown(path)}`: {why}")
    if not place.shows_host(resolved):
        place.outside.note(resolved)
        return resolved
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
    """A directory to ``cd`` into: an existing one inside the workspace or the system paths,
    or one where only the sandbox's view decides what is there (``cd`` fails where there is
    nothing, and ``&&`` then runs nothing more)."""
    if path in ("-", DEV_NULL) or is_piped_input(path):
        raise Denied(f"`cd {shown(path)}` does not enter a directory plan mode can name")
    resolved = check_path(place, path, what="enters")
    if place.shows_host(resolved) and not os.path.isdir(resolved):
        raise Denied(f"`cd {shown(path)}`: no such directory")
    return Path(resolved)


def check_own_repository(place: Place) -> None:
    """Refuse git where it would find a repository other than the workspace's own: a nested
    one inside the workspace, or, outside it, anywhere but a directory the workspace lies in
    (where the sandbox shows only the empty directories leading to the workspace)."""
    directory = place.cwd
    if not place.inside(str(directory)):
        if _under(str(place.workspace), str(directory)):
            place.outside.note(str(directory))
            return
        raise Denied(
            f"`{shown(str(directory))}` is outside the workspace: git runs only in the "
            "workspace's own repository (or in a directory leading to it, where it finds none)"
        )
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
