"""A stdio MCP server's process, started inside the agent's sandbox and kept running.

Why this exists: the sandbox runner (``plancord.sandbox.runner``) runs a command to
completion and keeps its output; an MCP server must live as long as the agent and talk over
its stdin and stdout. So this module builds the same walls from the same public parts: the
layer ``choose_layer`` picks, the argv ``bwrap_argv`` / ``landlock_argv`` make from the
agent's ``SandboxPolicy``, and the environment ``sandbox_environment`` allows. The server
sees its workspace (at its own path; read-only unless the config says
``writable_workspace``, and its git directories read-only always, with git shown only the
allow-listed view of each repository's config, as for every agent process: the runner's
``git_view``), the system's programs, a private ``/tmp`` and the
directories its own code lives in (``mounts``, read-only); not the data directory, not
other workspaces, not the bot's environment. Its environment adds only the values read from
the ``*_FILE`` secrets the config names.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from plancord.config.fields import ConfigError
from plancord.config.mcp import McpServerConfig
from plancord.core.sandbox_policy import Layer, SandboxPolicy
from plancord.sandbox import linked_worktree
from plancord.sandbox.argv import landlock_argv
from plancord.sandbox.environment import sandbox_environment
from plancord.sandbox.layers import choose_layer, host_layout
from plancord.sandbox.runner import git_view, hidden_spawn

#: What the MCP SDK copies from the bot's environment unless it is given a value: each is
#: overwritten, so nothing of the bot's own environment reaches the server.
_INHERITED = {"LOGNAME": "sandbox", "USER": "sandbox", "SHELL": "/bin/sh", "TERM": "dumb"}


@dataclass(frozen=True, slots=True)
class ServerSpawn:
    """The argv and environment of one stdio server; each of ``scratch`` (its private
    ``/tmp`` under the fallback, the folder of its git config view) is removed on close,
    and each of ``pass_fds`` (bubblewrap's options, files copied in, the proxy's door:
    ``runner.hidden_spawn``) passed to the server's process and closed on close."""

    argv: list[str]
    env: dict[str, str]
    cwd: Path
    layer: Layer
    scratch: tuple[str, ...] = ()
    pass_fds: tuple[int, ...] = ()

    def cleanup(self) -> None:
        for directory in self.scratch:
            shutil.rmtree(directory, ignore_errors=True)
        for fd in self.pass_fds:
            with contextlib.suppress(OSError):
                os.close(fd)


def secret_environment(name: str, config: McpServerConfig) -> dict[str, str]:
    """``NAME`` for each ``NAME_FILE`` entry, from the file; ConfigError when unreadable."""
    values: dict[str, str] = {}
    for key, path in config.env.items():
        try:
            values[key.removesuffix("_FILE")] = path.read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as exc:
            problem = getattr(exc, "strerror", None) or str(exc)
            raise ConfigError(
                f"mcp_servers.{name}.env.{key}: cannot read {path}: {problem}", key=key
            ) from None
    return values


def _with_mounts(argv: list[str], mounts: Sequence[Path], layer: Layer) -> list[str]:
    """``argv`` with ``mounts`` shown read-only under Landlock, as readable paths (under
    bubblewrap they are bound by ``bwrap_argv``'s ``reads``)."""
    if not mounts:
        return argv
    extra: list[str] = []
    if layer is Layer.LANDLOCK:
        for path in mounts:
            extra += ["--read", str(path)]
        at = argv.index("confine") + 1
        return [*argv[:at], *extra, *argv[at:]]
    return argv


def server_spawn(
    command: Sequence[str],
    policy: SandboxPolicy,
    *,
    mounts: Sequence[Path] = (),
    secrets: Mapping[str, str] | None = None,
) -> ServerSpawn:
    """How to start ``command`` as a long-lived process under ``policy``.

    Blocking (``choose_layer`` probes bubblewrap, the workspace is searched for repositories):
    call it off the event loop. Raises SandboxUnavailable when no allowed layer works here,
    or when the server could write a repository's git directory (the Landlock fallback).
    """
    workspace = policy.workspace.resolve()
    policy = linked_worktree.with_git_dir(dataclasses.replace(policy, workspace=workspace))
    layer = choose_layer(policy.layer)
    host = host_layout()
    extra = {**_INHERITED, **(secrets or {})}
    shown = git_view(policy, layer)
    view = (shown.directory,) if shown.directory is not None else ()
    if layer is Layer.BUBBLEWRAP:
        try:
            reads = tuple(str(path) for path in mounts)
            made = hidden_spawn(policy, host, command, shown, extra, reads=reads)
        except BaseException:
            shown.close()
            raise
        return ServerSpawn(made.argv, made.env, workspace, layer, view, made.fds)
    scratch = tempfile.mkdtemp(prefix="plancord-mcp-")
    env = sandbox_environment(workspace, scratch, extra)
    if layer is Layer.LANDLOCK:
        argv = landlock_argv(
            policy, host, list(command), private_tmp=scratch, git_outside=shown.outside
        )
    else:
        argv = [*policy.limits.prlimit_argv(), *command]
    return ServerSpawn(_with_mounts(argv, mounts, layer), env, workspace, layer, (scratch, *view))
