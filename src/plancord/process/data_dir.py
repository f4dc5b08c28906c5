"""What must hold before the bot connects to Discord, each failure one line saying what to do.

``plancord run`` checks the data directory first: a bot that logs in and then cannot open its
database fails with a traceback after a minute of reconnecting, and a new user reads neither.
``plancord doctor`` runs the same check, so it never calls fine what ``run`` would refuse.

The data directory holds the conversations, plans and workspaces: plancord creates it
readable by its own user only (0700), and the SQLite store creates its file 0600.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from plancord.config import Config


def _writable_dir(path: Path, name: str = "") -> str | None:
    where = f"{name}: " if name else ""
    if path.exists() and not path.is_dir():
        return f"{where}exists but is not a directory"
    if not path.exists():
        parent = next((p for p in path.parents if p.exists()), None)
        if parent is None or not parent.is_dir() or not os.access(parent, os.W_OK | os.X_OK):
            return f"{where}does not exist and cannot be created"
        return None
    try:
        handle, probe = tempfile.mkstemp(prefix=".plancord-probe-", dir=path)
    except OSError as exc:
        return f"{where}not writable ({exc.strerror or exc})"
    os.close(handle)
    os.unlink(probe)
    return None


def data_dir_problem(config: Config) -> str | None:
    """Why plancord could not keep its state where the config says, or None when it can."""
    problem = _writable_dir(config.data_dir)
    if problem is None:
        problem = _writable_dir(config.agents_dir, "its agents folder")
    database = config.database_path
    if database is None:  # PostgreSQL: the server keeps the state, not this folder
        return problem
    if problem is None and database.exists():
        if not database.is_file():
            problem = f"the database {database} is not a file"
        elif not os.access(database, os.R_OK | os.W_OK):
            problem = f"the database {database} is not readable and writable"
    if problem is None and not database.exists():
        problem = _writable_dir(database.parent, f"the database folder {database.parent}")
    return problem


def data_dir_fix(problem: str) -> str:
    if problem.endswith("exists but is not a directory"):
        return "point data_dir at a directory"
    if "cannot be created" in problem:
        return "create it and give the bot's user write access, or change data_dir"
    return "give the bot's user write access, or change data_dir"


#: The data directory's mode when plancord creates it: the bot's user only.
PRIVATE_DIR_MODE = 0o700


def make_private_dir(path: Path) -> None:
    """Create ``path`` (and missing parents) if absent, the directory itself 0700 whatever
    the umask. An existing directory is left as it is: ``doctor`` warns when others can read
    it. ``OSError`` when it cannot be created."""
    if path.is_dir():
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.mkdir(mode=PRIVATE_DIR_MODE)
    path.chmod(PRIVATE_DIR_MODE)


def exposed_to_others(path: Path) -> str | None:
    """``path``'s mode in octal when its group or others may read, write or enter it."""
    try:
        mode = path.stat().st_mode & 0o777
    except OSError:
        return None
    return f"{mode:04o}" if mode & 0o077 else None
