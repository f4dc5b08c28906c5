"""The workspace's fingerprint, so an approval binds to the tree the reviewer saw.

``GitTreeProbe.tree`` reads, inside the agent's sandbox and read-only, the commit ``HEAD``
names and every uncommitted change, and sums them up as ``<commit> clean`` or
``<commit> dirty:<hash>``. The planning service records it when a plan is submitted and
compares it when the plan is approved.

What the hash covers, whatever the size of the change (no diff is read, so nothing is cut):
``git status`` of tracked, untracked and ignored paths (with the staged blobs' ids); the
content of every changed tracked file and every untracked file, hashed by git
(``hash-object --no-filters``, raw bytes); a symlink's target; and each ignored file's name,
size and mtime. When any of it cannot be read whole (too many paths, a timeout, a file git
cannot hash), the fingerprint is ``<commit> unreadable:<nonce>``, which never matches: the
approval then asks for a fresh look rather than trusting a partial view.
"""

from __future__ import annotations

import asyncio
import hashlib
import secrets
import stat
from collections.abc import Sequence
from pathlib import Path

from plancord.agent.home import AgentHomes
from plancord.agent.host_io.git_run import run_git
from plancord.agent.host_io.walk import WorkspaceTree
from plancord.core.sandbox_policy import SandboxSettings
from plancord.sandbox import SandboxPolicy

MAX_STATUS_BYTES = 64_000_000
"""The most ``git status`` output read (about a million paths); past it, unreadable."""
HASH_BATCH = 500
"""Paths per ``git hash-object`` run."""
HASH_TIMEOUT_SECONDS = 120.0


class Unreadable(Exception):
    pass


class GitTreeProbe:
    def __init__(self, agents_dir: Path, sandbox: SandboxSettings) -> None:
        self._homes = AgentHomes(agents_dir, sandbox)

    async def tree(self, agent: str) -> str | None:
        home = self._homes.of(agent)
        if not await asyncio.to_thread((home.workspace / ".git").exists):
            return None
        return await tree_fingerprint(home.read_only_policy)


async def tree_fingerprint(policy: SandboxPolicy) -> str | None:
    """The fingerprint of the repository in ``policy``'s workspace (see the module's
    docstring), or None when it is not a git repository."""
    head, status = await asyncio.gather(
        run_git(policy, "rev-parse", "--short=12", "HEAD"),
        run_git(
            policy,
            "status",
            "--porcelain=v2",
            "-z",
            "--no-renames",
            "--untracked-files=all",
            "--ignored=traditional",
            max_output=MAX_STATUS_BYTES,
        ),
    )
    if not status.ok:
        return None
    commit = head.stdout.strip() if head.ok else "no-commit"
    if status.truncated:
        return f"{commit} unreadable:{secrets.token_hex(6)}"
    if not status.stdout:
        return f"{commit} clean"
    try:
        digest = await _digest(policy, status.stdout)
    except Unreadable:
        return f"{commit} unreadable:{secrets.token_hex(6)}"
    return f"{commit} dirty:{digest[:12]}"


async def _digest(policy: SandboxPolicy, status: str) -> str:
    hashed, ignored = _read_status(status)
    kinds = await asyncio.to_thread(_kinds, policy.workspace, [*hashed, *ignored])
    total = hashlib.sha256(status.encode())
    regular = [path for path in hashed if kinds[path][0] == "file"]
    for start in range(0, len(regular), HASH_BATCH):
        batch = regular[start : start + HASH_BATCH]
        output = await run_git(
            policy, "hash-object", "--no-filters", "--", *batch, timeout=HASH_TIMEOUT_SECONDS
        )
        ids = output.stdout.split()
        if not output.ok or output.truncated or len(ids) != len(batch):
            raise Unreadable(output.message)
        for path, blob in zip(batch, ids, strict=True):
            total.update(f"\0content\0{path}\0{blob}".encode())
    for path in [*hashed, *sorted(ignored)]:
        kind, mode, detail = kinds[path]
        seen = detail if kind != "file" or path in ignored else ""
        total.update(f"\0{kind}\0{path}\0{mode}\0{seen}".encode())
    return total.hexdigest()


def _read_status(status: str) -> tuple[list[str], set[str]]:
    """From ``git status --porcelain=v2 -z``: the paths whose working-tree content counts
    (changed tracked files still present, untracked files) and the ignored paths."""
    hashed: list[str] = []
    ignored: set[str] = set()
    for record in status.split("\0"):
        if record.startswith("? "):
            hashed.append(record[2:])
        elif record.startswith("! "):
            ignored.add(record[2:])
        elif record.startswith(("1 ", "u ")):
            unmerged = record[0] == "u"
            fields = record.split(" ", 10 if unmerged else 8)
            worktree_mode = fields[6] if unmerged else fields[5]
            if (unmerged or record[3] != ".") and worktree_mode != "000000":
                hashed.append(fields[-1])
    return hashed, ignored


def _kinds(root: Path, paths: Sequence[str]) -> dict[str, tuple[str, str, str]]:
    """Each path's kind (``file``, ``link``, ``gone``, ``other``), its mode, and what else of
    it counts: a link's target, a file's size and mtime (used for ignored files). Looked at
    through the workspace's one door: a path under a link is gone, never followed."""
    tree = WorkspaceTree(root)
    names = {path: path.rstrip("/") for path in paths}
    try:
        looked = tree.lstat_many(sorted(set(names.values())))
    except ValueError:
        looked = {}
    kinds: dict[str, tuple[str, str, str]] = {}
    for path, name in names.items():
        info = looked.get(name)
        if info is None:
            kinds[path] = ("gone", "", "")
            continue
        mode = f"{info.st_mode:o}"
        if stat.S_ISLNK(info.st_mode):
            kinds[path] = ("link", mode, tree.readlink(name))
        elif stat.S_ISREG(info.st_mode):
            kinds[path] = ("file", mode, f"{info.st_size} {info.st_mtime_ns}")
        else:
            kinds[path] = ("other", mode, "")
    return kinds
