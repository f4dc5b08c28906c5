"""Which sandbox layer works on this machine, and what the host offers to build it from.

Why this exists: the layer is chosen once per process (bubblewrap is started once to see
that it works) and explained the same way to the runner, ``plancord doctor`` and the
operator: a layer that was asked for and cannot work is a refusal with a one-line reason,
never a silent step down.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from plancord.core.sandbox_policy import (
    ETC_ENTRIES,
    SANDBOX_TMP,
    SYSTEM_DIRS,
    Layer,
    LayerChoice,
    SandboxPolicy,
)
from plancord.sandbox import landlock, net_bridge, wall_helper
from plancord.sandbox.argv import HostLayout, bwrap_argv
from plancord.sandbox.environment import sandbox_environment
from plancord.sandbox.userns import namespaces_blocked_by

NO_LANDLOCK = (
    "needs the Landlock kernel sandbox (Linux 5.13 or later built with "
    "CONFIG_SECURITY_LANDLOCK=y and 'landlock' in the lsm= boot parameter)"
)


class SandboxUnavailable(Exception):
    """No configured sandbox layer works here; the message says what to do. Nothing ran."""


@functools.cache
def host_layout() -> HostLayout:
    """The host's system directories, /etc entries, Python and the native inner wall, read
    once per process (the first call may build the wall: call it from a worker thread)."""
    symlinks: list[tuple[str, str]] = []
    directories: list[str] = []
    for path in SYSTEM_DIRS:
        if os.path.islink(path):
            symlinks.append((path, os.readlink(path)))
        elif os.path.isdir(path):
            directories.append(path)
    etc = tuple(entry for entry in ETC_ENTRIES if os.path.lexists(f"/etc/{entry}"))
    return HostLayout(
        symlinks=tuple(symlinks),
        directories=tuple(directories),
        etc_entries=etc,
        python_prefix=os.path.realpath(sys.base_prefix),
        python_executable=os.path.realpath(sys.executable),
        trampoline=os.path.realpath(landlock.__file__),
        net_bridge=os.path.realpath(net_bridge.__file__),
        native_bridge=wall_helper.native_bridge(),
        wall_helper=wall_helper.native_wall() if landlock.landlock_abi() > 0 else None,
    )


@functools.cache
def bubblewrap_problem() -> str | None:
    """None when bubblewrap can build a sandbox here, else why not (one line)."""
    if shutil.which("bwrap") is None:
        return "bubblewrap is not installed (Debian/Ubuntu: apt-get install bubblewrap)"
    if not os.path.exists("/usr/bin/prlimit"):
        return "prlimit is missing (Debian/Ubuntu: apt-get install util-linux)"
    probe = SandboxPolicy.read_only(Path(tempfile.gettempdir()))
    argv = bwrap_argv(probe, host_layout(), ["/usr/bin/true"])
    try:
        done = subprocess.run(
            argv,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            env=sandbox_environment(probe.workspace, SANDBOX_TMP),
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bubblewrap could not start: {exc}"
    if done.returncode != 0:
        said = done.stderr.decode(errors="replace").strip().splitlines()
        reason = said[-1] if said else f"exit status {done.returncode}"
        cause, fix = namespaces_blocked_by(reason)
        return f"bubblewrap cannot create a sandbox here ({reason}): {cause}; {fix}"
    return None


def choose_layer(choice: LayerChoice) -> Layer:
    """The layer ``choice`` gives on this machine; SandboxUnavailable when none works.

    Blocking the first time (it starts bubblewrap once to see that it works): call it from
    a worker thread, as :func:`run_sandboxed` does.
    """
    if choice is LayerChoice.OFF:
        return Layer.OFF
    if choice in (LayerChoice.AUTO, LayerChoice.BUBBLEWRAP):
        problem = bubblewrap_problem()
        if problem is None:
            return Layer.BUBBLEWRAP
        if choice is LayerChoice.BUBBLEWRAP:
            raise SandboxUnavailable(f"the agent sandbox cannot start: {problem}")
    if landlock.landlock_abi() > 0:
        return Layer.LANDLOCK
    raise SandboxUnavailable(
        "the agent sandbox cannot start: bubblewrap does not work here "
        f"({bubblewrap_problem() or 'not chosen'}) and the fallback {NO_LANDLOCK}; "
        "install bubblewrap, or set `sandbox.layer: off` to run agent commands unsandboxed"
    )


#: How much of bubblewrap's problem the one line of :func:`layer_in_use` shows.
WHY_CHARS = 120


def layer_in_use(choice: LayerChoice) -> str:
    """One line saying which layer agent commands run under here (what ``run`` logs and the
    demo prints first); SandboxUnavailable when none works. Blocking the first time, as
    :func:`choose_layer` is."""
    layer = choose_layer(choice)
    if layer is Layer.BUBBLEWRAP:
        return "agent sandbox: bubblewrap"
    if layer is Layer.LANDLOCK:
        # The first clause of why bubblewrap does not start: the fix is doctor's to give.
        why = (bubblewrap_problem() or "sandbox.layer: landlock").split("; ")[0]
        why = why if len(why) <= WHY_CHARS else why[: WHY_CHARS - 1] + "…"
        return (
            f"agent sandbox: the Landlock fallback, weaker than bubblewrap ({why}); "
            "plancord doctor says what it lacks"
        )
    return "agent sandbox: off (sandbox.layer: off): agent commands run as the bot's user"


NETWORK_NEEDS_BUBBLEWRAP = (
    "this host runs agent commands without bubblewrap (under the Landlock fallback, or "
    "unsandboxed), which shares the bot's network namespace and cannot hold a command's "
    "connections to the plan's proxy, so no plan may name hosts here (under the "
    "Landlock fallback its commands run without the network); run plancord where "
    "bubblewrap works to grant hosts by the plan"
)


def network_by_plan_problem(choice: LayerChoice) -> str | None:
    """Why a plan may not name hosts under ``choice`` on this machine (only bubblewrap
    holds a command's network to the proxy); None when it may. Blocking the first time,
    as :func:`choose_layer` is."""
    try:
        layer = choose_layer(choice)
    except SandboxUnavailable as exc:
        return str(exc)
    return None if layer is Layer.BUBBLEWRAP else NETWORK_NEEDS_BUBBLEWRAP
