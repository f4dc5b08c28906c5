"""The repository config git sees inside the sandbox: git's own reading, allow-listed.

Why this exists: before a process starts in a workspace holding repositories (its own, and
any nested in it: ``nested``), git reads each repository's config in the sandbox (read-only,
through ``read``: the runner's own way to run a process; kept while nothing it read changed:
``config_cache``), ``git_config`` keeps the allow-listed entries, and this module decides
how the process is kept from the rest: nothing to do when git's readings hold nothing else;
under bubblewrap, each allow-listed file bound over its repository's config (and an empty
file over ``config.worktree``); elsewhere, where no mount can hide a file, a refusal naming
the keys.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from plancord.core.sandbox_policy import Layer, SandboxPolicy
from plancord.sandbox import config_cache, git_config, git_dirs, nested
from plancord.sandbox.layers import SandboxUnavailable


class Reading(Protocol):
    """What ``read`` returns: the runner's ``ProcessResult`` is one."""

    @property
    def exit_code(self) -> int | None: ...
    @property
    def stdout(self) -> str: ...
    @property
    def stderr(self) -> str: ...
    @property
    def truncated(self) -> bool: ...


#: How long git may take to read a repository's config, and how much it may print.
READ_SECONDS = 20.0
READ_BYTES = 16 * 1024**2


def repositories(policy: SandboxPolicy) -> list[tuple[Path, git_config.Repository]]:
    """The workspace's repository, if any, and each one nested in it, by the directory git
    runs in; each config once.

    Raises SandboxUnavailable (nothing runs) for a ``.git`` file or ``commondir`` plancord
    did not make (or, nested, one leading outside the workspace), or a workspace too large
    to search for nested repositories.
    """
    try:
        return _repositories(policy)
    except (git_config.ForeignRepository, nested.TooManyDirectories) as exc:
        raise SandboxUnavailable(str(exc)) from None


def covers(
    policy: SandboxPolicy,
    layer: Layer,
    read: Callable[[SandboxPolicy, Path], Reading],
    repositories: list[tuple[Path, git_config.Repository]],
    blanked: tuple[Path, ...] = (),
) -> tuple[tuple[tuple[str, str], ...], str | None]:
    """What to bind over the config of each of ``repositories`` so git sees only
    allow-listed keys (and, under bubblewrap, an empty file over each of ``blanked``), and
    the directory holding the views; nothing when there is nothing to hide.

    Raises SandboxUnavailable (nothing runs) for a config git cannot read, or keys to hide
    where no mount can hide them.
    """
    hidden: list[tuple[Path, git_config.Repository, git_config.ConfigView]] = []
    for root, repository in repositories:
        view = _view(policy, root, repository, read)
        if view.needed:
            hidden.append((root, repository, view))
    if hidden and layer is not Layer.BUBBLEWRAP:
        root, _, view = hidden[0]
        keys = ", ".join(view.dropped[:8]) + (", …" if len(view.dropped) > 8 else "")
        where = "" if root == policy.workspace else f" in {root.relative_to(policy.workspace)}"
        raise SandboxUnavailable(
            f"the repository's config{where} sets {keys}, which git would obey; without "
            "bubblewrap plancord cannot hide them from git. Remove them from the repository's "
            "config (outside plancord), or run where bubblewrap works"
        )
    if not hidden and not (blanked and layer is Layer.BUBBLEWRAP):
        return (), None
    mounted = [policy.workspace, *policy.shared, *map(Path, git_dirs.outside(policy))]
    directory = Path(tempfile.mkdtemp(prefix="plancord-git-view-"))
    (directory / "empty").write_text("")
    covers: list[tuple[Path, Path]] = []
    for index, (_, repository, view) in enumerate(hidden):
        (directory / f"config-{index}").write_text(git_config.render(view.kept))
        covers.append((directory / f"config-{index}", repository.config))
        if repository.worktree_config is not None:
            covers.append((directory / "empty", repository.worktree_config))
    covers += [(directory / "empty", path) for path in blanked]
    # A config that does not exist is one git does not read (a nested ``.git`` git does not
    # take for a repository), and bubblewrap could not bind over it in a read-only view.
    shown = tuple(
        (str(source), str(target))
        for source, target in covers
        if target.is_file() and any(target.resolve().is_relative_to(root) for root in mounted)
    )
    return shown, str(directory)


def _repositories(policy: SandboxPolicy) -> list[tuple[Path, git_config.Repository]]:
    """The workspace's repository, if any, and each one nested in it, by the directory git
    runs in; each config once."""
    found: list[tuple[Path, git_config.Repository]] = []
    top = git_config.locate(policy.workspace, policy.git_dir)
    if top is not None:
        found.append((policy.workspace, top))
    for root in nested.repositories(policy.workspace):
        repository = git_config.locate(root, within=policy.workspace)
        if repository is not None:
            found.append((root, repository))
    seen: set[Path] = set()
    unique = []
    for root, repository in found:
        if repository.config not in seen:
            seen.add(repository.config)
            unique.append((root, repository))
    return unique


def _view(
    policy: SandboxPolicy,
    root: Path,
    repository: git_config.Repository,
    read: Callable[[SandboxPolicy, Path], Reading],
) -> git_config.ConfigView:
    """git's reading of ``root``'s config, allow-listed: kept from an earlier run while
    nothing it depends on changed (``config_cache``), else read now in the sandbox."""
    key = config_cache.key(root, repository, policy.shared, policy.git_dir)
    view = config_cache.VIEWS.get(key)
    if view is not None:
        return view
    started = config_cache.now_ns()
    reader = policy.for_reading()
    listing = read(reader, root)
    if listing.exit_code != 0 or listing.truncated:
        said = (listing.stderr.strip() or f"exit status {listing.exit_code}")[:300]
        raise SandboxUnavailable(f"git could not read the repository's config ({said})")
    try:
        parsed = git_config.parse_listing(listing.stdout.encode())
    except ValueError as exc:
        raise SandboxUnavailable(f"plancord could not read git's config listing: {exc}") from None
    view = git_config.filtered(parsed.entries)
    mounted = (policy.workspace, *policy.shared, *map(Path, git_dirs.outside(policy)))
    kept = config_cache.fingerprint(root, repository, parsed, mounted, read_at_ns=started)
    if kept is not None:
        config_cache.VIEWS.put(key, kept, view)
    return view
