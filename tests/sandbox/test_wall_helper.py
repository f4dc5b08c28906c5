"""The plan-mode inner wall as a native program (``landlock-exec``): it walls in what the
Python trampoline walls in, alone (no bubblewrap around it), and it never runs the command
when the wall cannot be set up. Each attack is also run without the wall, to show it harms.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import socket
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from plancord.core.sandbox_policy import HOST_NETWORK
from plancord.doctor.findings import Status
from plancord.doctor.walls import check_inner_wall
from plancord.sandbox import (
    LayerChoice,
    ProcessResult,
    SandboxPolicy,
    landlock_abi,
    layers,
    runner,
    wall_helper,
)
from plancord.sandbox.argv import HostLayout, bwrap_argv


def require_landlock(minimum: int = 1) -> None:
    if landlock_abi() < minimum:
        pytest.skip(f"needs Landlock ABI {minimum}")


@pytest.fixture(scope="module")
def helper() -> str:
    require_landlock()
    if shutil.which("cc") is None:
        pytest.skip("no C compiler: the runner uses the Python trampoline")
    built = wall_helper.native_wall()
    assert built is not None, "a compiler is installed, yet the helper was not built"
    return built


@pytest.fixture(params=["native", "python"])
def wall(request: pytest.FixtureRequest, helper: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """Runs each test with the native helper and with the Python trampoline."""
    layout = layers.host_layout()
    chosen = helper if request.param == "native" else None
    monkeypatch.setattr(
        runner, "host_layout", lambda: dataclasses.replace(layout, wall_helper=chosen)
    )
    return str(request.param)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    (path / "a.txt").write_text("inside\n")
    return path


async def run(command: str, workspace: Path, *, walled: bool) -> ProcessResult:
    """No bubblewrap: only the inner wall (when ``walled``) stands between the command and
    the host."""
    policy = (
        SandboxPolicy.read_only(workspace, layer=LayerChoice.OFF).behind_inner_wall()
        if walled
        else SandboxPolicy.executing(workspace, network=HOST_NETWORK, layer=LayerChoice.OFF)
    )
    return await runner.run_sandboxed(
        ["bash", "-c", command], policy, timeout=30, merge_stderr=True
    )


def test_the_helper_is_named_by_its_source() -> None:
    names = {path.name for path in wall_helper.candidates()}
    digest = wall_helper.candidates()[0].name.removeprefix("landlock-exec-")
    assert len(names) == 1
    assert len(digest) == 16
    assert all(c in "0123456789abcdef" for c in digest)


def test_bubblewrap_runs_the_native_wall_without_python() -> None:
    host = HostLayout(
        symlinks=(),
        directories=(),
        etc_entries=(),
        python_prefix="/opt/python",
        python_executable="/opt/python/bin/python3",
        trampoline="/opt/plancord/landlock.py",
        wall_helper="/cache/landlock-exec-0123",
    )
    policy = SandboxPolicy.read_only(Path("/w")).behind_inner_wall()
    argv = bwrap_argv(policy, host, ["ls"])
    assert "/opt/python" not in argv
    assert "landlock.py" not in " ".join(argv)
    bind = argv.index("/cache/landlock-exec-0123")
    assert argv[bind - 1 : bind + 2] == [
        "--ro-bind",
        "/cache/landlock-exec-0123",
        "/run/plancord/landlock-exec",
    ]
    assert argv[-4:] == ["--", "/run/plancord/landlock-exec", "--", "ls"]


@pytest.mark.parametrize("walled", [True, False], ids=["walled", "unwalled"])
async def test_writes_are_stopped(wall: str, workspace: Path, tmp_path: Path, walled: bool) -> None:
    target = tmp_path / f"out-{uuid.uuid4().hex}"
    result = await run(
        f"echo x > a.txt; touch {target}; mkdir d; echo y > /dev/null && echo null-ok",
        workspace,
        walled=walled,
    )
    assert "null-ok" in result.output
    assert ((workspace / "a.txt").read_text() == "inside\n") is walled
    assert target.exists() is not walled
    assert (workspace / "d").exists() is not walled


@pytest.mark.parametrize("walled", [True, False], ids=["walled", "unwalled"])
async def test_tcp_is_stopped(wall: str, workspace: Path, walled: bool) -> None:
    require_landlock(4)
    with socket.create_server(("127.0.0.1", 0)) as server:
        server.setblocking(False)
        port = server.getsockname()[1]
        result = await run(
            f"exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected", workspace, walled=walled
        )
        assert ("connected" in result.output) is not walled
        if walled:
            with pytest.raises(BlockingIOError):
                server.accept()
        else:
            server.accept()[0].close()


@pytest.mark.parametrize("walled", [True, False], ids=["walled", "unwalled"])
async def test_signals_outside_are_stopped(wall: str, workspace: Path, walled: bool) -> None:
    require_landlock(6)
    result = await run(f"kill -0 {os.getpid()}", workspace, walled=walled)
    assert (result.exit_code != 0) is walled, result.output


async def test_reads_and_exit_statuses_pass_through(wall: str, workspace: Path) -> None:
    result = await run("cat a.txt; exit 3", workspace, walled=True)
    assert result.output == "inside\n"
    assert result.exit_code == 3
    missing = await run("exec no-such-program-here", workspace, walled=True)
    assert missing.exit_code == 127


_DENY_SYSCALL = """
import ctypes, errno, os, struct, sys
number, code = int(sys.argv[1]), int(sys.argv[2])
program = [
    (0x20, 0, 0, 0),                      # load the syscall number
    (0x15, 0, 1, number),                 # the one to break?
    (0x06, 0, 0, 0x00050000 | code),      # fail it with errno ``code``
    (0x06, 0, 0, 0x7FFF0000),             # allow the rest
]
raw = b"".join(struct.pack("=HBBI", *i) for i in program)
class Prog(ctypes.Structure):
    _fields_ = (("len", ctypes.c_ushort), ("filter", ctypes.c_char_p))
