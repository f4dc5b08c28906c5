"""The repository config git sees inside the sandbox: git's own reading, allow-listed.

Why this exists: before a process starts in a workspace holding a repository, git reads the
repository's config in the sandbox (read-only, through ``read``: the runner's own way to run
a process), ``git_config`` keeps the allow-listed entries, and this module decides how the
process is kept from the rest: nothing to do when git's reading holds nothing else; under
bubblewrap, the allow-listed file bound over the repository's config (and an empty file over
``config.worktree``); elsewhere, where no mount can hide a file, a refusal naming the keys.
"""

from __future__ import annotations

import dataclasses
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from plancord.core.shell.sandbox import git_config
from plancord.core.shell.sandbox.layers import SandboxUnavailable
from plancord.core.shell.sandbox.policy import Layer, SandboxPolicy


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


def covers(
    policy: SandboxPolicy, layer: Layer, read: Callable[[SandboxPolicy], Reading]
) -> tuple[tuple[tuple[str, str], ...], str | None]:
    """What to bind over the repository's config so git sees only allow-listed keys, and
    the directory holding it; nothing when git's own reading holds nothing else.

    Raises SandboxUnavailable (nothing runs) for a ``.git`` file or ``commondir`` plancord
    did not make, a config git cannot read, or keys to hide where no mount can hide them.
    """
    try:
        repository = git_config.locate(policy.workspace, policy.git_dir)
    except git_config.ForeignRepository as exc:
        raise SandboxUnavailable(str(exc)) from None
    if repository is None:
        return (), None
    reader = dataclasses.replace(policy, writable=False, network=False, inner_wall=False)
    listing = read(reader)
    if listing.exit_code != 0 or listing.truncated:
        said = (listing.stderr.strip() or f"exit status {listing.exit_code}")[:300]
        raise SandboxUnavailable(f"git could not read the repository's config ({said})")
    try:
        view = git_config.filtered(git_config.parse_listing(listing.stdout.encode()))
    except ValueError as exc:
        raise SandboxUnavailable(f"plancord could not read git's config listing: {exc}") from None
    if not view.needed:
        return (), None
    if layer is not Layer.BUBBLEWRAP:
        keys = ", ".join(view.dropped[:8]) + (", …" if len(view.dropped) > 8 else "")
        raise SandboxUnavailable(
            f"the repository's config sets {keys}, which git would obey; without bubblewrap "
            "plancord cannot hide them from git. Remove them from the repository's config "
            "(outside plancord), or run where bubblewrap works"
        )
    mounted = [policy.workspace, *policy.shared]
    directory = Path(tempfile.mkdtemp(prefix="plancord-git-view-"))
    (directory / "config").write_text(git_config.render(view.kept))
    (directory / "empty").write_text("")
    covers = [(directory / "config", repository.config)]
    if repository.worktree_config is not None:
        covers.append((directory / "empty", repository.worktree_config))
    shown = tuple(
        (str(source), str(target))
        for source, target in covers
        if any(target.resolve().is_relative_to(root) for root in mounted)
    )
    return shown, str(directory)
