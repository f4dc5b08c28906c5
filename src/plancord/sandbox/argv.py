"""The argv that enforces a sandbox policy (``plancord.core.sandbox_policy``).

Why this exists: the sandbox is decided per call (the phase makes the workspace read-only or
writable, an operator may allow the network while executing), and a mount-order mistake in
bubblewrap's argv is a hole, so the decision is a value (:class:`SandboxPolicy`) and the
argv is built from it by pure functions whose output tests compare exactly.

The bubblewrap view, in mount order (later mounts win):

1. new user, pid, ipc, uts, cgroup and (unless the network is allowed) network namespaces;
   ``--die-with-parent``, ``--new-session``, every capability dropped;
2. the system's programs read-only: ``/usr``, and ``/bin``, ``/sbin``, ``/lib*`` as the host
   has them (symlinks into ``/usr`` on a merged-``/usr`` system, read-only binds otherwise);
3. from ``/etc`` only the files programs need (:data:`ETC_ENTRIES`): never ``/etc/gitconfig``,
   never a secret the host keeps there;
4. a fresh ``/proc`` of the sandbox's own pid namespace and a minimal ``/dev``;
5. a private ``/tmp`` (a tmpfs of bounded size), which is also ``HOME``;
6. for the inner Landlock wall: the native ``landlock-exec`` (``wall_helper``) when built,
   else the Python install and the trampoline, read-only;
7. the directories the operator shares with every agent, if any, and the agent's own
   workspace, each at its own path, read-only while planning, writable otherwise;
8. each git directory of the workspace (``git_dirs``) read-only, after the workspace so it
   wins, unless the run is the host's own git (``SandboxPolicy.git_writable``); for a Push
   to a repository on this machine (``SandboxPolicy.remote``), that repository's directory
   writable, the one writable place of the run (``remote_view``);
9. with a plan-bound network (``Proxied``): still a network namespace of its own (nothing
   but loopback) and the bridge read-only (``net_bridge.c`` built, else ``net_bridge.py``
   with the Python install); no socket file of the host: the command starts under the
   bridge, which listens on the sandbox's loopback and hands that listener to the proxy
   over a descriptor the host opened (``proxy_door``);
10. over the repository's config, when it holds keys git must not see, the allow-listed view
   of it (``git_config``), over a Push's remote's config always, and an empty file over
   ``info/attributes``, read-only, after the git directories (a bind of a git directory
   would hide a file bound inside it before).

Nothing else of the host exists inside: not the data directory with the database, not other
agents' workspaces, not the bot's home; and what is bound from a host file under another
name (the helpers, the config views) is copied in, not bound (``hidden_argv``), so the mount
table names none of the host's folders. The command then runs under ``prlimit`` (inside the
namespaces, so the process limit counts the sandbox's processes only) with the policy's limits.
"""

from __future__ import annotations

from dataclasses import dataclass

from plancord.core.sandbox_policy import (
    NATIVE_BRIDGE_PATH,
    NET_BRIDGE_PATH,
    PROXY_PORT,
    SANDBOX_TMP,
    TRAMPOLINE_PATH,
    WALL_HELPER_PATH,
    Offline,
    Proxied,
    SandboxPolicy,
)


@dataclass(frozen=True, slots=True)
class HostLayout:
    """What the host has where bubblewrap's view is built from; read once per process."""

    symlinks: tuple[tuple[str, str], ...]
    directories: tuple[str, ...]
    etc_entries: tuple[str, ...]
    python_prefix: str
    python_executable: str
    trampoline: str
    wall_helper: str | None = None
    net_bridge: str = ""
    """The in-sandbox bridge to the proxy socket in Python (``net_bridge.py``)."""
    native_bridge: str | None = None
    """The same bridge as a native program (``net_bridge.c``), when built: used instead."""

    def inner_wall_argv(self) -> list[str]:
        """The argv prefix that applies the inner wall outside bubblewrap: the native helper
        when built, else the Python trampoline."""
        if self.wall_helper is not None:
            return [self.wall_helper, "--"]
        return [self.python_executable, "-I", "-S", self.trampoline, "readonly", "--"]


