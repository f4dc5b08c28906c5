"""What a call changed in the workspace, seen by the host, and how to put it back.

Why this exists: an approved plan is held to what execution *does*. After every call that
can change files, :meth:`WorkspaceObserver.observe` says which paths changed since the
previous look (tracked, untracked and ignored alike, renames paired by inode, mode changes,
symlinks as links), and :meth:`WorkspaceObserver.restore` puts chosen paths back exactly as
they were at that previous look (content, mode, mtime, symlink target, existence), so a
change a human denies, or that the ``refuse`` drift policy refuses, is undone.

How: each look is a stat snapshot (``snapshot.take_snapshot``) taken on a worker thread,
never the event loop. Restoring needs the content a call may overwrite, so the first look
keeps every file's content in one pack file (``pack``) in a stash directory outside the
workspace (a read per file, not a file creation: the first look on 10,000 files costs
about a full stat walk more, not seconds), and each later look packs only the files that
changed; a pack is dropped once neither of the two newest looks refers to it. Racy entries
(same size, written within the clock tick of the previous look) are compared with their
kept content, so the observation is exact. Every look, copy and restore goes through the
workspace's one door (``walk.WorkspaceTree``): a link the agent left, in any component, is
never followed, and a directory it replaced with a link is restored as a directory. Past a
bound in paths, time or stash bytes the observer answers :class:`Unobserved`: the caller
treats the call as drift.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import stat
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from plancord.agent.execution.pack import PackFull, Slice, copy_out, matches, write_pack
from plancord.agent.execution.snapshot import (
    GIT_DIR,
    Entry,
    PathChange,
    TooLarge,
    compare,
    refresh,
    take_snapshot,
)
from plancord.agent.execution.watch import ChangeWatch, open_watch
from plancord.agent.host_io.walk import WorkspaceTree

RACY_NS = 50_000_000
"""A file whose mtime is this close to the previous look may have been written in the same
clock tick; its content is compared."""

T = TypeVar("T")

_EXECUTOR = ThreadPoolExecutor(4, thread_name_prefix="plancord-observe")


@dataclass(frozen=True, slots=True)
class ObserveLimits:
    max_paths: int = 100_000
    max_seconds: float = 5.0
    max_stash_bytes: int = 4 * 1024**3


@dataclass(frozen=True, slots=True)
class Effects:
    """What one call changed. ``changes`` are workspace paths; ``git_state`` the changed
    files of the repository's own state (``.git/HEAD``, ``.git/index``, refs, config)."""

    changes: tuple[PathChange, ...]
    git_state: tuple[str, ...]

    @property
    def paths(self) -> tuple[str, ...]:
        """Every workspace path the call touched, the sources of renames included."""
        touched = {change.path for change in self.changes}
        touched.update(change.source for change in self.changes if change.source)
        return tuple(sorted(touched))

    @property
    def empty(self) -> bool:
        return not self.changes and not self.git_state


@dataclass(frozen=True, slots=True)
class Unobserved:
    """The workspace could not be observed; the call must be treated as drift."""

    reason: str


class RestoreFailed(Exception):
    """Some paths could not be put back; ``paths`` names them."""

    def __init__(self, paths: Iterable[str], why: str) -> None:
        self.paths = tuple(paths)
        super().__init__(f"could not restore {', '.join(self.paths[:5])}: {why}")


@dataclass(slots=True)
class _Look:
    entries: dict[str, Entry]
    copies: dict[str, Slice] = field(default_factory=dict)
    links: dict[str, str] = field(default_factory=dict)
    taken_ns: int = 0
    linked: set[str] = field(default_factory=set)
    """Files with several hard links: looked at every time, whatever the kernel said."""


