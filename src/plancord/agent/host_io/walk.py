"""The one door through which the host reads or writes a path inside a workspace.

Why this exists: every name in a workspace is the agent's. A path the host opens by name,
with its own rights, follows whatever symlink the agent left in any of its components: a
``docs`` replaced by a link to a host folder turns "restore ``docs/x.pth``" into a write
into that folder, and a link at a file the host reads turns "attach the diff" into
"attach the bot's database". Opening only the last component without following it is not
enough; the parents are paths too.

So the host's file work on a workspace (the observer's looks and restores, Discard's
write-back of kept files, what it reads of the repository's state) goes through
:class:`WorkspaceTree` only. Each path is reached from a descriptor of the workspace root,
one component at a time, with ``os.open(name, dir_fd=parent)``, ``O_NOFOLLOW`` on every
component and ``O_DIRECTORY`` on every parent; ``..``, ``.`` and empty components are
refused, so nothing reached can lie outside the root. When the host writes, parents are
put right before children: a parent that is not a real directory (a link, a file) is
removed and made a directory, never followed. A read that meets a link in a parent fails
(``ELOOP`` or ``ENOTDIR``) and reads nothing.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import shutil
import stat
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_TEMPORARY_SUFFIX = ".plancord-restore"


def split(path: str) -> list[str]:
    """The components of a workspace-relative path. Raises ValueError for an absolute path
    or one with an empty, ``.`` or ``..`` component."""
    parts = path.split("/")
    if any(part in ("", ".", "..") for part in parts):
        raise ValueError(f"{path!r} is not a path inside the workspace")
    return parts


class WorkspaceTree:
    """One workspace, reached only from its root and never through a link."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._held: int | None = None

    # -- descriptors ----------------------------------------------------------------------

    def hold(self) -> None:
        """Keep the top directory open until ``release``, for a tree looked at after every
        call (the observer's): each walk then starts from it without resolving the root's
        path again. The top is the host's, which no agent process can rename."""
        self.release()
        self._held = os.open(self.root, _DIRECTORY)

    def release(self) -> None:
        held, self._held = self._held, None
        if held is not None:
            os.close(held)

    def open_root(self) -> int:
        """A descriptor of the workspace's top directory (the caller closes it)."""
        if self._held is not None:
            return os.dup(self._held)
        return os.open(self.root, _DIRECTORY)

    def open_directory(self, path: str) -> int:
        """A descriptor of the real directory ``path`` ('' is the root). Raises OSError
        (``ELOOP``/``ENOTDIR``) when it or any parent is not a real directory."""
        fd = self.open_root()
        if not path:
            return fd
        try:
            for part in split(path):
                inner = os.open(part, _DIRECTORY, dir_fd=fd)
                os.close(fd)
                fd = inner
        except BaseException:
            os.close(fd)
            raise
        return fd

    @contextlib.contextmanager
    def parent(self, path: str, *, make: bool = False) -> Iterator[tuple[int, str]]:
        """The descriptor of the directory holding ``path`` and its last name there.

        ``make``: each missing parent is created (0755), and each parent that is not a real
        directory is removed and created as one, parents before children. Without it, a
        missing parent raises FileNotFoundError and a link raises OSError."""
        *parents, name = split(path)
        fd = self.open_root()
        try:
            for part in parents:
                inner = _enter(fd, part) if make else os.open(part, _DIRECTORY, dir_fd=fd)
                os.close(fd)
                fd = inner
            yield fd, name
        finally:
            os.close(fd)

    def open_file(self, path: str) -> int:
        """A read-only descriptor of the regular file ``path``. Raises OSError when it is
        not one, or when a component is a link."""
        with self.parent(path) as (directory, name):
            fd = os.open(name, _FILE, dir_fd=directory)
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise OSError(f"{path} is not a regular file")
        return fd

    def open_files(self, paths: Iterable[str]) -> Iterator[tuple[str, int]]:
        """Each of ``paths`` with a read-only descriptor of it (closed when the next is
        asked for), as ``open_file`` opens it; a directory's descriptor is reused for the
        paths that follow in it. Raises OSError as ``open_file`` does."""
        held: tuple[str, int] | None = None
        try:
            for path in paths:
                where, _, name = path.rpartition("/")
                if held is None or held[0] != where:
                    if held is not None:
                        os.close(held[1])
                        held = None
                    held = (where, self.open_directory(where))
                fd = os.open(split(name)[0], _FILE, dir_fd=held[1])
                try:
                    if not stat.S_ISREG(os.fstat(fd).st_mode):
                        raise OSError(f"{path} is not a regular file")
                    yield path, fd
                finally:
                    os.close(fd)
        finally:
            if held is not None:
                os.close(held[1])

    # -- reading --------------------------------------------------------------------------

    def lstat_many(self, paths: Iterable[str]) -> dict[str, os.stat_result | None]:
        """Each of ``paths`` with its own status (None when it, or a real directory above
        it, is not there), as ``lstat`` says; a directory's descriptor is reused for the
        paths that follow in it, so sorted paths cost one walk per directory."""
        found: dict[str, os.stat_result | None] = {}
        held: tuple[str, int | None] | None = None
        try:
            for path in paths:
                where, _, name = path.rpartition("/")
                if held is None or held[0] != where:
                    if held is not None and held[1] is not None:
                        os.close(held[1])
                    held = (where, self._directory_or_none(where))
                found[path] = None
                if held[1] is not None:
                    with contextlib.suppress(FileNotFoundError):
                        found[path] = os.stat(split(name)[0], dir_fd=held[1], follow_symlinks=False)
        finally:
            if held is not None and held[1] is not None:
                os.close(held[1])
        return found

    def _directory_or_none(self, path: str) -> int | None:
        try:
            return self.open_directory(path)
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                return None
            raise

    def lstat(self, path: str) -> os.stat_result | None:
        """``path``'s own status, or None when it (or a real directory above it) is not
        there."""
        try:
            with self.parent(path) as (directory, name):
                return os.stat(name, dir_fd=directory, follow_symlinks=False)
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                return None
            raise

    def readlink(self, path: str) -> str:
        with self.parent(path) as (directory, name):
            return os.readlink(name, dir_fd=directory)

    def read_bytes(self, path: str, limit: int) -> bytes:
        """At most ``limit`` bytes of the regular file ``path``."""
        fd = self.open_file(path)
        try:
            return os.read(fd, limit)
        finally:
            os.close(fd)

    def scan(
        self, under: str = "", *, prune: Callable[[str], bool] | None = None
    ) -> Iterator[tuple[str, os.stat_result]]:
        """Every path below the real directory ``under`` ('' is the root), not ``under``
        itself, with its own status; real directories are descended (a link is a path, not
        a way in). ``prune(path)`` true leaves a path out, with all it holds. A directory
        that vanished meanwhile is skipped; one that cannot be opened raises OSError."""
        top = self.open_directory(under)
        stack: list[tuple[int, str, list[str]]] = []
        try:
            frame: tuple[int, str, list[str]] = (top, f"{under}/" if under else "", [])
            stack.append(frame)
            yield from _list(frame, prune)
            while stack:
                fd, prefix, pending = stack[-1]
                if not pending:
                    os.close(fd)
                    stack.pop()
                    continue
                name = pending.pop()
                try:
                    inner = os.open(name, _DIRECTORY, dir_fd=fd)
                except (FileNotFoundError, NotADirectoryError):
                    continue
                except OSError as exc:
                    if exc.errno == errno.ELOOP:
                        continue  # replaced by a link since it was listed
                    raise
                frame = (inner, f"{prefix}{name}/", [])
                stack.append(frame)
                yield from _list(frame, prune)
        finally:
            for fd, _, _ in stack:
                os.close(fd)

    # -- writing --------------------------------------------------------------------------

    def remove(self, path: str) -> None:
        """Remove ``path`` (a directory with all it holds); nothing when it is gone."""
        try:
            with self.parent(path) as (directory, name):
                _remove_at(directory, name)
        except (FileNotFoundError, NotADirectoryError):
            return
        except OSError as exc:
            if exc.errno != errno.ELOOP:
                raise
            # A parent is a link: what ``path`` names is not in the workspace.

    def make_directory(self, path: str, mode: int) -> None:
        """``path`` a real directory with ``mode`` (whatever was there is replaced)."""
        with self.parent(path, make=True) as (directory, name):
            fd = _enter(directory, name)
            try:
                os.fchmod(fd, mode)
            finally:
                os.close(fd)

    def put_file(
        self, path: str, write: Callable[[int], None], mode: int, mtime_ns: int | None = None
    ) -> None:
        """Replace ``path`` with a new regular file whose content ``write(fd)`` writes."""
        with self.parent(path, make=True) as (directory, name):
            temporary = _temporary(directory, name)
            out = os.open(temporary, _NEW_FILE, 0o600, dir_fd=directory)
            try:
                write(out)
                os.fchmod(out, mode)
                if mtime_ns is not None:
                    os.utime(out, ns=(mtime_ns, mtime_ns))
            except BaseException:
                os.unlink(temporary, dir_fd=directory)
                raise
            finally:
                os.close(out)
            _replace(directory, temporary, name)

    def put_link(self, path: str, target: str, mtime_ns: int | None = None) -> None:
        """Replace ``path`` with a symlink to ``target`` (which is never followed)."""
        with self.parent(path, make=True) as (directory, name):
            temporary = _temporary(directory, name)
            os.symlink(target, temporary, dir_fd=directory)
            if mtime_ns is not None:
                os.utime(
                    temporary, ns=(mtime_ns, mtime_ns), dir_fd=directory, follow_symlinks=False
                )
            _replace(directory, temporary, name)

    def chmod(self, path: str, mode: int) -> None:
        """Change the mode of ``path`` itself, never of what a link points at."""
        with self.parent(path) as (directory, name):
            fd = os.open(name, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=directory)
            try:
                if not stat.S_ISLNK(os.fstat(fd).st_mode):
                    os.chmod(f"/proc/self/fd/{fd}", mode)
            finally:
                os.close(fd)

    def utime(self, path: str, mtime_ns: int) -> None:
        with self.parent(path) as (directory, name):
            os.utime(name, ns=(mtime_ns, mtime_ns), dir_fd=directory, follow_symlinks=False)


