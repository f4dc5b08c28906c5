"""The shell runner and the plan-mode walls (bubblewrap's read-only view plus the Landlock
inner wall), with real subprocesses, real git and real sockets. ``sandbox=False`` runs the
same command with the sandbox switched off, to show what the walls stop."""

from __future__ import annotations

import asyncio
import os
import socket
import stat
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from plancord.agent.tools.shell import format_shell_result
from plancord.command import main as cli
from plancord.core.sandbox_policy import HOST_NETWORK
from plancord.sandbox import (
    Layer,
    LayerChoice,
    ProcessResult,
    SandboxPolicy,
    SandboxUnavailable,
    choose_layer,
    landlock_abi,
    runner,
)
from plancord.sandbox import landlock as sandbox_module

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Plan Tester",
    "GIT_AUTHOR_EMAIL": "tester@example.invalid",
    "GIT_COMMITTER_NAME": "Plan Tester",
    "GIT_COMMITTER_EMAIL": "tester@example.invalid",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_CONFIG_NOSYSTEM": "1",
}

Snapshot = dict[str, tuple[str, int, bytes]]


async def run_shell(
    command: str,
    workspace: Path,
    *,
    sandbox: bool,
    timeout: float = 60.0,  # noqa: ASYNC109 - the run's own deadline
    max_output: int = 100_000,
    env: dict[str, str] | None = None,
) -> ProcessResult:
    """``sandbox``: the plan-mode walls; otherwise no sandbox at all, network included."""
    if sandbox:
        policy = SandboxPolicy.read_only(workspace).behind_inner_wall()
    else:
        policy = SandboxPolicy.executing(workspace, network=HOST_NETWORK, layer=LayerChoice.OFF)
    return await runner.run_sandboxed(
        ["bash", "-c", command],
        policy,
        timeout=timeout,
        max_output=max_output,
        merge_stderr=True,
        extra_env=env,
    )


def require_landlock(minimum: int = 1) -> int:
    abi = landlock_abi()
    if abi < minimum:
        pytest.skip(f"needs Landlock ABI {minimum}, this kernel offers {abi or 'none'}")
    return abi


def describe(path: Path) -> tuple[str, int, bytes]:
    """Kind, permission bits and content (or link target) of one entry."""
    try:
        info = path.lstat()
    except FileNotFoundError:
        return ("missing", 0, b"")
    mode = stat.S_IMODE(info.st_mode)
    if stat.S_ISLNK(info.st_mode):
        return ("link", mode, os.readlink(path).encode())
    if stat.S_ISDIR(info.st_mode):
        return ("dir", mode, b"")
    if stat.S_ISREG(info.st_mode):
        return ("file", mode, path.read_bytes())
    return ("other", mode, b"")


def snapshot(*roots: Path) -> Snapshot:
    """Every entry at and under the roots; a missing root is recorded as missing."""
    entries: Snapshot = {str(root): describe(root) for root in roots}
    for root in roots:
        for dirpath, dirnames, filenames in os.walk(root):
            for name in [*dirnames, *filenames]:
                entries[os.path.join(dirpath, name)] = describe(Path(dirpath, name))
    return entries


def own_no_new_privs() -> str:
    status = Path("/proc/self/status").read_text()
    return next(line.split()[1] for line in status.splitlines() if line.startswith("NoNewPrivs"))