class WorkspaceObserver:
    """Looks at one workspace between calls; keeps the copies a restore needs in ``stash``
    (a directory of the host's, outside every workspace)."""

    def __init__(
        self,
        workspace: Path,
        stash: Path,
        limits: ObserveLimits | None = None,
        *,
        writable_elsewhere: Sequence[Path] = (),
        kernel_watch: bool = True,
    ) -> None:
        """``writable_elsewhere``: the other places the agent's processes may write (the
        sandbox's shared paths, a private ``/tmp`` on the host's disk). A hard link there to
        a workspace file would change it unseen by the kernel's notices for the workspace,
        so when one is on the workspace's file system every look walks the whole
        workspace, as it does with ``kernel_watch`` off."""
        self._root = workspace
        self._tree = WorkspaceTree(workspace)
        self._kernel_watch = kernel_watch
        self._elsewhere = tuple(writable_elsewhere)
        self._stash = stash
        self._limits = limits or ObserveLimits()
        self._lock = asyncio.Lock()
        self._names = itertools.count()
        self._before: _Look | None = None
        self._now: _Look | None = None
        self._watch: ChangeWatch | None = None
        self._held: tuple[_Look, list[str]] | None = None
        """The look a ``hold_back`` undid, and its paths, until ``reapply`` or ``release``."""

    async def start(self) -> Unobserved | None:
        """The first look: the state later observations and restores start from."""
        async with self._lock:
            watch = self._watch is None and self._kernel_watch
            if watch and not await _off_loop(self._shares_a_file_system):
                self._watch = open_watch(self._root)
            try:
                self._now = await _off_loop(self._first_look)
            except (TooLarge, PackFull, OSError) as exc:
                return Unobserved(str(exc))
            self._before = None
            return None

    async def observe(self) -> Effects | Unobserved:
        """What changed since the previous look; this look becomes the previous one."""
        async with self._lock:
            if self._now is None:
                return Unobserved("the workspace was never looked at before this call")
            previous = self._now
            try:
                look, effects = await _off_loop(lambda: self._next_look(previous))
            except (TooLarge, PackFull, OSError) as exc:
                self._now = None
                return Unobserved(str(exc))
            dropped, self._before, self._now = self._before, previous, look
            if dropped is not None:
                await _off_loop(lambda: self._drop_unused(dropped))
            return effects

    async def restore(self, paths: Iterable[str]) -> None:
        """Put ``paths`` back as the look before the latest observation saw them. Raises
        RestoreFailed (naming the paths) when one cannot be, or nothing was observed."""
        wanted = sorted(set(paths))
        async with self._lock:
            before, now = self._before, self._now
            if before is None or now is None:
                raise RestoreFailed(wanted, "there is no earlier look to go back to")
            self._now = await _off_loop(lambda: self._put_back(before, now, wanted))
            await _off_loop(lambda: self._drop_unused(now))

    async def hold_back(self, paths: Iterable[str]) -> None:
        """Restore ``paths`` as ``restore`` does, keeping what they held after the latest
        observation so that ``reapply`` can put it back exactly. Raises RestoreFailed."""
        wanted = sorted(set(paths))
        async with self._lock:
            before, now = self._before, self._now
            if before is None or now is None:
                raise RestoreFailed(wanted, "there is no earlier look to go back to")
            self._held = (now, wanted)
            self._now = await _off_loop(lambda: self._put_back(before, now, wanted))

    async def reapply(self) -> None:
        """Put the paths of the latest ``hold_back`` back as that call left them. Raises
        RestoreFailed when nothing is held back or a path cannot be written."""
        async with self._lock:
            held, current = self._held, self._now
            if held is None or current is None:
                raise RestoreFailed((), "nothing was held back")
            undone, paths = held
            self._held = None
            self._now = await _off_loop(lambda: self._put_back(undone, current, paths))
            await _off_loop(lambda: self._drop_unused(current))
            await _off_loop(lambda: self._drop_unused(undone))

    async def release(self) -> None:
        """Forget what the latest ``hold_back`` kept: the paths stay restored."""
        async with self._lock:
            if self._held is not None:
                undone, self._held = self._held[0], None
                await _off_loop(lambda: self._drop_unused(undone))

    def close(self) -> None:
        """Stop watching the workspace (the stash stays until the next ``start``)."""
        if self._watch is not None:
            self._watch.close()
            self._watch = None
        self._tree.release()

    # -- on the worker thread ---------------------------------------------------------

    def _shares_a_file_system(self) -> bool:
        device = os.stat(self._root).st_dev
        for place in self._elsewhere:
            try:
                if os.stat(place).st_dev == device:
                    return True
            except FileNotFoundError:
                continue
        return False

    def _snapshot(self) -> dict[str, Entry]:
        """A full walk of the workspace; the kernel's watches are set up again with it.
        Looks happen between calls, while no agent process runs, so nothing changes between
        the walk and the watches."""
        if self._watch is not None:
            self._watch.reset()
        entries = take_snapshot(
            self._tree, max_paths=self._limits.max_paths, max_seconds=self._limits.max_seconds
        )
        if self._watch is not None:
            directories = [p for p, e in entries.items() if e.is_dir]
            self._watch.watch(["", GIT_DIR, *directories])
        return entries

    def _entries_since(self, previous: _Look) -> tuple[dict[str, Entry], set[str] | None]:
        """The workspace now and the paths that may have changed (None: any of them)."""
        touched = self._watch.drain() if self._watch is not None else None
        if touched is None or GIT_DIR in touched.paths:
            return self._snapshot(), None
        entries, candidates = refresh(
            self._tree,
            previous.entries,
            touched.paths | previous.linked,
            touched.trees,
            max_paths=self._limits.max_paths,
            max_seconds=self._limits.max_seconds,
        )
        if self._watch is not None:
            new = [p for p in candidates if p in entries and entries[p].is_dir]
            if not self._watch.watch(new):
                return self._snapshot(), None
        return entries, candidates

    def _first_look(self) -> _Look:
        self._tree.hold()
        self._stash.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(self._stash, 0o700)
        for old in self._stash.iterdir():
            old.unlink()
        started = time.time_ns()
        entries = self._snapshot()
        look = _Look(entries, taken_ns=started, linked=_linked(entries))
        total = sum(entry.size for entry in entries.values() if entry.is_file)
        if total > self._limits.max_stash_bytes:
            raise TooLarge(f"the workspace holds more than {self._limits.max_stash_bytes:,} bytes")
        self._keep(look, entries.items())
        return look

    def _next_look(self, previous: _Look) -> tuple[_Look, Effects]:
        started = time.time_ns()
        entries, candidates = self._entries_since(previous)
        if candidates is None:
            before, after = previous.entries, entries
            linked = _linked(entries)
        else:
            before = {p: previous.entries[p] for p in candidates if p in previous.entries}
            after = {p: entries[p] for p in candidates if p in entries}
            linked = {p for p in previous.linked | candidates if p in entries}
            linked = {p for p in linked if entries[p].links > 1 and entries[p].is_file}
        suspect = frozenset(self._racy(previous, after))
        changes = compare(before, after, suspect)
        look = _Look(
            entries,
            copies=dict(previous.copies),
            links=dict(previous.links),
            taken_ns=started,
            linked=linked,
        )
        for change in changes:
            for path in (change.path, change.source):
                if path is not None:
                    look.copies.pop(path, None)
                    look.links.pop(path, None)
        self._keep(look, [(c.path, entries[c.path]) for c in changes if c.path in entries])
        workspace = tuple(c for c in changes if not _in_git(c.path))
        git_state = tuple(c.path for c in changes if _in_git(c.path))
        return look, Effects(workspace, git_state)

    def _racy(self, previous: _Look, entries: dict[str, Entry]) -> Iterable[str]:
        for path, entry in entries.items():
            if not entry.is_file or entry.mtime_ns < previous.taken_ns - RACY_NS:
                continue
            if previous.entries.get(path) != entry or path not in previous.copies:
                continue
            if not self._holds(path, previous.copies[path]):
                yield path

    def _holds(self, path: str, piece: Slice) -> bool:
        try:
            fd = self._tree.open_file(path)
        except OSError:
            return False
        try:
            return matches(self._stash, piece, fd)
        finally:
            os.close(fd)

    def _keep(self, look: _Look, entries: Iterable[tuple[str, Entry]]) -> None:
        """Keep what a restore of these paths needs: a link's target, a file's content
        (packed together, in one new pack)."""
        files: list[str] = []
        for path, entry in entries:
            if entry.is_link:
                look.links[path] = self._tree.readlink(path)
            elif entry.is_file:
                files.append(path)
        if files:
            name = f"{next(self._names):x}"
            room = self._limits.max_stash_bytes
            look.copies.update(write_pack(self._stash, name, self._tree, files, max_bytes=room))

    def _drop_unused(self, dropped: _Look) -> None:
        """Remove the packs only ``dropped`` (a look no longer kept) referred to."""
        unused = {piece.pack for piece in dropped.copies.values()}
        for look in (self._before, self._now, self._held[0] if self._held else None):
            if look is not None:
                unused.difference_update(piece.pack for piece in look.copies.values())
        for name in unused:
            (self._stash / name).unlink(missing_ok=True)

    def _put_back(self, before: _Look, now: _Look, paths: list[str]) -> _Look:
        """``paths`` as ``before`` saw them, through the workspace's one door: what was not
        there is removed (children first); what was is written back parents first, each
        parent that is no longer a real directory made one again, never followed."""
        failed: list[str] = []
        wanted = set(paths) | _parents_replaced(before, now, paths)
        gone = [p for p in wanted if p not in before.entries]
        for path in sorted(gone, key=lambda p: p.count("/"), reverse=True):
            try:
                self._tree.remove(path)
            except OSError:
                failed.append(path)
        back = [p for p in wanted if p in before.entries]
        for path in sorted(back, key=lambda p: (p.count("/"), p)):
            try:
                self._write_back(before, path)
            except (OSError, ValueError):
                failed.append(path)
        if failed:
            raise RestoreFailed(failed, "the file system refused")
        entries = self._snapshot()
        look = _Look(entries, taken_ns=time.time_ns(), linked=_linked(entries))
        fresh: list[tuple[str, Entry]] = []
        for path, entry in look.entries.items():
            origin = before if path in wanted else now
            if path in origin.copies:
                look.copies[path] = origin.copies[path]
            elif path in origin.links:
                look.links[path] = origin.links[path]
            elif entry.is_file or entry.is_link:
                fresh.append((path, entry))
        self._keep(look, fresh)
        return look

    def _write_back(self, before: _Look, path: str) -> None:
        entry = before.entries[path]
        if entry.is_dir:
            self._tree.make_directory(path, stat.S_IMODE(entry.mode))
        elif entry.is_link:
            self._tree.put_link(path, before.links[path], entry.mtime_ns)
        else:
            piece = before.copies[path]
            self._tree.put_file(
                path,
                lambda out: copy_out(self._stash, piece, out),
                stat.S_IMODE(entry.mode),
                entry.mtime_ns,
            )


def _parents_replaced(before: _Look, now: _Look, paths: Iterable[str]) -> set[str]:
    """The directories above ``paths`` that were real directories before and are not now
    (a link or a file in their place): they are put back first, as directories."""
    replaced: set[str] = set()
    for path in paths:
        parts = path.split("/")
        for depth in range(1, len(parts)):
            parent = "/".join(parts[:depth])
            old, new = before.entries.get(parent), now.entries.get(parent)
            if old is not None and old.is_dir and (new is None or not new.is_dir):
                replaced.add(parent)
    return replaced


def _linked(entries: dict[str, Entry]) -> set[str]:
    return {path for path, entry in entries.items() if entry.links > 1 and entry.is_file}


def _in_git(path: str) -> bool:
    return path == GIT_DIR or path.startswith(GIT_DIR + "/")


async def _off_loop(work: Callable[[], T]) -> T:
    return await asyncio.get_running_loop().run_in_executor(_EXECUTOR, work)
