"""What an agent's process may reach, as a value, and the argv that enforces it.

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
8. over the repository's config, when it holds keys git must not see, the allow-listed view
   of it (``git_config``), read-only, so git inside sees only that.

Nothing else of the host exists inside: not the data directory with the database, not other
agents' workspaces, not the bot's home. The command then runs under ``prlimit`` (inside the
namespaces, so the process limit counts the sandbox's processes only) with the policy's limits.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

#: Where the sandbox sees its private temporary directory, which is also its HOME.
SANDBOX_TMP = "/tmp"  # noqa: S108 - a tmpfs private to each sandbox, not the host's /tmp
#: Where the Landlock trampoline is bound inside the sandbox for the inner wall.
TRAMPOLINE_PATH = "/run/plancord/landlock.py"
#: Where the native inner wall (``wall_helper``) is bound inside the sandbox, when built.
WALL_HELPER_PATH = "/run/plancord/landlock-exec"
#: The only PATH a sandboxed process starts with: the system's programs.
SANDBOX_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
PRLIMIT = "/usr/bin/prlimit"

#: The parts of /etc that ordinary programs read: the dynamic linker, users and groups for
#: ``ls -l``, time zone, ``alternatives`` (awk, editor links), TLS roots, name resolution for
#: when the network is allowed, and libmagic's database for ``file``.
ETC_ENTRIES = (
    "alternatives",
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "localtime",
    "timezone",
    "nsswitch.conf",
    "passwd",
    "group",
    "os-release",
    "ssl",
    "ca-certificates",
    "ca-certificates.conf",
    "hosts",
    "resolv.conf",
    "protocols",
    "services",
    "mime.types",
    "magic",
    "magic.mime",
)

#: Top-level system directories: each is bound read-only, or recreated as the symlink it is.
SYSTEM_DIRS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")


class LayerChoice(StrEnum):
    """What the operator configured: ``auto`` takes the strongest layer that works here."""

    AUTO = "auto"
    BUBBLEWRAP = "bubblewrap"
    LANDLOCK = "landlock"
    OFF = "off"


class Layer(StrEnum):
    """The layer a command actually runs under."""

    BUBBLEWRAP = "bubblewrap"
    LANDLOCK = "landlock"
    OFF = "off"


@dataclass(frozen=True, slots=True)
class Limits:
    """Per-command resource limits; each applies to every process of the command."""

    memory_bytes: int = 2 * 1024**3
    processes: int = 256
    file_size_bytes: int = 1024**3
    cpu_seconds: int = 600
    tmp_bytes: int = 512 * 1024**2

    def prlimit_argv(self) -> list[str]:
        """``prlimit`` with these limits (soft = hard), ready to take the command after it."""
        return [
            PRLIMIT,
            f"--as={self.memory_bytes}",
            f"--nproc={self.processes}",
            f"--fsize={self.file_size_bytes}",
            f"--cpu={self.cpu_seconds}",
            "--core=0",
            "--",
        ]


@dataclass(frozen=True, slots=True)
class SandboxPolicy:
    """Everything that decides what one agent process may reach.

    ``writable``: the workspace can be changed (executing, inactive); read-only while
    planning. ``network``: the process keeps the host's network (never while planning: the
    runtime decides). ``inner_wall``: the Landlock read-only trampoline runs inside too.
    ``shared``: directories the operator shares with every agent (a local git remote, a
    cache), mounted like the workspace: read-only while planning, writable otherwise.
    ``git_dir``: the git directory plancord made for this workspace (a worktree it created),
    the only place a ``.git`` file or a ``commondir`` may lead; None refuses both.
    """

    workspace: Path
    writable: bool
    network: bool = False
    inner_wall: bool = False
    limits: Limits = Limits()
    layer: LayerChoice = LayerChoice.AUTO
    shared: tuple[Path, ...] = ()
    git_dir: Path | None = None


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
    covers: tuple[tuple[str, str], ...] = (),
) -> list[str]:
    """bubblewrap's argv for ``command`` under ``policy``; pure, so tests can compare it.

    ``covers``: (host file, path inside) pairs bound read-only after the workspace, so they
    win over what the workspace holds there (the repository's config view).
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
        argv += [bind, str(shared), str(shared)]
    argv += [bind, workspace, workspace]
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
    mounted = [str(policy.workspace), *(str(path) for path in policy.shared)]
    if policy.writable and not policy.inner_wall:
        writes += mounted
    else:
        reads += mounted
    argv = [*policy.limits.prlimit_argv(), host.python_executable, "-I", "-S", host.trampoline]
    argv.append("confine")
    for path in reads:
        argv += ["--read", path]
    for path in writes:
        argv += ["--write", path]
    if policy.network:
        argv.append("--net")
    return [*argv, "--", *command]


@dataclass(frozen=True, slots=True)
class SandboxSettings:
    """The operator's sandbox settings, from which each call's policy is made."""

    layer: LayerChoice = LayerChoice.AUTO
    limits: Limits = Limits()
    network_agents: frozenset[str] = frozenset()
    shared: tuple[Path, ...] = ()

    def policy(
        self, agent: str, workspace: Path, *, planning: bool, inner_wall: bool
    ) -> SandboxPolicy:
        """The policy for one process of ``agent``: read-only and offline while planning;
        the network only for agents the operator named, and only outside plan mode."""
        return SandboxPolicy(
            workspace=workspace,
            writable=not planning,
            network=not planning and agent in self.network_agents,
            inner_wall=planning and inner_wall,
            limits=self.limits,
            layer=self.layer,
            shared=self.shared,
        )

    def read_only_policy(self, workspace: Path, *, inner_wall: bool) -> SandboxPolicy:
        """The policy for a process that runs without a human's Allow because it only reads
        (a read-only tool, a command the filter judged read-only): the workspace read-only
        and no network, in every phase and whatever the agent's network setting, so a wrong
        judgement can neither write nor send."""
        return SandboxPolicy(
            workspace=workspace,
            writable=False,
            network=False,
            inner_wall=inner_wall,
            limits=self.limits,
            layer=self.layer,
            shared=self.shared,
        )