def _list(
    frame: tuple[int, str, list[str]], prune: Callable[[str], bool] | None
) -> Iterator[tuple[str, os.stat_result]]:
    fd, prefix, pending = frame
    with os.scandir(fd) as scanner:
        for item in scanner:
            relative = prefix + item.name
            if prune is not None and prune(relative):
                continue
            try:
                info = item.stat(follow_symlinks=False)
            except FileNotFoundError:
                continue
            yield relative, info
            if stat.S_ISDIR(info.st_mode):
                pending.append(item.name)


def _enter(directory: int, name: str) -> int:
    """A descriptor of the real directory ``name`` in ``directory``, made when missing and
    replacing whatever else is there (a link is removed, never followed)."""
    try:
        return os.open(name, _DIRECTORY, dir_fd=directory)
    except FileNotFoundError:
        pass
    except OSError as exc:
        if exc.errno not in (errno.ELOOP, errno.ENOTDIR):  # a link, a file
            raise
        _remove_at(directory, name)
    os.mkdir(name, 0o755, dir_fd=directory)
    return os.open(name, _DIRECTORY, dir_fd=directory)


def _remove_at(directory: int, name: str) -> None:
    try:
        info = os.stat(name, dir_fd=directory, follow_symlinks=False)
    except FileNotFoundError:
        return
    if not stat.S_ISDIR(info.st_mode):
        os.unlink(name, dir_fd=directory)
        return
    try:
        _make_removable(directory, name)
        shutil.rmtree(name, dir_fd=directory)
    except RecursionError as exc:
        raise OSError(f"{name} is nested too deep to remove") from exc


