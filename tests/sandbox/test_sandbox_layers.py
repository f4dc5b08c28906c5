"""Each sandbox layer with real processes: what bubblewrap shows a command, what the Landlock
fallback lets it reach, the argv the policy becomes, and the refusal when nothing works."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import socket
import time
from pathlib import Path

import pytest

from plancord.core.sandbox_policy import HOST_NETWORK, OFFLINE, Proxied, SandboxSettings
from plancord.sandbox import (
    Layer,
    LayerChoice,
    Limits,
    ProcessResult,
    SandboxPolicy,
    SandboxUnavailable,
    landlock_abi,
    layers,
    run_sandboxed,
)
from plancord.sandbox import landlock as landlock_module
from plancord.sandbox.argv import HostLayout, bwrap_argv

HOST = HostLayout(
    symlinks=(("/bin", "usr/bin"),),
    directories=("/lib64",),
    etc_entries=("passwd", "ld.so.cache"),
    python_prefix="/opt/python",
    python_executable="/opt/python/bin/python3",
    trampoline="/opt/plancord/landlock.py",
)
LIMITS = Limits(
    memory_bytes=1000, processes=10, file_size_bytes=2000, cpu_seconds=3, tmp_bytes=4000
)
PRLIMIT = ["/usr/bin/prlimit", "--as=1000", "--nproc=10", "--fsize=2000", "--cpu=3", "--core=0"]


def test_bwrap_argv_while_planning_is_exactly_this() -> None:
    policy = SandboxPolicy.read_only(
        Path("/data/agents/ada/workspace"), limits=LIMITS
    ).behind_inner_wall()
    assert bwrap_argv(policy, HOST, ["ls", "-la"]) == [
        "bwrap",
        "--unshare-user",
        "--unshare-ipc",
        "--unshare-pid",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--unshare-net",
        "--die-with-parent",
        "--new-session",
        "--cap-drop",
        "ALL",
        "--hostname",
        "sandbox",
        "--ro-bind",
        "/usr",
        "/usr",
        "--symlink",
        "usr/bin",
        "/bin",
        "--ro-bind",
        "/lib64",
        "/lib64",
        "--ro-bind",
        "/etc/passwd",
        "/etc/passwd",
        "--ro-bind",
        "/etc/ld.so.cache",
        "/etc/ld.so.cache",
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--size",
        "4000",
        "--tmpfs",
        "/tmp",
        "--ro-bind",
        "/opt/python",
        "/opt/python",
        "--ro-bind",
        "/opt/plancord/landlock.py",
        "/run/plancord/landlock.py",
        "--ro-bind",
        "/data/agents/ada/workspace",
        "/data/agents/ada/workspace",
        "--chdir",
        "/data/agents/ada/workspace",
        "--",
        *PRLIMIT,
        "--",
        "/opt/python/bin/python3",
        "-I",
        "-S",
        "/run/plancord/landlock.py",
        "readonly",
        "--",
        "ls",
        "-la",
    ]


def test_bwrap_argv_while_executing_with_the_network_and_a_shared_path() -> None:
    policy = SandboxPolicy.executing(
        Path("/w"), network=HOST_NETWORK, limits=LIMITS, shared=(Path("/srv/remote.git"),)
    )
    argv = bwrap_argv(policy, HOST, ["true"])
    assert "--unshare-net" not in argv
    assert "landlock.py" not in " ".join(argv)
    tail = argv[argv.index("--tmpfs") + 2 :]
    assert tail == [
        "--bind",
        "/srv/remote.git",
        "/srv/remote.git",
        "--bind",
        "/w",
        "/w",
        "--chdir",
        "/w",
        "--",
        *PRLIMIT,
        "--",
        "true",
    ]


def test_bwrap_argv_with_the_plan_bound_network_keeps_no_network_of_its_own() -> None:
    policy = SandboxPolicy.executing(
        Path("/w"), limits=LIMITS, network=Proxied(Path("/data/network/ada.sock"))
    )
    host = dataclasses.replace(HOST, net_bridge="/opt/plancord/net_bridge.py")
    argv = bwrap_argv(policy, host, ["curl", "http://pypi.org/"], proxy_fd=7)
    assert "/data/network/ada.sock" not in argv
    assert "--unshare-net" in argv
    tail = argv[argv.index("--tmpfs") + 2 :]
    assert tail == [
        "--ro-bind",
        "/opt/python",
        "/opt/python",
        "--ro-bind",
        "/opt/plancord/net_bridge.py",
        "/run/plancord/net-bridge.py",
        "--bind",
        "/w",
        "/w",
        "--chdir",
        "/w",
        "--",
        *PRLIMIT,
        "--",
        "/opt/python/bin/python3",
        "-I",
        "-S",
        "/run/plancord/net-bridge.py",
        "3128",
        "7",
        "--",
        "curl",
        "http://pypi.org/",
    ]


def test_the_native_bridge_needs_no_python_in_the_sandbox() -> None:
    policy = SandboxPolicy.executing(Path("/w"), limits=LIMITS, network=Proxied(Path("/p.sock")))
    host = dataclasses.replace(HOST, native_bridge="/cache/net-bridge-0123")
    argv = bwrap_argv(policy, host, ["true"], proxy_fd=9)
    assert "/opt/python" not in argv
    assert argv[argv.index("/cache/net-bridge-0123") + 1] == "/run/plancord/net-bridge"
    tail = ["/run/plancord/net-bridge", "3128", "9", "--", "true"]
    assert argv[-5:] == tail


def test_the_host_git_and_read_only_runs_never_get_the_proxy() -> None:
    settings = SandboxSettings(plan_network=frozenset({"ada"}), proxy_dir=Path("/data/network"))
    executing = settings.executing("ada", Path("/w"))
    assert executing.network == Proxied(Path("/data/network/ada.sock"))
    assert settings.read_only(Path("/w")).network == OFFLINE
    assert settings.walled(Path("/w")).network == OFFLINE
    assert settings.executing("bob", Path("/w")).network == OFFLINE
    assert executing.for_host_git().network == OFFLINE
    assert executing.for_reading().network == OFFLINE
    assert executing.behind_inner_wall().network == OFFLINE
    assert executing.for_push(None).network == OFFLINE


def test_a_plan_bound_network_cannot_be_built_without_its_door() -> None:
    policy = SandboxPolicy.executing(Path("/w"), network=Proxied(Path("/p.sock")))
    with pytest.raises(ValueError, match="door"):
        bwrap_argv(policy, HOST, ["true"])


def require_landlock(minimum: int = 1) -> None:
    if landlock_abi() < minimum:
        pytest.skip(f"needs Landlock ABI {minimum}")


async def fallback(
    command: str,
    workspace: Path,
    *,
    writable: bool = True,
    timeout: float = 20,  # noqa: ASYNC109
) -> ProcessResult:
    policy = (
        SandboxPolicy.executing(workspace, layer=LayerChoice.LANDLOCK)
        if writable
        else SandboxPolicy.read_only(workspace, layer=LayerChoice.LANDLOCK)
    )
    return await run_sandboxed(["bash", "-c", command], policy, timeout=timeout, merge_stderr=True)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    (path / "a.txt").write_text("inside\n")
    return path


async def test_the_fallback_reads_and_writes_only_the_workspace(
    workspace: Path, tmp_path: Path
) -> None:
    require_landlock()
    outside = tmp_path / "outside.txt"
    outside.write_text("host secret\n")
    result = await fallback(
        f"cat a.txt; echo new > b.txt; cat {outside}; echo x > {tmp_path}/c.txt; "
        "cat /proc/1/environ; ls ~ >/dev/null && echo home-ok; echo t > $TMPDIR/t && echo tmp-ok",
        workspace,
    )
    assert result.layer is Layer.LANDLOCK
    assert "inside" in result.stdout
    assert (workspace / "b.txt").read_text() == "new\n"
    assert "host secret" not in result.stdout
    assert not (tmp_path / "c.txt").exists()
    assert "home-ok" in result.stdout
    assert "tmp-ok" in result.stdout


async def test_the_fallback_keeps_the_workspace_read_only_while_planning(
    workspace: Path,
) -> None:
    require_landlock()
    result = await fallback("cat a.txt && echo x > b.txt", workspace, writable=False)
    assert "inside" in result.stdout
    assert result.exit_code != 0
    assert not (workspace / "b.txt").exists()


async def test_the_fallback_turns_tcp_off(workspace: Path) -> None:
    require_landlock(4)
    with socket.create_server(("127.0.0.1", 0)) as server:
        server.setblocking(False)
        port = server.getsockname()[1]
        result = await fallback(f"exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected", workspace)
        assert "connected" not in result.stdout
        with pytest.raises(BlockingIOError):
            server.accept()


def _alive(needle: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if needle.encode() in Path(f"/proc/{entry}/cmdline").read_bytes():
                    found.append(int(entry))
            except OSError:
                continue
    return found


async def _gone(needle: str, within: float = 30.0) -> bool:
    deadline = time.monotonic() + within
    while _alive(needle):
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.05)
    return True


async def test_the_fallback_kills_what_the_command_leaves_behind(workspace: Path) -> None:
    require_landlock()
    result = await fallback(
        "setsid sleep 271.5 >/dev/null 2>&1 </dev/null & ( (sleep 271.25 &) & ); echo ok",
        workspace,
    )
    assert result.stdout.strip() == "ok"
    assert await _gone("271.")


async def test_the_fallback_kills_everything_at_the_timeout(workspace: Path) -> None:
    require_landlock()
    started = time.monotonic()
    result = await fallback("setsid sleep 272.5 & sleep 272.25", workspace, timeout=0.5)
    assert result.timed_out
    assert time.monotonic() - started < 120  # far below the sleeps
    assert await _gone("272.")


async def test_bubblewrap_shows_only_the_workspace_and_the_system(
    workspace: Path, tmp_path: Path
) -> None:
    if layers.bubblewrap_problem() is not None:
        pytest.skip(layers.bubblewrap_problem() or "")
    policy = SandboxPolicy.executing(workspace)
    result = await run_sandboxed(
        ["bash", "-c", f"ls / ; ls {tmp_path}; ls /proc | grep -c '^[0-9]'"],
        policy,
        timeout=20,
        merge_stderr=True,
    )
    assert result.layer is Layer.BUBBLEWRAP
    listed = result.stdout.split()
    assert "root" not in listed
    assert "home" not in listed
    assert "outside.txt" not in listed
    assert listed[-1] in ("2", "3", "4")


async def test_no_layer_means_no_run(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(layers, "bubblewrap_problem", lambda: "bubblewrap is not installed")
    monkeypatch.setattr(landlock_module, "landlock_abi", lambda: 0)
    policy = SandboxPolicy.executing(workspace)
    with pytest.raises(SandboxUnavailable, match=r"sandbox\.layer: off"):
        await run_sandboxed(["touch", "ran"], policy, timeout=5)
    assert not (workspace / "ran").exists()
    bubblewrap_only = SandboxPolicy.executing(workspace, layer=LayerChoice.BUBBLEWRAP)
    with pytest.raises(SandboxUnavailable, match="bubblewrap is not installed"):
        await run_sandboxed(["touch", "ran"], bubblewrap_only, timeout=5)
    assert not (workspace / "ran").exists()


async def test_the_run_happens_off_the_event_loop(workspace: Path) -> None:
    """A run that takes a second never holds the loop: a ticker keeps ticking."""
    policy = SandboxPolicy.executing(workspace)
    gaps: list[float] = []

    async def tick() -> None:
        last = time.monotonic()
        while True:
            await asyncio.sleep(0.01)
            now = time.monotonic()
            gaps.append(now - last)
            last = now

    ticker = asyncio.create_task(tick())
    try:
        runs = [
            run_sandboxed(["bash", "-c", "sleep 0.5; seq 1 20000"], policy, timeout=20)
            for _ in range(8)
        ]
        results = await asyncio.gather(*runs)
    finally:
        ticker.cancel()
    assert all(r.exit_code == 0 for r in results)
    assert max(gaps) < 0.5


def test_the_network_is_for_named_agents_and_never_while_planning() -> None:
    settings = SandboxSettings(network_agents=frozenset({"ada"}))
    workspace = Path("/w")
    executing = settings.executing("ada", workspace)
    assert (executing.network, executing.writable, executing.inner_wall) == (
        HOST_NETWORK,
        True,
        False,
    )
    planning = settings.walled(workspace)
    assert (planning.network, planning.writable, planning.inner_wall) == (OFFLINE, False, True)
    other = settings.executing("bob", workspace)
    assert other.network == OFFLINE
