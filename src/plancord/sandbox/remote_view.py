"""A Push's remote on this machine as the push's sandbox shows it: the one writable place,
with its own config allow-listed and no hooks.

Why this exists: a push to a repository on this machine runs ``git receive-pack`` in that
repository, which reads the repository's own config and runs its hooks (``pre-receive``,
``update``, ``reference-transaction``, ``post-receive``, …) or whatever its
``core.hooksPath`` names; and such a remote lies in a directory shared with the agents
(``sandbox.shared_paths``), which an agent can write outside execution. So nothing of the
remote is trusted, and a Push (``SandboxPolicy.remote``, made by ``for_push``) runs under
three walls, each enough on its own against the hooks:

* the mounts: the workspace, every git directory of it and the other shared directories
  read-only; the remote's directory (:func:`checked`: a real directory in a shared one,
  neither inside the workspace nor holding it; under bubblewrap bound by the descriptor
  :func:`opened` took, so a link swapped in later moves nothing) the only writable place;
  no network. Whatever runs can write only the remote, which the agent could write anyway;
* the remote's config as git itself reads it, allow-listed (``git_config``), bound over the
  real one under bubblewrap for every Push (not only when it holds something to hide: the
  remote can change between the reading and the push, the view cannot), an empty
  directory over its ``hooks`` and an empty file over ``config.worktree``; where no mount
  can hide a file (the Landlock fallback, no sandbox) a remote whose config holds anything
  off the allow-list is refused, naming the keys;
* ``receive-pack`` started with the settings git honours only from its command line
  (``core.hooksPath=/dev/null`` among them, :func:`receive_pack`), which no repository's
  config can set back (the command line is git's last word), since git drops the pushing
  side's own command-line settings for a local ``receive-pack``.
"""

from __future__ import annotations

import os
import shlex
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path

from plancord.core.sandbox_policy import Layer, SandboxPolicy
from plancord.sandbox import git_config, git_dirs
from plancord.sandbox.config_view import Reading
from plancord.sandbox.layers import SandboxUnavailable


def receive_pack() -> str:
    """The command a local push starts on the remote's side (git runs it through the
    shell): ``receive-pack`` with :data:`git_config.COMMAND_LINE_SETTINGS`."""
    settings = " ".join(
        f"-c {shlex.quote(f'{key}={value}')}" for key, value in git_config.COMMAND_LINE_SETTINGS
    )
    return f"git {settings} receive-pack"


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def checked(policy: SandboxPolicy, remote: Path) -> str | None:
    """Why ``remote`` may not be a Push's writable place under ``policy``, or None: it must
    be a real path (no link on the way), a directory within a shared directory the run may
    write, and neither inside the workspace nor holding it (nor a shared directory kept
    read-only, nor a git directory of the workspace elsewhere)."""
    real = os.path.realpath(remote)
    if real != str(remote) or not os.path.isdir(real) or os.path.islink(real):
        return f"the remote {remote} is not a directory reached without a symbolic link"
    workspace = os.path.realpath(policy.workspace)
    if _inside(real, workspace):
        return f"the remote {remote} is inside the agent's workspace"
    held = [workspace, *git_dirs.outside(policy)]
    held += [os.path.realpath(path) for path in policy.read_only_shared]
    if any(_inside(path, real) for path in held):
        return f"the remote {remote} holds the agent's workspace or a directory kept read-only"
    writable = [
        os.path.realpath(path) for path in policy.shared if path not in policy.read_only_shared
    ]
    if any(_inside(real, root) for root in writable):
        return None
    if any(_inside(real, os.path.realpath(root)) for root in policy.read_only_shared):
        return f"the remote {remote} lies in a shared directory the current step does not name"
    return f"the remote {remote} is outside the directories shared with the agent"