def write_and_read_back(path: Path) -> str:
    path.write_text("still writable\n")
    return path.read_text()


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A git repository with one commit, a subdirectory and an untracked empty directory."""
    ws = tmp_path / "ws"
    (ws / "sub").mkdir(parents=True)
    (ws / "empty").mkdir()
    (ws / "a.txt").write_text("hello world\n")
    (ws / "sub" / "b.txt").write_text("hello from sub\n")
    env = {**os.environ, **GIT_ENV}
    for args in (
        ["init", "-q", "-b", "main"],
        ["add", "."],
        ["commit", "-q", "-m", "initial commit"],
    ):
        subprocess.run(["git", *args], cwd=ws, env=env, check=True)
    return ws


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    directory = tmp_path / "outside"
    directory.mkdir()
    (directory / "keep.txt").write_text("keep me\n")
    return directory


@pytest.fixture
def tmp_target() -> Iterator[Path]:
    target = Path("/tmp") / f"plancord-sandbox-test-{uuid.uuid4().hex}"
    yield target
    target.unlink(missing_ok=True)


WRITING_COMMANDS = {
    "touch": "touch new.txt",
    "redirect": "echo x > new.txt",
    "overwrite": "echo x > a.txt",
    "append": "echo x >> a.txt",
    "python-open": "python3 -c \"open('new.txt', 'w')\"",
    "git-commit": "git commit --allow-empty -m x",
    "git-tag": "git tag v1",
    "rm": "rm a.txt",
    "rm-r": "rm -rf sub",
    "rmdir": "rmdir empty",
    "mkdir": "mkdir d",
    "mv": "mv a.txt b.txt",
    "mv-across-dirs": "mv a.txt sub/",
    "cp": "cp a.txt c.txt",
    "truncate": "truncate -s 0 a.txt",
    "ln-s": "ln -s a.txt link",
    "ln": "ln a.txt hard",
    "sed-i": "sed -i s/hello/bye/ a.txt",
    "mkfifo": "mkfifo fifo",
    "outside-write": "echo x > {outside}/new.txt",
    "outside-rm": "rm {outside}/keep.txt",
    "tmp-write": "touch {tmp_target}",
}


@pytest.mark.parametrize("template", WRITING_COMMANDS.values(), ids=WRITING_COMMANDS.keys())
async def test_sandbox_leaves_every_file_unchanged(
    template: str, workspace: Path, outside: Path, tmp_target: Path
) -> None:
    require_landlock()
    command = template.format(outside=outside, tmp_target=tmp_target)
    before = snapshot(workspace, outside, tmp_target)

    result = await run_shell(command, workspace, sandbox=True, env=GIT_ENV)

    assert result.read_only
    assert result.exit_code != 0, result.output
    assert not result.timed_out
    assert snapshot(workspace, outside, tmp_target) == before


@pytest.mark.parametrize("template", WRITING_COMMANDS.values(), ids=WRITING_COMMANDS.keys())
async def test_the_same_commands_do_write_without_the_sandbox(
    template: str, workspace: Path, outside: Path, tmp_target: Path
) -> None:
    command = template.format(outside=outside, tmp_target=tmp_target)
    before = snapshot(workspace, outside, tmp_target)

    result = await run_shell(command, workspace, sandbox=False, env=GIT_ENV)

    assert not result.read_only
    assert result.exit_code == 0, result.output
    assert snapshot(workspace, outside, tmp_target) != before


READ_ONLY_COMMANDS = {
    "ls": ("ls", "a.txt\nempty\nsub\n"),
    "cat": ("cat a.txt", "hello world\n"),
    "git-log": ("git log --oneline", "initial commit"),
    "git-status": ("git status", "nothing to commit"),
    "grep-r": ("grep -r hello . | sort", "./a.txt:hello world\n./sub/b.txt:hello from sub\n"),
    "find": ("find . -name b.txt", "./sub/b.txt"),
    "dev-null": ("echo hi > /dev/null && echo written", "written\n"),
    "dev-zero": ("head -c 5 /dev/zero | wc -c", "5"),
    "stderr-merged": ("echo to-stderr >&2", "to-stderr\n"),
    "heredoc": ("cat <<'EOF'\nfrom a heredoc\nEOF", "from a heredoc\n"),
}


@pytest.mark.parametrize("case", READ_ONLY_COMMANDS.values(), ids=READ_ONLY_COMMANDS.keys())
async def test_read_only_commands_work_in_the_sandbox(
    case: tuple[str, str], workspace: Path
) -> None:
    require_landlock()
    command, expected = case
    before = snapshot(workspace)

    result = await run_shell(command, workspace, sandbox=True, env=GIT_ENV)

    assert result.exit_code == 0, result.output
    assert expected in result.output
    assert "fatal" not in result.output
    assert result.read_only
    assert snapshot(workspace) == before


async def test_git_status_sees_a_change_made_outside_the_sandbox(workspace: Path) -> None:
    require_landlock()
    (workspace / "a.txt").write_text("changed\n")

    result = await run_shell("git status --short", workspace, sandbox=True, env=GIT_ENV)

    assert result.exit_code == 0
    assert result.output == " M a.txt\n"


async def test_bot_process_stays_unrestricted(workspace: Path, tmp_path: Path) -> None:
    require_landlock()
    result = await run_shell("grep NoNewPrivs /proc/self/status", workspace, sandbox=True)

    assert result.output.split() == ["NoNewPrivs:", "1"]
    assert own_no_new_privs() == "0"
    assert write_and_read_back(tmp_path / "written-by-the-bot.txt") == "still writable\n"


async def test_sandbox_denies_tcp_connect(workspace: Path) -> None:
    require_landlock(4)
    with socket.create_server(("127.0.0.1", 0)) as server:
        server.setblocking(False)
        port = server.getsockname()[1]
        connect = f"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=5)"

        result = await run_shell(f'python3 -c "{connect}"', workspace, sandbox=True)

        assert result.exit_code != 0
        assert "PermissionError" in result.output
        with pytest.raises(BlockingIOError):
            server.accept()


async def test_tcp_connect_works_without_the_sandbox(workspace: Path) -> None:
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        connect = f"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=5)"

        result = await run_shell(f'python3 -c "{connect}"', workspace, sandbox=False)

        assert result.exit_code == 0, result.output
        connection, _ = server.accept()
        connection.close()


@pytest.mark.parametrize("sandbox", [True, False], ids=["sandboxed", "unsandboxed"])
async def test_tcp_bind_is_denied_only_in_the_sandbox(workspace: Path, sandbox: bool) -> None:
    if sandbox:
        require_landlock(4)
    bind = "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen()"

    result = await run_shell(f'python3 -c "{bind}"', workspace, sandbox=sandbox)

    if sandbox:
        assert result.exit_code != 0
        assert "PermissionError" in result.output
    else:
        assert result.exit_code == 0, result.output


@pytest.mark.parametrize("sandbox", [True, False], ids=["sandboxed", "unsandboxed"])
async def test_signals_to_the_bot_are_scoped(workspace: Path, sandbox: bool) -> None:
    if sandbox:
        require_landlock(6)

    result = await run_shell(f"kill -0 {os.getpid()}", workspace, sandbox=sandbox)

    assert (result.exit_code != 0) is sandbox, result.output


@pytest.mark.parametrize("sandbox", [True, False], ids=["sandboxed", "unsandboxed"])
async def test_abstract_unix_sockets_are_scoped(workspace: Path, sandbox: bool) -> None:
    if sandbox:
        require_landlock(6)
    name = f"plancord-test-{uuid.uuid4().hex}"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
        server.bind("\0" + name)
        server.listen()
        server.setblocking(False)
        connect = f"import socket; socket.socket(socket.AF_UNIX).connect(chr(0) + '{name}')"

        result = await run_shell(f'python3 -c "{connect}"', workspace, sandbox=sandbox)

        if sandbox:
            assert result.exit_code != 0
            with pytest.raises(BlockingIOError):
                server.accept()
        else:
            assert result.exit_code == 0, result.output
            connection, _ = server.accept()
            connection.close()


async def wait_until_group_is_gone(pgid: int, within: float = 10.0) -> None:
    """Killed processes are zombies until reaped (orphans by init), so give it a moment."""
    deadline = time.monotonic() + within
    while True:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return
        if time.monotonic() > deadline:
            pytest.fail(f"process group {pgid} still exists {within}s after the run")
        await asyncio.sleep(0.05)


async def read_when_written(path: Path, within: float = 30.0) -> int:
    deadline = time.monotonic() + within
    while True:
        content = describe(path)[2].strip()
        if content:
            return int(content)
        if time.monotonic() > deadline:
            pytest.fail(f"{path} was not written within {within}s")
        await asyncio.sleep(0.02)


async def test_timeout_kills_the_whole_group(workspace: Path) -> None:
    require_landlock()
    started = time.monotonic()

    result = await run_shell("echo $$; sleep 600 & sleep 600", workspace, sandbox=True, timeout=0.5)

    # far below the sleeps, so a slow machine cannot tell a kill from a wait
    assert time.monotonic() - started < 120
    assert result.timed_out
    assert result.exit_code is None
    await wait_until_group_is_gone(int(result.output.split()[0]))


async def test_a_cancelled_run_says_cancelled_not_timed_out(workspace: Path) -> None:
    """A run stopped because its caller was cancelled (a Stop) is not a timeout: the
    result says which, and the shell's status line says it was cancelled."""
    require_landlock()
    cancel = threading.Event()
    cancel.set()
    result = await asyncio.to_thread(
        runner._run_in_thread,
        ["bash", "-c", "sleep 600"],
        SandboxPolicy.read_only(workspace).behind_inner_wall(),
        timeout=600,
        max_output=1000,
        merge_stderr=True,
        extra_env=None,
        cancel=cancel,
        stdout_to=None,
    )
    assert result.cancelled
    assert not result.timed_out
    assert result.exit_code is None
    status = format_shell_result(result, 600, walled=True).content.splitlines()[-1]
    assert status.startswith("[cancelled;")
    assert "timed out" not in status