libc = ctypes.CDLL(None, use_errno=True)
assert libc.prctl(38, 1, 0, 0, 0) == 0
buffer = ctypes.create_string_buffer(raw, len(raw))
prog = Prog(len(program), ctypes.cast(buffer, ctypes.c_char_p))
assert libc.prctl(22, 2, ctypes.byref(prog), 0, 0) == 0
os.execv(sys.argv[3], sys.argv[3:])
"""


@pytest.mark.parametrize(
    ("syscall", "code"),
    [(444, 38), (445, 1), (446, 1)],
    ids=["no-landlock", "rule-refused", "restrict-refused"],
)
def test_the_command_never_runs_when_the_wall_fails(
    helper: str, tmp_path: Path, syscall: int, code: int
) -> None:
    if os.uname().machine not in ("x86_64", "aarch64"):
        pytest.skip("syscall numbers known for x86-64 and AArch64")
    marker = tmp_path / "ran"
    argv = [sys.executable, "-c", _DENY_SYSCALL, str(syscall), str(code)]
    broken = subprocess.run(
        [*argv, helper, "--", "touch", str(marker)], capture_output=True, text=True, check=False
    )
    assert broken.returncode == 126, broken.stderr
    assert "could not apply Landlock" in broken.stderr
    assert not marker.exists()
    control = subprocess.run(
        [*argv, "/usr/bin/env", "touch", str(marker)], capture_output=True, check=False
    )
    assert control.returncode == 0
    assert marker.exists()


def test_without_a_compiler_the_trampoline_is_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(wall_helper, "candidates", lambda: [tmp_path / "cache" / "x"])
    wall_helper.native_wall.cache_clear()
    try:
        assert wall_helper.native_wall() is None
    finally:
        wall_helper.native_wall.cache_clear()


def test_doctor_warns_only_when_planning_starts_python_for_the_wall() -> None:
    slow = check_inner_wall(6, None)
    assert slow is not None
    assert slow.status is Status.WARN
    assert "landlock-exec" in slow.line()
    assert check_inner_wall(6, "/cache/landlock-exec-0123") is None
    assert check_inner_wall(0, None) is None


def test_a_helper_others_may_write_is_never_used(tmp_path: Path, helper: str) -> None:
    directory = tmp_path / "cache"
    directory.mkdir(mode=0o700)
    copy = directory / "landlock-exec"
    shutil.copy2(helper, copy)
    assert wall_helper.trusted(copy)
    copy.chmod(0o777)
    assert not wall_helper.trusted(copy)
    copy.chmod(0o755)
    directory.chmod(0o777)
    assert not wall_helper.trusted(copy)