def _make_removable(directory: int, name: str) -> None:
    """Directories under ``name`` writable by their owner, so ``rmtree`` can empty them
    (an agent may leave a directory without write permission). Depth first, holding one
    descriptor per level."""
    stack: list[tuple[int, list[str]]] = []
    try:
        stack.append(_writable_frame(os.open(name, _DIRECTORY, dir_fd=directory)))
        while stack:
            fd, children = stack[-1]
            if not children:
                os.close(fd)
                stack.pop()
                continue
            stack.append(_writable_frame(os.open(children.pop(), _DIRECTORY, dir_fd=fd)))
    finally:
        for fd, _ in stack:
            os.close(fd)


def _writable_frame(fd: int) -> tuple[int, list[str]]:
    try:
        mode = stat.S_IMODE(os.fstat(fd).st_mode)
        if mode & 0o700 != 0o700:
            os.fchmod(fd, mode | 0o700)
        with os.scandir(fd) as scanner:
            return fd, [i.name for i in scanner if i.is_dir(follow_symlinks=False)]
    except BaseException:
        os.close(fd)
        raise


def _temporary(directory: int, name: str) -> str:
    temporary = f".{name}{_TEMPORARY_SUFFIX}"
    if len(os.fsencode(temporary)) > 255:
        temporary = f".{hashlib.sha256(os.fsencode(name)).hexdigest()}{_TEMPORARY_SUFFIX}"
    with contextlib.suppress(FileNotFoundError):
        _remove_at(directory, temporary)
    return temporary


def _replace(directory: int, temporary: str, name: str) -> None:
    try:
        now = os.stat(name, dir_fd=directory, follow_symlinks=False)
    except FileNotFoundError:
        now = None
    if now is not None and stat.S_ISDIR(now.st_mode):
        _remove_at(directory, name)
    os.replace(temporary, name, src_dir_fd=directory, dst_dir_fd=directory)