def opened(remote: Path) -> int:
    """A file descriptor of the directory at ``remote`` (``O_PATH``, not following a link),
    for bubblewrap to bind that very directory (``--bind-fd``) whatever the path names by
    the time the sandbox is built. Raises SandboxUnavailable when the path does not lead to
    a directory there (a link, or moved on the way)."""
    try:
        fd = os.open(remote, os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        raise SandboxUnavailable(
            f"Not pushed: the remote {remote} is not a directory reached without a symbolic "
            f"link ({exc.strerror or exc})"
        ) from None
    if os.readlink(f"/proc/self/fd/{fd}") != str(remote):
        os.close(fd)
        raise SandboxUnavailable(f"Not pushed: the remote {remote} moved while the push started")
    return fd


def repository(remote: Path) -> git_config.Repository:
    """The remote's git directory as ``receive-pack`` finds it (``<remote>/.git`` first,
    then ``<remote>`` itself). Raises SandboxUnavailable for a ``.git`` that is a link or a
    file, a ``commondir`` or ``gitdir`` (each sends git to another repository's state), a
    config (or ``config.worktree``) that is not a plain file, a ``hooks`` that is a link,
    or a directory that is no repository."""
    dot_git = remote / ".git"
    if os.path.lexists(dot_git) and (dot_git.is_symlink() or not dot_git.is_dir()):
        raise SandboxUnavailable(
            f"{dot_git} is a link or a file leading to another git directory; a Push "
            "writes only a repository that is its own"
        )
    directory = dot_git if os.path.lexists(dot_git) else remote
    if os.path.lexists(directory / "commondir") or os.path.lexists(directory / "gitdir"):
        raise SandboxUnavailable(
            f"the remote's git directory {directory} has a commondir or gitdir file, which "
            "sends git to another repository; a Push writes only a repository of its own"
        )
    if not _plain_file(directory / "HEAD") or not (directory / "objects").is_dir():
        raise SandboxUnavailable(f"{remote} is not a git repository")
    config, worktree, hooks = (directory / name for name in ("config", "config.worktree", "hooks"))
    if not _plain_file(config):
        raise SandboxUnavailable(f"the remote's config {config} is not a plain file")
    if os.path.lexists(worktree) and not _plain_file(worktree):
        raise SandboxUnavailable(f"the remote's {worktree} is not a plain file")
    if hooks.is_symlink():
        raise SandboxUnavailable(f"the remote's {hooks} is a symbolic link")
    return git_config.Repository(
        config=config,
        worktree_config=worktree if os.path.lexists(worktree) else None,
        directory=directory,
    )


def _plain_file(path: Path) -> bool:
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def covers(
    policy: SandboxPolicy,
    layer: Layer,
    read: Callable[[SandboxPolicy, Path], Reading],
    directory: str | None,
) -> tuple[tuple[tuple[str, str], ...], str | None]:
    """What to bind over the remote of ``policy`` (a Push): its allow-listed config, an
    empty ``config.worktree`` and an empty ``hooks``, read-only; the files go into
    ``directory`` (made when None), which is returned.

    ``read(policy, git_dir)``: git's own reading of the config of the git directory, in a
    read-only sandbox. Raises SandboxUnavailable (nothing runs) for a remote that may not
    be written (:func:`checked`), one git cannot read, or, without bubblewrap, one whose
    config holds keys off the allow-list.
    """
    remote = policy.remote
    if remote is None:
        return (), directory
    problem = checked(policy, remote)
    if problem is not None:
        raise SandboxUnavailable(f"Not pushed: {problem}")
    found = repository(remote)
    listing = read(policy.for_reading(), found.directory)
    if listing.exit_code != 0 or listing.truncated:
        said = (listing.stderr.strip() or f"exit status {listing.exit_code}")[:300]
        raise SandboxUnavailable(f"git could not read the remote's config ({said})")
    try:
        view = git_config.filtered(git_config.parse_listing(listing.stdout.encode()).entries)
    except ValueError as exc:
        raise SandboxUnavailable(f"plancord could not read the remote's config: {exc}") from None
    if layer is not Layer.BUBBLEWRAP:
        if view.needed:
            keys = ", ".join(view.dropped[:8]) + (", …" if len(view.dropped) > 8 else "")
            raise SandboxUnavailable(
                f"the remote's config ({found.config}) sets {keys}, which git would obey; "
                "without bubblewrap plancord cannot hide them from git. Remove them from the "
                "remote's config, or run where bubblewrap works"
            )
        return (), directory
    if directory is None:
        directory = tempfile.mkdtemp(prefix="plancord-git-view-")
    view_dir = Path(directory)
    (view_dir / "remote-config").write_text(git_config.render(view.kept))
    (view_dir / "empty").write_text("")
    (view_dir / "no-hooks").mkdir(exist_ok=True)
    shown = [(str(view_dir / "remote-config"), str(found.config))]
    if found.worktree_config is not None:
        shown.append((str(view_dir / "empty"), str(found.worktree_config)))
    hooks = found.directory / "hooks"
    if hooks.is_dir():
        shown.append((str(view_dir / "no-hooks"), str(hooks)))
    return tuple(shown), directory
