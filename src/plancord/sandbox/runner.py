"""The one way an agent's process starts: inside its sandbox, off the event loop, bounded.

Why this exists: every process an agent causes (``bash_execute``, the git tools, ripgrep
behind ``grep``, anything added later) must be walled in the same way, so they all start
here, through :func:`run_sandboxed`. It picks the layer (bubblewrap, else the Landlock
fallback, else a refusal unless the operator turned the sandbox off), builds the argv from
the :class:`~plancord.core.sandbox_policy.SandboxPolicy`, and runs the process's whole
life in a worker thread of its own pool: the fork, the reads, the wait and the kill never
happen on the event loop that every agent and the Discord connection share.

bubblewrap reads its options from a memory file and host files bound under another name
are copied in (``hidden_argv``), and the proxy is reached through a descriptor
(``proxy_door``), so neither the sandbox's pid 1 nor its mount table shows a host path.
Lifecycle of a run (``process_run``): stdin from ``/dev/null``; a new session; the
environment from ``environment.py`` only; output read as it comes, the first
``max_output`` bytes of each stream kept and the rest counted and dropped; at the deadline,
or when the awaiting task is cancelled, the whole sandbox is killed (bubblewrap's pid
namespace dies with it; the fallback's supervisor kills what was reparented to it); when
the command ends, whatever it left running dies with it. Nothing outlives the call.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from plancord.core.sandbox_policy import (
    SANDBOX_TMP,
    Layer,
    Proxied,
    SandboxPolicy,
    proxy_environment,
)
from plancord.sandbox import (
    config_view,
    git_config,
    git_dirs,
    landlock,
    linked_worktree,
    proxy_door,
    remote_view,
)
from plancord.sandbox.argv import HostLayout, bwrap_argv, landlock_argv
from plancord.sandbox.environment import sandbox_environment
from plancord.sandbox.hidden_argv import hidden
from plancord.sandbox.layers import (
    NO_LANDLOCK,
    SandboxUnavailable,
    choose_layer,
    host_layout,
)
from plancord.sandbox.process_run import (
    STOP_GRACE_SECONDS,
    ProcessResult,
    Spawn,
    exit_status,
    run_blocking,
)

#: Sandboxed runs in flight at once; more wait for a thread (never the event loop).
MAX_CONCURRENT_RUNS = 64
_EXECUTOR = ThreadPoolExecutor(MAX_CONCURRENT_RUNS, thread_name_prefix="plancord-sandbox")


def _read_config(policy: SandboxPolicy, root: Path) -> ProcessResult:
    """git's own reading of the config of the repository at ``root``, read-only in the
    sandbox, with the config as it is (``git config`` runs no program)."""
    return _read_config_by(policy, ["-C", str(root)])


def _read_git_dir_config(policy: SandboxPolicy, git_dir: Path) -> ProcessResult:
    """:func:`_read_config` of the git directory ``git_dir`` itself (a bare remote's)."""
    return _read_config_by(policy, [f"--git-dir={git_dir}"])


def _read_config_by(policy: SandboxPolicy, where: list[str]) -> ProcessResult:
    command = ["git", *where, *git_config.READ_COMMAND[1:]]
    spawn = _prepare(command, policy, None, view=False)
    return run_blocking(
        spawn,
        timeout=config_view.READ_SECONDS,
        max_output=config_view.READ_BYTES,
        merge_stderr=False,
        cancel=threading.Event(),
        read_only=True,
    )


@dataclass(frozen=True, slots=True)
class GitView:
    """What a sandboxed process is shown of the workspace's git state. ``read_only``: the
    git directories bound read-only (``git_dirs``); ``covers``: (host file, path inside)
    pairs bound over each repository's config (its allow-listed view) and over what git must
    not read; ``directory``: the host folder holding those files, removed when the process
    ends. ``outside``: a linked worktree's git directories, which lie outside the workspace
    and are mounted (``git_dirs.outside``). A Push's remote (``SandboxPolicy.remote``) has
    its own covers among ``covers`` (``remote_view``)."""

    read_only: tuple[str, ...] = ()
    covers: tuple[tuple[str, str], ...] = ()
    directory: str | None = None
    outside: tuple[str, ...] = ()
    remote_fd: int | None = None
    """Under bubblewrap, an open descriptor of a Push's remote directory, which is bound by
    it (``remote_view.opened``); the spawn closes it."""

    def close(self) -> None:
        """Drop what the view holds on the host (its files, the remote's descriptor)."""
        if self.directory is not None:
            shutil.rmtree(self.directory, ignore_errors=True)
        if self.remote_fd is not None:
            with contextlib.suppress(OSError):
                os.close(self.remote_fd)


def git_view(policy: SandboxPolicy, layer: Layer) -> GitView:
    """The git walls and the allow-listed config view for a process under ``policy``: the one
    way every sandboxed spawn gets them (a run of this runner: the shell, the git tools,
    ripgrep; a long-lived MCP server: ``plancord.agent.mcp.spawn``).

    Blocking (git reads each repository's config in the sandbox). Raises
    SandboxUnavailable (nothing runs) as ``config_view`` and ``git_dirs`` do. ``policy``
    has its ``git_dir`` settled (``linked_worktree.with_git_dir``).
    """
    repositories = config_view.repositories(policy)
    walls = git_dirs.walls(policy, layer, repositories)
    covers, directory = config_view.covers(policy, layer, _read_config, repositories, walls.blanked)
    shown = GitView(walls.read_only, covers, directory, git_dirs.outside(policy))
    try:
        if policy.remote is not None and layer is Layer.BUBBLEWRAP:
            shown = dataclasses.replace(shown, remote_fd=remote_view.opened(policy.remote))
        remote, directory = remote_view.covers(policy, layer, _read_git_dir_config, directory)
    except BaseException:
        shown.close()
        raise
    return dataclasses.replace(shown, covers=covers + remote, directory=directory)


def bubblewrap_argv(
    policy: SandboxPolicy,
    host: HostLayout,
    command: Sequence[str],
    shown: GitView,
    proxy_fd: int | None = None,
    reads: tuple[str, ...] = (),
) -> list[str]:
    """The bubblewrap argv of ``command`` under ``policy``, shown git as ``shown`` says:
    the one way every sandboxed spawn builds it (this runner's runs, an MCP server)."""
    return bwrap_argv(
        policy,
        host,
        list(command),
        read_only=shown.read_only,
        covers=shown.covers,
        git_outside=shown.outside,
        remote_fd=shown.remote_fd,
        proxy_fd=proxy_fd,
        reads=reads,
    )


@dataclass(frozen=True, slots=True)
class Hidden:
    """A bubblewrap run's argv with nothing of the host's paths in it, and the descriptors
    to pass (the memory files, the proxy's door, a Push's remote), closed when it ends."""

    argv: list[str]
    env: dict[str, str]
    fds: tuple[int, ...]


def hidden_spawn(
    policy: SandboxPolicy,
    host: HostLayout,
    command: Sequence[str],
    shown: GitView,
    extra_env: Mapping[str, str] | None,
    *,
    host_git: bool = False,
    reads: tuple[str, ...] = (),
) -> Hidden:
    """The bubblewrap argv and environment of ``command`` under ``policy``: its options in a
    memory file, host files copied in, the proxy (``Proxied``) reached through a door opened
    now; ``reads``: directories bound read-only at their own path after every other mount
    (an MCP server's own code). Raises SandboxUnavailable when the agent's proxy is not
    listening; the caller closes ``shown`` then."""
    env = sandbox_environment(policy.workspace, SANDBOX_TMP, extra_env, host_git=host_git)
    door: int | None = None
    if isinstance(policy.network, Proxied):
        try:
            door = proxy_door.opened(policy.network.socket)
        except OSError:
            raise SandboxUnavailable(
                "the network proxy of this agent is not running; the command did not run"
            ) from None
        env.update(proxy_environment())
    try:
        argv, memory = hidden(bubblewrap_argv(policy, host, command, shown, door, reads))
    except BaseException:
        if door is not None:
            os.close(door)
        raise
    kept = (shown.remote_fd, door, *memory)
    return Hidden(argv, env, tuple(fd for fd in kept if fd is not None))


def _prepare(
    command: Sequence[str],
    policy: SandboxPolicy,
    extra_env: Mapping[str, str] | None,
    *,
    view: bool = True,
) -> Spawn:
    """The argv and environment of one run; raises SandboxUnavailable or OSError.

    ``view``: show git only the allow-listed view of the repository's config, and each git
    directory read-only unless the run is the host's own git (``view`` is off only for git's
    own reading of the config, which runs with the whole workspace read-only).
    """
    if not policy.workspace.is_dir():
        raise FileNotFoundError(2, "the workspace is not a directory", str(policy.workspace))
    policy = dataclasses.replace(policy, workspace=policy.workspace.resolve())
    policy = linked_worktree.with_git_dir(policy)
    layer = choose_layer(policy.layer)
    if policy.inner_wall and landlock.landlock_abi() == 0:
        raise SandboxUnavailable(
            f"the plan-mode shell's read-only wall {NO_LANDLOCK}; enable Landlock, or set "
            "`shell_sandbox: off` in the plan-mode settings to plan without it"
        )
    host = host_layout()
    shown = git_view(policy, layer) if view else GitView(outside=git_dirs.outside(policy))
    host_git = policy.git_writable
    if layer is Layer.BUBBLEWRAP:
        try:
            made = hidden_spawn(policy, host, command, shown, extra_env, host_git=host_git)
        except BaseException:
            shown.close()
            raise
        return Spawn(
            made.argv,
            made.env,
            policy.workspace,
            layer,
            None,
            shown.directory,
            shown.read_only,
            made.fds,
        )
    private_tmp = tempfile.mkdtemp(prefix="plancord-sandbox-")
    env = sandbox_environment(policy.workspace, private_tmp, extra_env, host_git=host_git)
    if layer is Layer.LANDLOCK:
        argv = landlock_argv(
            policy, host, list(command), private_tmp=private_tmp, git_outside=shown.outside
        )
    else:
        argv = policy.limits.prlimit_argv()
        if policy.inner_wall:
            argv += host.inner_wall_argv()
        argv += list(command)
    return Spawn(argv, env, policy.workspace, layer, private_tmp)


def _run_in_thread(
    command: Sequence[str],
    policy: SandboxPolicy,
    *,
    timeout: float,
    max_output: int,
    merge_stderr: bool,
    extra_env: Mapping[str, str] | None,
    cancel: threading.Event,
    stdout_to: int | None,
) -> ProcessResult:
    spawn = _prepare(command, policy, extra_env)
    try:
        return run_blocking(
            spawn,
            timeout=timeout,
            max_output=max_output,
            merge_stderr=merge_stderr,
            cancel=cancel,
            read_only=not policy.writable or policy.inner_wall,
            stdout_to=stdout_to,
        )
    except BaseException:
        spawn.clean_up()
        raise


async def run_sandboxed(
    command: Sequence[str],
    policy: SandboxPolicy,
    *,
    timeout: float,  # noqa: ASYNC109 - the sandbox's own deadline, part of the interface
    max_output: int = 100_000,
    merge_stderr: bool = False,
    extra_env: Mapping[str, str] | None = None,
    stdout_to: int | None = None,
) -> ProcessResult:
    """Run ``command`` (an argv, never a shell line) inside the sandbox ``policy`` describes.

    ``stdout_to``: an open file of the host's that the command's output is copied into
    (its first ``max_output`` bytes), read from the pipe as it comes; the result's
    ``stdout`` is then empty. The command never sees the file, only the pipe.

    Raises SandboxUnavailable (nothing ran) when no allowed layer works here, OSError when
    the workspace or the program cannot be used, ValueError for a bad timeout or cap.
    Cancelling the awaiting task kills the sandbox before the cancellation propagates.
    """
    if not command:
        raise ValueError("no command given")
    if timeout <= 0:
        raise ValueError(f"timeout must be positive, not {timeout}")
    if max_output < 0:
        raise ValueError(f"max_output must not be negative, not {max_output}")
    cancel = threading.Event()
    future = _EXECUTOR.submit(
        _run_in_thread,
        command,
        policy,
        timeout=timeout,
        max_output=max_output,
        merge_stderr=merge_stderr,
        extra_env=extra_env,
        cancel=cancel,
        stdout_to=stdout_to,
    )
    try:
        return await asyncio.wrap_future(future)
    except asyncio.CancelledError:
        cancel.set()
        with contextlib.suppress(BaseException):
            await asyncio.wait_for(asyncio.wrap_future(future), STOP_GRACE_SECONDS * 3)
        raise


async def run_shell(
    command: str,
    policy: SandboxPolicy,
    *,
    timeout: float,  # noqa: ASYNC109 - the shell's own deadline
    max_output: int = 100_000,
) -> ProcessResult:
    """``bash -c command`` in the sandbox, stdout and stderr interleaved."""
    return await run_sandboxed(
        ["bash", "-c", command],
        policy,
        timeout=timeout,
        max_output=max_output,
        merge_stderr=True,
    )


def run_attached(argv: Sequence[str], policy: SandboxPolicy) -> int:
    """``argv`` under ``policy`` with this process's stdio (for an operator at a terminal).

    Returns the command's exit status (128+N when signal N killed it); raises
    :class:`SandboxUnavailable` when no sandbox layer works here.
    """
    spawn = _prepare(argv, policy, None)
    try:
        completed = subprocess.run(
            spawn.argv, cwd=spawn.cwd, env=spawn.env, check=False, pass_fds=spawn.pass_fds
        )
    finally:
        spawn.clean_up()
    return exit_status(completed.returncode)
