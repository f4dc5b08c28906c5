"""Why bubblewrap cannot create its namespaces here, and the one fix that applies.

Why this exists: "user namespaces are off?" sent operators to the wrong place. The causes
differ and so do their fixes: a kernel sysctl (Debian's ``unprivileged_userns_clone``, a
``max_user_namespaces`` of 0, Ubuntu's AppArmor restriction), or, inside a container, the
engine's seccomp profile (Docker's default refuses ``unshare``; podman's refuses
``sethostname``), which the shipped ``seccomp-bubblewrap.json`` replaces. Read from /proc
and from what bubblewrap said; nothing is changed.
"""

from __future__ import annotations

from pathlib import Path

#: Files whose presence says this process runs in a container (Docker, podman).
CONTAINER_MARKERS = (Path("/.dockerenv"), Path("/run/.containerenv"))

PROFILE_FIX = (
    "run the container with the shipped seccomp profile: docker run --security-opt "
    "seccomp=seccomp-bubblewrap.json … (podman: the same option; docs/docker-sandbox.md)"
)

#: ``(sysctl file under /proc/sys, the value that blocks, the fix)``, checked in order.
SYSCTLS = (
    (
        "kernel/unprivileged_userns_clone",
        "0",
        "sudo sysctl -w kernel.unprivileged_userns_clone=1 (and the same line in "
        "/etc/sysctl.d/90-plancord.conf to keep it)",
    ),
    (
        "user/max_user_namespaces",
        "0",
        "sudo sysctl -w user.max_user_namespaces=15000 (and the same line in "
        "/etc/sysctl.d/90-plancord.conf to keep it)",
    ),
    (
        "kernel/apparmor_restrict_unprivileged_userns",
        "1",
        "sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0, or give bwrap an "
        "AppArmor profile allowing userns (Ubuntu 24.04 and later)",
    ),
)


def in_container(markers: tuple[Path, ...] = CONTAINER_MARKERS) -> bool:
    return any(marker.exists() for marker in markers)


def namespaces_blocked_by(
    said: str,
    *,
    proc_sys: Path = Path("/proc/sys"),
    container: bool | None = None,
) -> tuple[str, str]:
    """``(cause, fix)`` for a bubblewrap that could not set up its sandbox, having said
    ``said`` (its last stderr line)."""
    for name, blocking, fix in SYSCTLS:
        try:
            value = (proc_sys / name).read_text().strip()
        except OSError:
            continue
        if value == blocking:
            return f"the kernel setting {name.replace('/', '.')} is {value}", fix
    inside = in_container() if container is None else container
    if inside:
        if "sethostname" in said:
            return "the container's seccomp profile refuses sethostname (podman's default)", (
                PROFILE_FIX
            )
        return "the container's seccomp profile refuses the namespace calls", PROFILE_FIX
    return (
        "the kernel or a security module refuses unprivileged user namespaces",
        "allow them for the bot's user (docs/docker-sandbox.md lists the settings)",
    )