def bwrap_argv(
    policy: SandboxPolicy,
    host: HostLayout,
    command: list[str],
    *,
    read_only: tuple[str, ...] = (),
    covers: tuple[tuple[str, str], ...] = (),
    git_outside: tuple[str, ...] = (),
    remote_fd: int | None = None,
    proxy_fd: int | None = None,
    reads: tuple[str, ...] = (),
) -> list[str]:
    """bubblewrap's argv for ``command`` under ``policy``; pure, so tests can compare it.

    ``proxy_fd``: under a plan-bound network (``Proxied``), the descriptor of the host's
    connection to the agent's proxy (``proxy_door.opened``) that the bridge hands its
    listener over; required then (ValueError without it).

    ``remote_fd``: an open descriptor of a Push's remote directory (``policy.remote``),
    bound by the descriptor so the directory checked is the directory bound.

    ``git_outside``: the workspace's git directories outside it (a linked worktree's),
    bound read-only, or writable for the host's own git in a writable run. ``read_only``:
    directories inside the workspace bound read-only over it (its git directories).
    ``covers``: (host file, path inside) pairs bound read-only after both, so
    they win over what the workspace holds there (the repository's config view).
    ``reads``: directories bound read-only at their own path after everything else (an MCP
    server's own code).
    """
    workspace = str(policy.workspace)
    proxied = isinstance(policy.network, Proxied)
    if proxied and proxy_fd is None:
        raise ValueError("a plan-bound network needs the descriptor of its proxy's door")
    argv = [
        "bwrap",
        "--unshare-user",
        "--unshare-ipc",
        "--unshare-pid",
        "--unshare-uts",
        "--unshare-cgroup-try",
    ]
    if isinstance(policy.network, Offline | Proxied):
        argv.append("--unshare-net")
    argv += ["--die-with-parent", "--new-session", "--cap-drop", "ALL", "--hostname", "sandbox"]
    argv += ["--ro-bind", "/usr", "/usr"]
    for link, target in host.symlinks:
        argv += ["--symlink", target, link]
    for directory in host.directories:
        argv += ["--ro-bind", directory, directory]
    for entry in host.etc_entries:
        argv += ["--ro-bind", f"/etc/{entry}", f"/etc/{entry}"]
    argv += ["--proc", "/proc", "--dev", "/dev"]
    argv += ["--size", str(policy.limits.tmp_bytes), "--tmpfs", SANDBOX_TMP]
    if policy.inner_wall and host.wall_helper is not None:
        argv += ["--ro-bind", host.wall_helper, WALL_HELPER_PATH]
    elif policy.inner_wall:
        argv += ["--ro-bind", host.python_prefix, host.python_prefix]
        argv += ["--ro-bind", host.trampoline, TRAMPOLINE_PATH]
    if proxied and host.native_bridge is not None:
        argv += ["--ro-bind", host.native_bridge, NATIVE_BRIDGE_PATH]
    elif proxied:
        if not policy.inner_wall:
            argv += ["--ro-bind", host.python_prefix, host.python_prefix]
        argv += ["--ro-bind", host.net_bridge, NET_BRIDGE_PATH]
    bind = "--bind" if policy.writable else "--ro-bind"
    for shared in policy.shared:
        mount = "--ro-bind" if shared in policy.read_only_shared else bind
        argv += [mount, str(shared), str(shared)]
    argv += [bind, workspace, workspace]
    git_bind = "--bind" if policy.writable and policy.git_writable else "--ro-bind"
    for directory in git_outside:
        argv += [git_bind, directory, directory]
    for directory in read_only:
        argv += ["--ro-bind", directory, directory]
    if policy.remote is not None and remote_fd is not None:
        argv += ["--bind-fd", str(remote_fd), str(policy.remote)]
    elif policy.remote is not None:
        argv += ["--bind", str(policy.remote), str(policy.remote)]
    for source, target in covers:
        argv += ["--ro-bind", source, target]
    for path in reads:
        argv += ["--ro-bind", path, path]
    argv += ["--chdir", workspace, "--"]
    argv += policy.limits.prlimit_argv()
    if policy.inner_wall and host.wall_helper is not None:
        argv += [WALL_HELPER_PATH, "--"]
    elif policy.inner_wall:
        argv += [host.python_executable, "-I", "-S", TRAMPOLINE_PATH, "readonly", "--"]
    if proxied:
        if host.native_bridge is not None:
            argv.append(NATIVE_BRIDGE_PATH)
        else:
            argv += [host.python_executable, "-I", "-S", NET_BRIDGE_PATH]
        argv += [str(PROXY_PORT), str(proxy_fd), "--"]
    return argv + command


def landlock_argv(
    policy: SandboxPolicy,
    host: HostLayout,
    command: list[str],
    *,
    private_tmp: str,
    git_outside: tuple[str, ...] = (),
) -> list[str]:
    """The fallback's argv: ``prlimit``, then the trampoline confining ``command``.

    Reads beneath the system's directories, the allowed ``/etc`` entries, the Python install
    and the workspace; writes beneath the workspace (when writable) and ``private_tmp``.
    While planning (``inner_wall``) the workspace is readable only, as under bubblewrap.
    ``git_outside``: a linked worktree's git directories, readable (writable for the host's
    own git in a writable run).
    """
    reads = ["/usr", *host.directories, *(f"/etc/{entry}" for entry in host.etc_entries)]
    reads += [host.python_prefix, host.trampoline, "/dev/urandom", "/dev/zero"]
    writes = [private_tmp]
    mounted = [
        str(policy.workspace),
        *(str(p) for p in policy.shared if p not in policy.read_only_shared),
    ]
    if policy.writable and not policy.inner_wall:
        writes += mounted
    else:
        reads += mounted
    if policy.writable and policy.git_writable:
        writes += git_outside
    else:
        reads += git_outside
    if policy.remote is not None:
        writes.append(str(policy.remote))
    reads += [str(path) for path in policy.read_only_shared]
    argv = [*policy.limits.prlimit_argv(), host.python_executable, "-I", "-S", host.trampoline]
    argv.append("confine")
    for path in reads:
        argv += ["--read", path]
    for path in writes:
        argv += ["--write", path]
    if policy.has_host_network:
        argv.append("--net")
    return [*argv, "--", *command]
