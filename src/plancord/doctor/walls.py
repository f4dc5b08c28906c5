"""The doctor's checks of the walls around agent commands: which sandbox layer runs, whether
plan mode's Landlock wall is there when the config requires it, where the config switches
the plan-mode shell sandbox off, and whether the bot runs as root (which Linux exempts from
the process limit). What each wall does and does not stop is in docs/security.md.
"""

from __future__ import annotations

from plancord.config import Config
from plancord.core.settings import PlanModeSettings, ShellSandbox
from plancord.doctor.findings import Check, failed, passed, warned

__all__ = [
    "check_agent_sandbox",
    "check_inner_wall",
    "check_landlock",
    "check_network_proxy",
    "check_shell_sandbox",
    "check_user",
]


def check_user(euid: int) -> Check | None:
    """Root: Linux exempts it from ``RLIMIT_NPROC``, so an agent command's process limit does
    not bind; a command that forks without end is held only by the other limits and the
    shell timeout."""
    if euid != 0:
        return None
    return warned(
        "user",
        "running as root: the per-command process limit does not bind (Linux exempts root "
        "from RLIMIT_NPROC)",
        "run plancord as its own unprivileged user, as the Docker image does",
    )


def check_shell_sandbox(config: Config) -> Check | None:
    """``shell_sandbox: off`` anywhere in the config: plan-mode shell then runs without the
    kernel's read-only wall, with only the read-only filter between a mistake and a write."""
    off = [
        place
        for place in ("plan_mode", *_agent_and_channel_places(config))
        if _plan_mode_at(config, place).shell_sandbox is ShellSandbox.OFF
    ]
    if not off:
        return None
    return warned(
        "plan-mode shell sandbox",
        f"shell_sandbox is off ({', '.join(off)}): while planning, shell commands the filter "
        "allows run without the Landlock read-only wall",
        "set shell_sandbox: required where the kernel has Landlock",
    )


def _agent_and_channel_places(config: Config) -> list[str]:
    return [f"agents.{name}.plan_mode" for name in config.agents] + [
        f"channels.{channel}.plan_mode" for channel in config.channels
    ]


def _plan_mode_at(config: Config, place: str) -> PlanModeSettings:
    """The plan-mode settings in effect at ``place`` (``plan_mode``, ``agents.<name>.plan_mode``
    or ``channels.<id>.plan_mode``)."""
    kind, _, rest = place.partition(".")
    key = rest.removesuffix(".plan_mode")
    if kind == "agents":
        return config.plan_mode_for(agent=key)
    if kind == "channels":
        return config.plan_mode_for(channel_id=int(key))
    return config.plan_mode


def _sandbox_required_by(config: Config) -> list[str]:
    """Where the config leaves ``shell_sandbox: required`` in effect: globally, per agent, per
    channel. Overrides stored in the database at runtime are not consulted."""
    return [
        place
        for place in ("plan_mode", *_agent_and_channel_places(config))
        if _plan_mode_at(config, place).shell_sandbox is ShellSandbox.REQUIRED
    ]


def check_agent_sandbox(config: Config | None) -> Check:
    """Which layer walls in agent processes here, and why; a FAIL when none would run."""
    from plancord.sandbox import LayerChoice, SandboxUnavailable, choose_layer
    from plancord.sandbox.layers import bubblewrap_problem

    choice = config.sandbox.layer if config is not None else LayerChoice.AUTO
    if choice is LayerChoice.OFF:
        return warned(
            "agent sandbox",
            "sandbox.layer is off: agent commands run as the bot's user and can reach its "
            "secrets, its database and every other agent's workspace",
            "install bubblewrap and set sandbox.layer: auto",
        )
    try:
        layer = choose_layer(choice)
    except SandboxUnavailable as exc:
        # The problem names its own fix (the package, the sysctl, the seccomp profile).
        return failed("agent sandbox", str(exc), "then run plancord doctor again")
    if layer.value == "bubblewrap":
        return passed("agent sandbox: bubblewrap (namespaces; only the workspace is visible)")
    return warned(
        "agent sandbox",
        f"Landlock fallback only ({bubblewrap_problem()}): reads and writes are confined, "
        "unix sockets are refused (a seccomp filter) and TCP and UDP too unless the agent "
        "has the network, but agent processes share the bot's pid and network namespaces "
        "(an agent allowed the network gets the host's), git refuses a repository whose "
        "config holds keys outside the allow-list, and shell commands that could write are "
        "refused in a repository (its git directory cannot be kept read-only)",
        "for bubblewrap, follow the fix in the parentheses (docs/docker-sandbox.md)",
    )


def check_network_proxy(config: Config) -> Check | None:
    """The proxy that grants hosts by the plan, for the agents whose network it holds: where
    its sockets are, and a FAIL where no layer here can hold commands to it (their plans
    may then name no host). None when no agent's network is granted by the plan."""
    from plancord.sandbox.layers import network_by_plan_problem

    sandbox = config.sandbox_settings
    if not sandbox.plan_network:
        return None
    agents = ", ".join(sorted(sandbox.plan_network))
    problem = network_by_plan_problem(config.sandbox.layer)
    if problem is not None:
        return failed(
            f"network proxy ({agents})",
            problem,
            "install bubblewrap and allow unprivileged user namespaces",
        )
    hosts = "; ".join(
        f"{name}: {', '.join(config.network_bound(name).allow)}"
        for name in sorted(sandbox.plan_network)
    )
    return passed(
        f"network proxy: HTTP(S) by the plan's current step only, through {sandbox.proxy_dir} "
        f"(hosts plans may name: {hosts}); other programs reach nothing"
    )


def check_landlock(abi: int, config: Config | None) -> Check:
    if abi > 0:
        return passed(f"Landlock ABI {abi}: the read-only inner wall while planning")
    enable = "enable Landlock (Linux ≥ 5.13 with lsm=landlock)"
    if config is None:
        return warned(
            "Landlock",
            "not available (ABI 0); whether plan mode needs it depends on the config",
            f"fix the config, then {enable} or set plan_mode.shell_sandbox: off",
        )
    required = _sandbox_required_by(config)
    if required:
        places = ", ".join(required)
        return failed(
            "Landlock",
            f"not available (ABI 0) and shell_sandbox is required ({places}); "
            "plan-mode shell will refuse",
            f"{enable} or set plan_mode.shell_sandbox: off",
        )
    return warned(
        "Landlock",
        "not available (ABI 0); shell_sandbox is off, so plan-mode shell runs without the "
        "kernel sandbox and only the read-only check guards it",
        enable,
    )


def check_inner_wall(abi: int, helper: str | None) -> Check | None:
    """Where Landlock works but the native inner wall (``landlock-exec``) is not built, each
    planning command starts a Python interpreter for the wall: the same wall, slower."""
    if abi == 0 or helper is not None:
        return None
    return warned(
        "plan-mode inner wall",
        "the native landlock-exec is not built (no C compiler was found), so each planning "
        "command starts Python for the Landlock wall (the same wall, some 20-40 ms slower)",
        "install a C compiler (apt-get install gcc libc6-dev) or build it at install time: "
        "python -m plancord.sandbox.wall_helper",
    )
