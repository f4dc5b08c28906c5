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
   wins, unless the run is the host's own git (``SandboxPolicy.git_writable``);
9. over the repository's config, when it holds keys git must not see, the allow-listed view
   of it (``git_config``), and an empty file over ``info/attributes``, read-only, after the
   git directories (a bind of a git directory would hide a file bound inside it before).

Nothing else of the host exists inside: not the data directory with the database, not other
agents' workspaces, not the bot's home. The command then runs under ``prlimit`` (inside the
namespaces, so the process limit counts the sandbox's processes only) with the policy's limits.
"""

from __future__ import annotations

from dataclasses import dataclass

from plancord.core.sandbox_policy import (
    SANDBOX_TMP,
    TRAMPOLINE_PATH,
    WALL_HELPER_PATH,
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
) -> list[str]:
    """bubblewrap's argv for ``command`` under ``policy``; pure, so tests can compare it.

    ``read_only``: directories inside the workspace bound read-only over it (its git
    directories). ``covers``: (host file, path inside) pairs bound read-only after both, so
    they win over what the workspace holds there (the repository's config view).
    """
    workspace = str(policy.workspace)
    argv = [
        "bwrap",
        "--unshare-user",
        "--unshare-ipc",
        "--unshare-pid",
        "--unshare-uts",
        "--unshare-cgroup-try",
    ]
    if not policy.network:
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
    bind = "--bind" if policy.writable else "--ro-bind"
    for shared in policy.shared:
        mount = "--ro-bind" if shared in policy.read_only_shared else bind
        argv += [mount, str(shared), str(shared)]
    argv += [bind, workspace, workspace]
    for directory in read_only:
        argv += ["--ro-bind", directory, directory]
    for source, target in covers:
        argv += ["--ro-bind", source, target]
    argv += ["--chdir", workspace, "--"]
    argv += policy.limits.prlimit_argv()
    if policy.inner_wall and host.wall_helper is not None:
        argv += [WALL_HELPER_PATH, "--"]
    elif policy.inner_wall:
        argv += [host.python_executable, "-I", "-S", TRAMPOLINE_PATH, "readonly", "--"]
    return argv + command


def landlock_argv(
    policy: SandboxPolicy,
    host: HostLayout,
    command: list[str],
    *,
    private_tmp: str,
) -> list[str]:
    """The fallback's argv: ``prlimit``, then the trampoline confining ``command``.

    Reads beneath the system's directories, the allowed ``/etc`` entries, the Python install
    and the workspace; writes beneath the workspace (when writable) and ``private_tmp``.
    While planning (``inner_wall``) the workspace is readable only, as under bubblewrap.
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
    reads += [str(path) for path in policy.read_only_shared]
    argv = [*policy.limits.prlimit_argv(), host.python_executable, "-I", "-S", host.trampoline]
    argv.append("confine")
    for path in reads:
        argv += ["--read", path]
    for path in writes:
        argv += ["--write", path]
    if policy.network:
        argv.append("--net")
    return [*argv, "--", *command]
