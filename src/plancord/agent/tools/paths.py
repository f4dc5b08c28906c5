"""The workspace jail: every path a tool receives from the model is resolved here first.

The model names files as text. Before any file tool touches the disk, that text becomes an
absolute path whose every existing component has been resolved (``..`` and symlinks, followed
from the workspace root only: ``beneath``), and the result must lie inside the agent's
workspace. A symlink inside the workspace that points
outside is therefore refused, and so is a path that only reaches outside through a
non-existent component followed by ``..``. Writes into a ``.git`` directory are refused too:
the repository's own files (config, hooks) change only through the git tools.

A read may follow a link that stays inside the workspace (``view alias/app.py`` shows
``src/app.py``). A write never does: the path it was asked (and judged: the standing
documents' guard, drift's known writes) by is the path it writes, so a path that a link
would turn into another is refused, naming where the link leads. The file is then reached
through the workspace's no-follow walk (``fileio``), never by this path's text.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path, PurePath

from plancord.agent.tools.beneath import LinkLoop, resolve_beneath

GIT_DIR_NAME = ".git"
MAX_PATH_CHARS = 4096


class PathOutsideWorkspace(Exception):
    """The path cannot be used; ``str(exc)`` tells the model why and what to do instead."""


def resolve_in_workspace(workspace: Path, user_path: str, *, write: bool = False) -> Path:
    """The absolute, resolved path ``user_path`` names inside ``workspace``.

    Relative paths are taken from the workspace root; absolute ones must already lie inside
    it. Raises ``PathOutsideWorkspace`` when the resolved path is outside the workspace, when
    the text holds a NUL byte, when symlinks cannot be resolved (a loop), and, with
    ``write``, when the path is inside a ``.git`` directory.
    """
    if "\x00" in user_path:
        raise PathOutsideWorkspace("The path contains a NUL byte; give a plain file path.")
    root = workspace.resolve()
    candidate = Path(user_path)
    if not candidate.is_absolute():
        candidate = root / candidate
    try:
        resolved = resolve_beneath(root, _aliases(workspace, root), candidate)
    except LinkLoop:
        raise PathOutsideWorkspace(
            f"Cannot resolve {user_path!r}: too many levels of symbolic links."
        ) from None
    except OSError as exc:
        raise PathOutsideWorkspace(f"Cannot resolve {user_path!r}: {exc}.") from None
    if resolved != root and not resolved.is_relative_to(root):
        raise PathOutsideWorkspace(
            f"{user_path!r} resolves to {resolved}, which is outside the workspace {root}. "
            "Use a path inside the workspace (relative paths start at its root)."
        )
    if write and _inside_git_dir(resolved.relative_to(root)):
        raise PathOutsideWorkspace(
            f"{user_path!r} is inside a .git directory, which file tools do not write to; "
            "use the git tools to change the repository."
        )
    if write and resolved != _lexical(workspace, root, candidate):
        shown = display_path(workspace, resolved)
        raise PathOutsideWorkspace(
            f"{user_path!r} leads through a symbolic link to {shown}; file tools write a "
            f"path by its own name and do not follow links. Write {shown} instead."
        )
    return resolved


def _aliases(workspace: Path, root: Path) -> tuple[Path, ...]:
    """The workspace's other absolute names (as configured, through a link of the host's)."""
    given = workspace.absolute()
    names = {given, Path(os.path.normpath(given))} - {root}
    return tuple(sorted(names))


def _lexical(workspace: Path, root: Path, candidate: Path) -> Path:
    """``candidate`` with ``.`` and ``..`` taken away as text, from the resolved root (a
    workspace reached through a link of the host's is still the workspace)."""
    joined = Path(os.path.normpath(candidate))
    for given in (workspace.absolute(), Path(os.path.normpath(workspace.absolute()))):
        if joined.is_relative_to(given):
            return root / joined.relative_to(given)
    return joined


async def resolve_off_loop(workspace: Path, user_path: str, *, write: bool = False) -> Path:
    """``resolve_in_workspace`` in a worker thread: resolving stats every component, and a
    slow or large filesystem must not stall the event loop."""
    return await asyncio.to_thread(resolve_in_workspace, workspace, user_path, write=write)


def display_path(workspace: Path, path: Path) -> str:
    """``path`` relative to the workspace root, as the model should write it back ('.' = root)."""
    relative = os.path.relpath(path, workspace.resolve())
    return PurePath(relative).as_posix()


def _inside_git_dir(relative: PurePath) -> bool:
    return any(part.casefold() == GIT_DIR_NAME for part in relative.parts)
