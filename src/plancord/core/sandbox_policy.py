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
    ``git_writable``: the host's own git run (the git tools, the execution branch), which
    writes git's state; every other process sees each git directory of the workspace
    read-only, in every phase.
    """

    workspace: Path
    writable: bool
    network: bool = False
    inner_wall: bool = False
    limits: Limits = Limits()
    layer: LayerChoice = LayerChoice.AUTO
    shared: tuple[Path, ...] = ()
    read_only_shared: tuple[Path, ...] = ()
    """Those of ``shared`` mounted read-only even when the workspace is writable: while a
    plan executes, the shared directories the current step does not name."""
    git_dir: Path | None = None
    git_writable: bool = False

    def for_host_git(self) -> SandboxPolicy:
        """This policy for a git run of the host's own (fixed argv, no hooks, the
        allow-listed config): the git directories as writable as the workspace."""
        return dataclasses.replace(self, git_writable=True)


@dataclass(frozen=True, slots=True)
class SandboxSettings:
    """The operator's sandbox settings, from which each call's policy is made."""

    layer: LayerChoice = LayerChoice.AUTO
    limits: Limits = Limits()
    network_agents: frozenset[str] = frozenset()
    shared: tuple[Path, ...] = ()

    def policy(
        self,
        agent: str,
        workspace: Path,
        *,
        planning: bool,
        inner_wall: bool,
        shared_writable: tuple[Path, ...] | None = None,
    ) -> SandboxPolicy:
        """The policy for one process of ``agent``: read-only and offline while planning;
        the network only for agents the operator named, and only outside plan mode.
        ``shared_writable``: while a plan executes, the shared directories its current step
        names (the others are read-only); None outside execution (all as writable as the
        workspace)."""
        return SandboxPolicy(
            workspace=workspace,
            writable=not planning,
            network=not planning and agent in self.network_agents,
            inner_wall=planning and inner_wall,
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

    def host_git_policy(self, agent: str, workspace: Path) -> SandboxPolicy:
        """The policy of the host's git runs on ``agent``'s repository (the execution
        branch: start, step commits, Merge, Discard, Roll back, Push): the executing
        sandbox, with the git directories writable."""
        return self.policy(agent, workspace, planning=False, inner_wall=False).for_host_git()

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
