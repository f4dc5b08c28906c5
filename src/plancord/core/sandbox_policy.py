"""What an agent's process may reach, as a value: the policy the sandbox enforces.

Why this lives in the core: the read-only filter judges a path by what the read-only sandbox
shows (:data:`SYSTEM_DIRS`, :data:`ETC_ENTRIES`), and the config and the runtime decide each
call's policy; none of that spawns anything. ``plancord.sandbox`` turns a policy into the
argv that enforces it and runs the process.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

#: Where the sandbox sees its private temporary directory, which is also its HOME.
SANDBOX_TMP = "/tmp"  # noqa: S108 - a tmpfs private to each sandbox, not the host's /tmp
#: Where the Landlock trampoline is bound inside the sandbox for the inner wall.
TRAMPOLINE_PATH = "/run/plancord/landlock.py"
#: Where the native inner wall (``wall_helper``) is bound inside the sandbox, when built.
WALL_HELPER_PATH = "/run/plancord/landlock-exec"
#: Where the in-sandbox bridge to the proxy socket is bound: the Python one, and the
#: native one when it is built.
NET_BRIDGE_PATH = "/run/plancord/net-bridge.py"
NATIVE_BRIDGE_PATH = "/run/plancord/net-bridge"
#: The loopback port inside the sandbox's own network namespace where the bridge to the
#: proxy socket listens; ``HTTP_PROXY`` and ``HTTPS_PROXY`` name it.
PROXY_PORT = 3128


def proxy_environment() -> dict[str, str]:
    """The variables that send a program's HTTP and HTTPS through the bridge to the proxy
    (both spellings: curl reads the lower case, pip and many others either)."""
    url = f"http://127.0.0.1:{PROXY_PORT}"
    names = ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy")
    return dict.fromkeys(names, url)


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


class WorkspaceAccess(StrEnum):
    """How a sandboxed process sees its workspace: one value, so a policy cannot say both
    "writable" and "behind the read-only inner wall"."""

    WRITABLE = "writable"
    """Executing or inactive: the process may change the workspace."""
    READ_ONLY = "read-only"
    """The sandbox layer holds the workspace read-only."""
    WALLED = "walled"
    """Read-only, with the Landlock read-only trampoline running inside the sandbox too
    (plan mode's shell when the operator requires it)."""


@dataclass(frozen=True, slots=True)
class Offline:
    """No network: the sandbox's own network namespace, with nothing in it but loopback."""


@dataclass(frozen=True, slots=True)
class Proxied:
    """The network the plan grants: no network of its own, only the host's proxy of the
    agent, reached through the unix socket ``socket`` (the host's path, never shown
    inside: ``sandbox.proxy_door``)."""

    socket: Path


@dataclass(frozen=True, slots=True)
class HostNetwork:
    """The host's own network (``network: true``)."""


NetworkMode = Offline | Proxied | HostNetwork
"""What network a sandboxed process has: one value, so a policy cannot be both open and
proxied, nor proxied without a socket."""
OFFLINE = Offline()
HOST_NETWORK = HostNetwork()


@dataclass(frozen=True, slots=True)
class SandboxPolicy:
    """Everything that decides what one agent process may reach.

    Build one with a named constructor, :meth:`executing` or :meth:`read_only`, and
    :meth:`behind_inner_wall` for the walled mode; ``access`` holds the mode.
    ``network``: what network the process has (:data:`NetworkMode`): none, the plan's
    hosts through the agent's proxy, or the host's (never while planning: the runtime
    decides).
    ``shared``: directories the operator shares with every agent (a local git remote, a
    cache), mounted like the workspace: read-only while planning, writable otherwise.
    ``git_dir``: the git directory plancord made for this workspace (a worktree it created),
    the only place a ``.git`` file or a ``commondir`` may lead; None refuses both.
    ``git_writable``: the host's own git run (the git tools, the execution branch), which
    writes git's state; every other process sees each git directory of the workspace
    read-only, in every phase.
    ``remote``: a Push to a repository on this machine (:meth:`for_push`): its directory,
    the one place the run may write, shown with its own config allow-listed.
    """

    workspace: Path
    access: WorkspaceAccess
    network: NetworkMode = OFFLINE
    limits: Limits = Limits()
    layer: LayerChoice = LayerChoice.AUTO
    shared: tuple[Path, ...] = ()
    read_only_shared: tuple[Path, ...] = ()
    """Those of ``shared`` mounted read-only even when the workspace is writable: while a
    plan executes, the shared directories the current step does not name."""
    git_dir: Path | None = None
    git_writable: bool = False
    remote: Path | None = None

    @classmethod
    def executing(
        cls,
        workspace: Path,
        *,
        network: NetworkMode = OFFLINE,
        limits: Limits = Limits(),
        layer: LayerChoice = LayerChoice.AUTO,
        shared: tuple[Path, ...] = (),
        read_only_shared: tuple[Path, ...] = (),
        git_dir: Path | None = None,
    ) -> SandboxPolicy:
        """A process that may change the workspace (executing, inactive)."""
        return cls(
            workspace=workspace,
            access=WorkspaceAccess.WRITABLE,
            network=network,
            limits=limits,
            layer=layer,
            shared=shared,
            read_only_shared=read_only_shared,
            git_dir=git_dir,
        )

    @classmethod
    def read_only(
        cls,
        workspace: Path,
        *,
        limits: Limits = Limits(),
        layer: LayerChoice = LayerChoice.AUTO,
        shared: tuple[Path, ...] = (),
        git_dir: Path | None = None,
    ) -> SandboxPolicy:
        """A process that only reads: the workspace read-only and no network."""
        return cls(
            workspace=workspace,
            access=WorkspaceAccess.READ_ONLY,
            limits=limits,
            layer=layer,
            shared=shared,
            git_dir=git_dir,
        )

    def behind_inner_wall(self) -> SandboxPolicy:
        """This policy for a process that only reads, behind the Landlock inner wall as well
        as the sandbox layer (plan mode's shell when the operator requires the wall): the
        workspace read-only, no network."""
        return dataclasses.replace(self, access=WorkspaceAccess.WALLED, network=OFFLINE)

    @property
    def writable(self) -> bool:
        """Whether the process may change the workspace."""
        return self.access is WorkspaceAccess.WRITABLE

    @property
    def has_host_network(self) -> bool:
        """Whether the process keeps the host's own network."""
        return isinstance(self.network, HostNetwork)

    @property
    def inner_wall(self) -> bool:
        """Whether the Landlock read-only trampoline runs inside the sandbox too."""
        return self.access is WorkspaceAccess.WALLED

    def for_host_git(self) -> SandboxPolicy:
        """This policy for a git run of the host's own (fixed argv, no hooks, the
        allow-listed config): the git directories as writable as the workspace, and no
        plan-bound network (the host's git reaches remotes the operator allowed, or none)."""
        network = OFFLINE if isinstance(self.network, Proxied) else self.network
        return dataclasses.replace(self, git_writable=True, network=network)

    def for_push(self, remote: Path | None) -> SandboxPolicy:
        """This policy for a Push, which writes only the remote: the workspace, each of its
        git directories and the shared directories read-only, no plan-bound network; a
        repository on this machine (``remote``, a real path) the one writable place, with no
        network at all; a remote elsewhere (None) reached over the agent's own network, if
        the operator gave it one."""
        return dataclasses.replace(
            self,
            access=WorkspaceAccess.READ_ONLY,
            git_writable=False,
            remote=remote,
            network=self.network if self.has_host_network and remote is None else OFFLINE,
        )

    def for_reading(self) -> SandboxPolicy:
        """This policy for a run that only reads: the workspace read-only, no network, no
        inner wall, no remote."""
        return dataclasses.replace(
            self, access=WorkspaceAccess.READ_ONLY, network=OFFLINE, remote=None
        )


@dataclass(frozen=True, slots=True)
class SandboxSettings:
    """The operator's sandbox settings, from which each call's policy is made."""

    layer: LayerChoice = LayerChoice.AUTO
    limits: Limits = Limits()
    network_agents: frozenset[str] = frozenset()
    shared: tuple[Path, ...] = ()
    plan_network: frozenset[str] = frozenset()
    """Agents whose network is granted by the plan, step by step, through the proxy."""
    proxy_dir: Path | None = None
    """The host's private directory of the agents' proxy sockets."""

    def proxy_socket(self, agent: str) -> Path | None:
        """The host's unix socket of ``agent``'s proxy; None when its network is not by
        the plan."""
        if agent not in self.plan_network or self.proxy_dir is None:
            return None
        return self.proxy_dir / f"{agent}.sock"

    def network_of(self, agent: str) -> NetworkMode:
        """``agent``'s network outside plan mode: the host's for an agent the operator
        named (``network: true``), the plan's hosts through its proxy, or none."""
        socket = self.proxy_socket(agent)
        if socket is not None:
            return Proxied(socket)
        return HOST_NETWORK if agent in self.network_agents else OFFLINE

    def executing(
        self, agent: str, workspace: Path, *, shared_writable: tuple[Path, ...] | None = None
    ) -> SandboxPolicy:
        """The policy for a process of ``agent`` outside plan mode: the workspace writable,
        the network only for agents the operator named: the host's (``network: true``) or
        the plan's hosts through the proxy. ``shared_writable``: while a plan executes, the
        shared directories its current step names (the others are read-only); None outside
        execution (all as writable as the workspace)."""
        return SandboxPolicy.executing(
            workspace,
            network=self.network_of(agent),
            limits=self.limits,
            layer=self.layer,
            shared=self.shared,
            read_only_shared=(
                ()
                if shared_writable is None
                else tuple(path for path in self.shared if path not in shared_writable)
            ),
        )

    def named_shared(self, files: tuple[str, ...]) -> tuple[Path, ...]:
        """The shared directories a step's ``files`` name: an absolute path that is one of
        them or lies beneath one."""
        named = [Path(pattern) for pattern in files if pattern.startswith("/")]
        return tuple(
            shared
            for shared in self.shared
            if any(path == shared or path.is_relative_to(shared) for path in named)
        )

    def host_git(self, agent: str, workspace: Path) -> SandboxPolicy:
        """The policy of the host's git runs on ``agent``'s repository (the execution
        branch: start, step commits, Merge, Discard, Roll back, Push): the executing
        sandbox, with the git directories writable."""
        return self.executing(agent, workspace).for_host_git()

    def read_only(self, workspace: Path) -> SandboxPolicy:
        """The policy for a process that runs without a human's Allow because it only reads
        (a read-only tool, a command the filter judged read-only), and for every process
        while planning: the workspace read-only and no network, in every phase and whatever
        the agent's network setting, so a wrong judgement can neither write nor send."""
        return SandboxPolicy.read_only(
            workspace, limits=self.limits, layer=self.layer, shared=self.shared
        )

    def walled(self, workspace: Path) -> SandboxPolicy:
        """:meth:`read_only` with the Landlock inner wall inside too (plan mode's shell when
        the operator requires the wall)."""
        return self.read_only(workspace).behind_inner_wall()
