"""The working tree checked byte for byte against a commit, and the folders git must enter.

Why this exists: Discard promises the workspace is back at the reviewed state, and git
cannot be the judge of that. Its checkout converts what it writes by the tree's attributes
(``text``, ``eol``, ``ident``, ``working-tree-encoding``) and its own comparison applies them
again, so a ``.gitattributes`` the agent left (``* text eol=crlf``, ignored by a rule of its
own so no commit removes it) turns the reviewed bytes into others while git says nothing
changed. So once git has written a tree, :func:`restore_bytes` compares every file of it
with the commit by content, the blob id computed here from the bytes on disk; a file whose
bytes differ is right only when they are exactly what the workspace's attributes now (the
reviewed state's, the agent's paths being gone) make of the commit's
(``git cat-file --filters``, which runs no filter program: their config is never shown to
git); any other is written back with the commit's own bytes, and what still differs is
named. And a folder the agent made unreadable (mode 000) would stop git half-way: the
host opens each one first (:func:`open_folders`).

The workspace is the agent's: every read and write goes through its one door
(``walk.WorkspaceTree``), which never follows a symlink in any component.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import stat
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from plancord.agent.execution.host_git import checked_git
from plancord.agent.host_io.git_run import run_git
from plancord.agent.host_io.walk import WorkspaceTree
from plancord.sandbox import SandboxPolicy

_CHUNK = 1 << 20
_GIT_DIR = ".git"
_FILES = ("100644", "100755")
_LINK = "120000"


@dataclass(frozen=True, slots=True)
class _Blob:
    path: str
    mode: str
    blob: str


def open_folders(workspace: Path) -> tuple[str, ...]:
    """Every folder of ``workspace`` (not its ``.git``) the host could not list, enter or
    write, made so (its owner's bits added) before git walks it; the folders opened."""
    tree = WorkspaceTree(workspace)
    opened: list[str] = []
    for path, info in tree.scan(prune=lambda path: path == _GIT_DIR):
        mode = stat.S_IMODE(info.st_mode)
        if stat.S_ISDIR(info.st_mode) and mode & stat.S_IRWXU != stat.S_IRWXU:
            tree.chmod(path, mode | 0o755)  # before the scan goes in
            opened.append(path)
    return tuple(opened)


async def restore_bytes(policy: SandboxPolicy, commit: str) -> tuple[str, ...]:
    """Make every file of ``commit``'s tree in the workspace hold that commit's bytes (or
    what the workspace's own attributes make of them); the paths that still do not."""
    algorithm = (await checked_git(policy, "rev-parse", "--show-object-format")).strip()
    listing = await checked_git(
        policy, "ls-tree", "-r", "-z", "--full-tree", commit, max_output=200_000_000
    )
    blobs = list(_listed(listing))
    tree = WorkspaceTree(policy.workspace)
    wrong = await asyncio.to_thread(_differing, tree, blobs, algorithm)
    left: list[str] = []
    with tempfile.TemporaryDirectory(prefix="plancord-bytes-") as folder:
        for blob in wrong:
            if not await _put_back(policy, tree, blob, commit, Path(folder)):
                left.append(blob.path)
    return tuple(left)


def _listed(listing: str) -> Iterator[_Blob]:
    for row in listing.split("\x00"):
        meta, _, path = row.partition("\t")
        if not path:
            continue
        mode, _, blob = meta.split(" ")
        if mode in (*_FILES, _LINK):
            yield _Blob(path, mode, blob)


def _differing(tree: WorkspaceTree, blobs: list[_Blob], algorithm: str) -> list[_Blob]:
    return [b for b in blobs if _blob_id(tree, b, algorithm) != b.blob]


def _blob_id(tree: WorkspaceTree, blob: _Blob, algorithm: str) -> str | None:
    """Git's id of what ``blob.path`` holds as the kind the tree says; None when it is not
    that kind (or is not there)."""
    info = tree.lstat(blob.path)
    if info is None:
        return None
    digest = hashlib.new(algorithm)
    if blob.mode == _LINK:
        if not stat.S_ISLNK(info.st_mode):
            return None
        target = os.fsencode(tree.readlink(blob.path))
        digest.update(b"blob %d\x00" % len(target) + target)
        return digest.hexdigest()
    if not stat.S_ISREG(info.st_mode):
        return None
    try:
        fd = tree.open_file(blob.path)
    except OSError:
        return None
    try:
        digest.update(b"blob %d\x00" % os.fstat(fd).st_size)
        while chunk := os.read(fd, _CHUNK):
            digest.update(chunk)
    finally:
        os.close(fd)
    return digest.hexdigest()


async def _put_back(
    policy: SandboxPolicy, tree: WorkspaceTree, blob: _Blob, commit: str, folder: Path
) -> bool:
    """``blob.path`` as the commit holds it, unless it already holds what the workspace's
    attributes make of it; False when it could not be written."""
    raw, converted = folder / "raw", folder / "converted"
    if not await _cat(policy, ("cat-file", "blob", blob.blob), raw):
        return False
    if blob.mode == _LINK:
        try:
            await asyncio.to_thread(tree.put_link, blob.path, os.fsdecode(raw.read_bytes()))
        except OSError:
            return False
        return True
    spec = f"{commit}:{blob.path}"
    if await _cat(policy, ("cat-file", "--filters", spec), converted) and await asyncio.to_thread(
        _holds, tree, blob.path, converted
    ):
        return True
    mode = 0o755 if blob.mode == "100755" else 0o644
    try:
        await asyncio.to_thread(tree.put_file, blob.path, lambda out: _copy(raw, out), mode)
    except OSError:
        return False
    return True


async def _cat(policy: SandboxPolicy, args: tuple[str, ...], target: Path) -> bool:
    """Git's output for ``args`` in ``target`` (a file of the host's, through a pipe)."""
    out = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    try:
        done = await run_git(policy, *args, max_output=1 << 34, stdout_to=out)
    finally:
        os.close(out)
    return done.ok and not done.truncated


def _holds(tree: WorkspaceTree, path: str, expected: Path) -> bool:
    try:
        fd = tree.open_file(path)
    except OSError:
        return False
    try:
        with expected.open("rb") as want:
            while True:
                have, wanted = os.read(fd, _CHUNK), want.read(_CHUNK)
                if have != wanted:
                    return False
                if not have:
                    return True
    finally:
        os.close(fd)


def _copy(source: Path, out: int) -> None:
    with source.open("rb") as handle:
        while chunk := handle.read(_CHUNK):
            view = memoryview(chunk)
            while view:
                view = view[os.write(out, view) :]
