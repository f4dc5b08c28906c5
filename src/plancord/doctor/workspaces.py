"""The doctor's look at ``workspace_roots``: every root an agent may be created in.

Why this exists: a root that does not exist, is a file, or that the bot's user cannot read
and write was reported fine, and the first ``/agent create`` under it failed in Discord.
Each root is checked alone (one line each), and so are the git repositories directly in
it: git refuses a repository another user owns ("dubious ownership"), which under systemd
or Docker is the usual first failure when the repositories were cloned as another user.
"""

from __future__ import annotations

import os
from pathlib import Path

from plancord.config import Config
from plancord.doctor.findings import Check, failed, passed, warned

#: How many repositories' owners are looked at per root (a root may hold thousands).
MAX_REPOSITORIES = 200


def check_workspace_roots(config: Config, euid: int | None = None) -> list[Check]:
    uid = os.geteuid() if euid is None else euid
    return [_check_root(root, uid) for root in config.workspace_roots]


def _check_root(root: Path, uid: int) -> Check:
    what = f"workspace root {root}"
    if not root.exists():
        return failed(what, "does not exist", f"create it (mkdir -p {root}) or remove it")
    if not root.is_dir():
        return failed(what, "is not a directory", "list directories in workspace_roots")
    if not os.access(root, os.R_OK | os.W_OK | os.X_OK):
        return failed(
            what,
            "the bot's user cannot read and write it",
            f"chown -R <bot user> {root} (docs/operations.md: who owns the repositories)",
        )
    others = _foreign_repositories(root, uid)
    if others:
        shown = ", ".join(str(path.name) for path in others[:3])
        more = f" and {len(others) - 3} more" if len(others) > 3 else ""
        return warned(
            what,
            f"{len(others)} repositories belong to another user ({shown}{more}); git refuses them",
            f"chown -R <bot user> {root}/<repo>, or clone them as the bot's user",
        )
    return passed(f"{what}: a writable directory the bot's user owns")


def _foreign_repositories(root: Path, uid: int) -> list[Path]:
    found: list[Path] = []
    try:
        children = sorted(root.iterdir())[:MAX_REPOSITORIES]
    except OSError:
        return found
    for child in children:
        try:
            if child.is_dir() and (child / ".git").exists() and child.stat().st_uid != uid:
                found.append(child)
        except OSError:
            continue
    return found