async def test_background_processes_do_not_outlive_the_shell(workspace: Path) -> None:
    require_landlock()
    started = time.monotonic()

    result = await run_shell("echo $$; sleep 600 & echo done", workspace, sandbox=True)

    assert time.monotonic() - started < 120
    assert not result.timed_out
    assert result.exit_code == 0
    assert result.output.split()[1:] == ["done"]
    await wait_until_group_is_gone(int(result.output.split()[0]))


async def test_cancelling_the_run_kills_the_group(workspace: Path, tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    run = asyncio.create_task(
        run_shell(f"echo $$ > {pid_file}; sleep 30 & sleep 30", workspace, sandbox=False)
    )
    pgid = await read_when_written(pid_file)

    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run

    await wait_until_group_is_gone(pgid)


async def test_output_is_capped_with_a_note(workspace: Path) -> None:
    require_landlock()
    result = await run_shell("yes | head -c 1000000", workspace, sandbox=True, max_output=1000)

    assert result.truncated
    assert result.exit_code == 0
    assert result.output.startswith("y\n" * 500)
    assert result.output.endswith("[output truncated: showing the first 1,000 of 1,000,000 bytes]")
    assert len(result.output) < 1100


async def test_cut_never_splits_a_character(workspace: Path) -> None:
    result = await run_shell("printf 'ééé'", workspace, sandbox=False, max_output=3)

    assert result.truncated
    assert result.output == "é\n[output truncated: showing the first 3 of 6 bytes]"


async def test_small_output_is_exact_and_invalid_utf8_is_replaced(workspace: Path) -> None:
    result = await run_shell(r"printf 'ok\377\nend'", workspace, sandbox=False)

    assert not result.truncated
    assert result.output == "ok\ufffd\nend"


@pytest.mark.parametrize(("command", "status"), [("exit 3", 3), ("kill -9 $$", 137), ("true", 0)])
async def test_exit_status(workspace: Path, command: str, status: int) -> None:
    result = await run_shell(command, workspace, sandbox=False)

    assert result.exit_code == status
    assert not result.timed_out


async def test_stdin_is_dev_null(workspace: Path) -> None:
    result = await run_shell("cat; readlink /proc/self/fd/0", workspace, sandbox=False, timeout=5)

    assert not result.timed_out
    assert result.output == "/dev/null\n"


async def test_environment_is_sanitised(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLANCORD_TEST_SECRET", "do-not-leak")
    monkeypatch.setenv("PAGER", "less")

    result = await run_shell("env", workspace, sandbox=False, env={"EXTRA": "1", "TERM": "vt100"})

    variables = dict(line.split("=", 1) for line in result.output.splitlines())
    assert "PLANCORD_TEST_SECRET" not in variables
    assert variables["PATH"] == "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
    assert variables["PAGER"] == "cat"
    assert variables["GIT_PAGER"] == "cat"
    assert variables["GIT_TERMINAL_PROMPT"] == "0"
    assert variables["EXTRA"] == "1"
    assert variables["TERM"] == "vt100"


async def test_refuses_before_spawning_without_landlock(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sandbox_module, "landlock_abi", lambda: 0)

    with pytest.raises(SandboxUnavailable, match="shell_sandbox: off"):
        await run_shell("touch spawned", workspace, sandbox=True)

    assert describe(workspace / "spawned")[0] == "missing"
    result = await run_shell("touch spawned", workspace, sandbox=False)
    assert result.exit_code == 0
    assert describe(workspace / "spawned")[0] == "file"


async def test_missing_workspace_raises(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        await run_shell("true", tmp_path / "missing", sandbox=False)


def test_trampoline_never_runs_the_command_when_the_jail_fails(tmp_path: Path) -> None:
    require_landlock()
    broken = (
        "from plancord.sandbox import landlock; "
        "landlock._syscall_numbers = lambda: (444, 445, 99999); "
        "landlock.main(['readonly', '--', 'touch', 'x'])"
    )

    completed = subprocess.run(
        [sys.executable, "-c", broken], cwd=tmp_path, capture_output=True, text=True, check=False
    )

    assert completed.returncode == 126
    assert "could not apply Landlock" in completed.stderr
    assert not (tmp_path / "x").exists()


def test_landlock_abi_is_reported() -> None:
    abi = landlock_abi()

    assert isinstance(abi, int)
    assert abi >= 0
    if sys.platform == "linux" and abi == 0:
        pytest.skip("Landlock is not available on this kernel")


def test_landlock_abi_is_zero_where_the_syscalls_are_unknown(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(sandbox_module, "_syscall_numbers", lambda: None)

    assert landlock_abi() == 0


@pytest.mark.parametrize(
    ("abi", "expected"),
    [
        (1, (0x1FFF, 0, 0)),
        (2, (0x3FFF, 0, 0)),
        (3, (0x7FFF, 0, 0)),
        (4, (0x7FFF, 0b11, 0)),
        (5, (0xFFFF, 0b11, 0)),
        (6, (0xFFFF, 0b11, 0b11)),
        (7, (0xFFFF, 0b11, 0b11)),
        (9, (0xFFFF, 0b11, 0b11)),
    ],
)
def test_rights_handled_per_abi(abi: int, expected: tuple[int, int, int]) -> None:
    assert sandbox_module._handled_rights(abi) == expected


def plancord(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "plancord.command.main", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )


def test_cli_sandbox_run_denies_writes(workspace: Path) -> None:
    require_landlock()

    completed = plancord("sandbox-run", "--workspace", workspace, "--", "touch", "x")

    assert completed.returncode != 0
    assert "Read-only file system" in completed.stderr
    assert not (workspace / "x").exists()


def test_cli_sandbox_run_allows_reads(workspace: Path) -> None:
    require_landlock()

    completed = plancord("sandbox-run", "--workspace", workspace, "--", "cat", "a.txt")

    assert completed.returncode == 0
    assert completed.stdout == "hello world\n"
    # Which wall ran it, on stderr, so the command's own output stays its own.
    assert completed.stderr.startswith("plancord sandbox-run: agent sandbox: ")


@pytest.mark.parametrize(
    ("argv", "status"),
    [(["sh", "-c", "exit 7"], 7), (["sh", "-c", "kill -TERM $$"], 143), (["no-such-command"], 127)],
)
def test_cli_sandbox_run_exit_status(workspace: Path, argv: list[str], status: int) -> None:
    require_landlock()

    completed = plancord("sandbox-run", "--workspace", workspace, "--", *argv)

    assert completed.returncode == status


def test_cli_sandbox_run_missing_workspace(tmp_path: Path) -> None:
    completed = plancord("sandbox-run", "--workspace", tmp_path / "missing", "--", "true")

    assert completed.returncode == 2
    assert completed.stderr.count("\n") == 1
    assert "is not a directory" in completed.stderr


def test_sandbox_run_without_landlock(
    workspace: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sandbox_module, "landlock_abi", lambda: 0)

    status = cli.main(["sandbox-run", "--workspace", str(workspace), "--", "touch", "x"])

    assert status == 2
    layer, error = capsys.readouterr().err.splitlines()  # which layer, then one error line
    assert layer.startswith("plancord sandbox-run: agent sandbox: ")
    assert "Landlock" in error
    assert not (workspace / "x").exists()


async def hostile_repository(tmp_path: Path) -> tuple[Path, Path]:
    """A repository whose .git/config makes git run a program (fsmonitor, pager) that writes
    a marker outside it; the marker's path is returned beside the workspace."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    marker = tmp_path / "ran"
    env = {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@x",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@x",
    }
    setup = await run_shell(
        "git init -q && echo a > f && git add f && git commit -qm one && echo b > f",
        workspace,
        sandbox=False,
        env=env,
    )
    assert setup.exit_code == 0, setup.output
    hook = f"sh -c 'echo ran >> {marker}'"
    for key in ("core.fsmonitor", "core.pager"):
        await asyncio.to_thread(
            subprocess.run, ["git", "config", key, hook], cwd=workspace, check=True
        )
    return workspace, marker


async def test_the_hostile_repository_runs_its_program_under_plain_git(tmp_path: Path) -> None:
    """The positive control for the two tests below: git run as a person would runs it."""
    workspace, marker = await hostile_repository(tmp_path)
    await asyncio.to_thread(
        subprocess.run, ["git", "status"], cwd=workspace, capture_output=True, check=False
    )
    assert marker.exists()


async def test_with_the_sandbox_off_a_repository_config_that_runs_programs_is_refused(
    tmp_path: Path,
) -> None:
    """With the sandbox off nothing can hide the file: the run is refused, naming the keys."""
    workspace, marker = await hostile_repository(tmp_path)
    for command in ("git status", "git diff", "git log -p"):
        with pytest.raises(SandboxUnavailable, match=r"core\.fsmonitor, core\.pager"):
            await run_shell(command, workspace, sandbox=False)
    assert not marker.exists()


@pytest.mark.skipif(
    choose_layer(LayerChoice.AUTO) is not Layer.BUBBLEWRAP,
    reason="hiding a repository's config needs bubblewrap",
)
async def test_under_bubblewrap_git_sees_only_the_allow_listed_config(tmp_path: Path) -> None:
    """git inside bubblewrap works on the repository and runs none of its programs."""
    workspace, marker = await hostile_repository(tmp_path)
    policy = SandboxPolicy.executing(workspace)
    for command in ("git status", "git diff", "git log -p"):
        result = await runner.run_sandboxed(
            ["bash", "-c", command], policy, timeout=60, merge_stderr=True
        )
        assert result.exit_code == 0, (command, result.output)
    diff = await runner.run_sandboxed(["git", "diff"], policy, timeout=60)
    assert "+b" in diff.stdout
    assert not marker.exists()


def test_cli_sandbox_run_follows_the_configs_sandbox_section(tmp_path: Path) -> None:
    """``--config`` is the bot's: its layer is required here as it would be for an agent."""
    config = tmp_path / "config.yaml"
    config.write_text("sandbox:\n  layer: bubblewrap\n")
    no_programs = tmp_path / "bin"
    no_programs.mkdir()
    argv = ["sandbox-run", "--workspace", str(tmp_path), "--config", str(config), "--", "true"]
    completed = subprocess.run(
        [sys.executable, "-m", "plancord.command.main", *argv],
        capture_output=True,
        text=True,
        env={**os.environ, "PATH": str(no_programs)},
        timeout=30,
        check=False,
    )
    assert completed.returncode == 2
    assert completed.stderr.startswith(
        "plancord sandbox-run: the agent sandbox cannot start: bubblewrap is not installed"
    )


def test_cli_sandbox_run_shows_the_configs_shared_paths(tmp_path: Path) -> None:
    require_landlock()
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    shared = tmp_path / "cache"
    shared.mkdir()
    (shared / "note.txt").write_text("shared\n")
    config = tmp_path / "config.yaml"
    config.write_text(f"sandbox:\n  shared_paths: [{shared}]\n")
    read = ["--", "cat", str(shared / "note.txt")]

    unshared = plancord("sandbox-run", "--workspace", workspace, *read)
    with_config = plancord("sandbox-run", "--workspace", workspace, "--config", config, *read)

    assert unshared.returncode != 0
    assert with_config.returncode == 0, with_config.stderr
    assert with_config.stdout == "shared\n"
