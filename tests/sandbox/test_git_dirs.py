"""Git directories read-only to agent processes: the argv that binds them (exactly, in mount
order), which directories are found, what the Landlock fallback does instead, what git sees
and cannot do inside, what the host's own git runs still do, and the environment."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from plancord.agent.mcp.spawn import server_spawn
from plancord.agent.tools.shell import GIT_WRITE_REFUSED, format_shell_result
from plancord.core.sandbox_policy import Layer, LayerChoice, Limits, SandboxPolicy
from plancord.sandbox import ProcessResult, SandboxUnavailable, config_view, layers, run_sandboxed
from plancord.sandbox.argv import HostLayout, bwrap_argv
from plancord.sandbox.environment import sandbox_environment
from plancord.sandbox.git_dirs import walls

HOST = HostLayout(
    symlinks=(),
    directories=(),
    etc_entries=(),
    python_prefix="/opt/python",
    python_executable="/opt/python/bin/python3",
    trampoline="/opt/plancord/landlock.py",
)
LIMITS = Limits(
    memory_bytes=1000, processes=10, file_size_bytes=2000, cpu_seconds=3, tmp_bytes=4000
)
PRLIMIT = ["/usr/bin/prlimit", "--as=1000", "--nproc=10", "--fsize=2000", "--cpu=3", "--core=0"]
IDENTITY = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@t",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@t",
}
needs_bubblewrap = pytest.mark.skipif(
    layers.bubblewrap_problem() is not None, reason="needs the bubblewrap layer"
)


def test_bwrap_binds_the_git_directories_after_the_workspace_and_the_views_after_them() -> None:
    policy = SandboxPolicy.executing(Path("/w"), limits=LIMITS)
    argv = bwrap_argv(
        policy,
        HOST,
        ["true"],
        read_only=("/w/.git", "/w/vendor/lib/.git"),
        covers=(("/views/config-0", "/w/.git/config"),),
    )
    assert argv[argv.index("--tmpfs") + 2 :] == [
        "--bind", "/w", "/w",
        "--ro-bind", "/w/.git", "/w/.git",
        "--ro-bind", "/w/vendor/lib/.git", "/w/vendor/lib/.git",
        "--ro-bind", "/views/config-0", "/w/.git/config",
        "--chdir", "/w", "--",
        *PRLIMIT, "--",
        "true",
    ]  # fmt: skip


def _repository(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True)
    (path / "app.py").write_text("print(1)\n")
    subprocess.run(["git", "add", "app.py"], cwd=path, check=True)
    subprocess.run(
        ["git", "commit", "-qm", "app"], cwd=path, check=True, env={**IDENTITY, "PATH": "/usr/bin"}
    )
    return path


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A repository holding a nested one, and one whose ``.git`` file leads into the
    workspace (a submodule-like layout)."""
    root = _repository(tmp_path / "ws")
    _repository(root / "vendor" / "lib")
    _repository(root / "store" / "tool")
    (root / "tools").mkdir()
    (root / "tools" / ".git").write_text("gitdir: ../store/tool/.git\n")
    return root.resolve()


def test_each_git_directory_is_found_outermost_first(workspace: Path) -> None:
    policy = SandboxPolicy.executing(workspace)
    found = walls(policy, Layer.BUBBLEWRAP, config_view.repositories(policy))
    assert found.read_only == (
        f"{workspace}/.git",
        f"{workspace}/store/tool/.git",
        f"{workspace}/vendor/lib/.git",
    )


def test_no_walls_for_the_host_s_git_or_a_read_only_workspace(workspace: Path) -> None:
    repositories = config_view.repositories(SandboxPolicy.executing(workspace))
    for policy in (
        SandboxPolicy.executing(workspace).for_host_git(),
        SandboxPolicy.read_only(workspace),
        SandboxPolicy.read_only(workspace).behind_inner_wall(),
    ):
        assert walls(policy, Layer.BUBBLEWRAP, repositories).read_only == ()
        assert walls(policy, Layer.LANDLOCK, repositories).read_only == ()


def test_the_landlock_fallback_refuses_a_writable_repository_workspace(
    workspace: Path, tmp_path: Path
) -> None:
    policy = SandboxPolicy.executing(workspace)
    with pytest.raises(SandboxUnavailable, match=r"git directory read-only.*git_commit"):
        walls(policy, Layer.LANDLOCK, config_view.repositories(policy))
    plain = tmp_path / "plain"
    plain.mkdir()
    not_a_repository = SandboxPolicy.executing(plain)
    assert walls(not_a_repository, Layer.LANDLOCK, []).read_only == ()


async def test_under_the_landlock_layer_a_writable_command_is_refused_with_the_reason(
    workspace: Path,
) -> None:
    from plancord.sandbox import landlock_abi

    if landlock_abi() == 0:
        pytest.skip("needs Landlock")
    policy = SandboxPolicy.executing(workspace, layer=LayerChoice.LANDLOCK)
    with pytest.raises(SandboxUnavailable, match="Landlock fallback"):
        await run_sandboxed(["touch", "ran"], policy, timeout=20)
    assert not (workspace / "ran").exists()
    host_git = await run_sandboxed(
        ["git", "status", "--short"], policy.for_host_git(), timeout=20, merge_stderr=True
    )
    assert host_git.exit_code == 0, host_git.stdout


def _in(workspace: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=workspace, check=True, capture_output=True, text=True
    ).stdout


@needs_bubblewrap
async def test_inside_git_reads_but_cannot_write_any_git_directory(workspace: Path) -> None:
    policy = SandboxPolicy.executing(workspace)
    base = _in(workspace, "rev-parse", "main")
    script = (
        "git log --oneline | wc -l; echo changed > app.py; echo ok-worktree; "
        "git update-ref refs/heads/main HEAD~0 2>&1 | tail -1; "
        "git -C vendor/lib tag planted 2>&1; "
        "git -C tools tag planted 2>&1; "
        "echo x > .git/hooks/post-checkout; mv .git gone 2>&1; echo done"
    )
    result = await run_sandboxed(
        ["bash", "-c", script], policy, timeout=30, merge_stderr=True, extra_env=IDENTITY
    )
    assert result.stdout.splitlines()[:2] == ["1", "ok-worktree"]
    assert result.stdout.count("Read-only file system") >= 3
    assert "Device or resource busy" in result.stdout
    assert (workspace / "app.py").read_text() == "changed\n"
    assert _in(workspace, "rev-parse", "main") == base
    assert _in(workspace / "vendor" / "lib", "tag") == ""
    assert _in(workspace / "store" / "tool", "tag") == ""
    assert not (workspace / ".git" / "hooks" / "post-checkout").exists()
    assert result.git_read_only == (
        f"{workspace}/.git",
        f"{workspace}/store/tool/.git",
        f"{workspace}/vendor/lib/.git",
    )


@needs_bubblewrap
async def test_the_host_s_git_writes_and_honours_no_attributes_file(workspace: Path) -> None:
    (workspace / ".git" / "info").mkdir(exist_ok=True)
    (workspace / ".git" / "info" / "attributes").write_text("* -diff\n")
    (workspace / "app.py").write_text("print(2)\n")
    policy = SandboxPolicy.executing(workspace).for_host_git()

    diff = await run_sandboxed(["git", "diff"], policy, timeout=30)
    commit = await run_sandboxed(
        ["git", "commit", "-qam", "two"], policy, timeout=30, extra_env=IDENTITY
    )

    assert "+print(2)" in diff.stdout and "Binary" not in diff.stdout
    assert commit.exit_code == 0, commit.stderr
    assert _in(workspace, "log", "-1", "--format=%s").strip() == "two"
    assert (workspace / ".git" / "info" / "attributes").read_text() == "* -diff\n"


def _stored(workspace: Path, text: str) -> str:
    return subprocess.run(
        ["git", "hash-object", "-w", "--stdin"],
        cwd=workspace,
        input=text,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()


@needs_bubblewrap
async def test_the_host_s_git_ignores_replace_refs_and_sparse_settings(workspace: Path) -> None:
    harmless = _stored(workspace, "harmless\n")
    real = _in(workspace, "rev-parse", "HEAD:app.py").strip()
    _in(workspace, "replace", real, harmless)
    _in(workspace, "config", "core.sparseCheckout", "true")
    (workspace / ".git" / "info").mkdir(exist_ok=True)
    (workspace / ".git" / "info" / "sparse-checkout").write_text("/nothing\n")
    policy = SandboxPolicy.executing(workspace).for_host_git()

    shown = await run_sandboxed(["git", "show", "HEAD:app.py"], policy, timeout=30)
    # With the sparse settings honoured, this removes app.py and marks it skip-worktree.
    checkout = await run_sandboxed(
        ["git", "read-tree", "-m", "-u", "HEAD"], policy, timeout=30, merge_stderr=True
    )

    assert _in(workspace, "show", "HEAD:app.py") == "harmless\n"  # what git would show
    assert shown.stdout == "print(1)\n"
    assert checkout.exit_code == 0, checkout.stdout
    assert (workspace / "app.py").read_text() == "print(1)\n"
    assert _in(workspace, "ls-files", "-t", "app.py") == "H app.py\n"


def test_redirecting_git_variables_reach_only_the_host_s_git(tmp_path: Path) -> None:
    extra = {
        **IDENTITY,
        "GIT_DIR": "/elsewhere",
        "GIT_INDEX_FILE": "/w/.git/other.index",
        "GIT_NO_REPLACE_OBJECTS": "0",
        "LANG": "C",
    }
    agent = sandbox_environment(tmp_path, "/tmp", extra)
    host = sandbox_environment(tmp_path, "/tmp", extra, host_git=True)
    assert "GIT_DIR" not in agent and "GIT_INDEX_FILE" not in agent
    assert agent["GIT_AUTHOR_NAME"] == "t" and agent["LANG"] == "C"
    assert host["GIT_INDEX_FILE"] == "/w/.git/other.index"
    for environment in (agent, host):
        assert environment["GIT_NO_REPLACE_OBJECTS"] == "1"
        assert environment["GIT_ATTR_NOSYSTEM"] == "1"


def test_an_mcp_server_sees_the_git_directories_read_only(workspace: Path) -> None:
    if layers.bubblewrap_problem() is not None:
        pytest.skip("needs the bubblewrap layer")
    policy = SandboxPolicy.executing(workspace)
    spawned = server_spawn(["true"], policy)
    assert spawned.argv[:2] == ["bwrap", "--args"]
    # The options as bubblewrap reads them, from the memory file it is given.
    options = os.pread(int(spawned.argv[2]), 1 << 20, 0).decode().split("\0")
    spawned.cleanup()
    argv = ["bwrap", *options[:-1], *spawned.argv[3:]]
    at = argv.index("--bind", argv.index("--tmpfs"))
    assert (
        argv[at : at + 6]
        == ["--bind", str(workspace), str(workspace), "--ro-bind"] + [f"{workspace}/.git"] * 2
    )


def _result(output: str, exit_code: int = 128, *, walled: bool = True) -> ProcessResult:
    return ProcessResult(
        exit_code=exit_code,
        stdout=output,
        stderr="",
        timed_out=False,
        truncated=False,
        layer=Layer.BUBBLEWRAP,
        read_only=False,
        git_read_only=("/w/.git",) if walled else (),
    )


@pytest.mark.parametrize(
    "output",
    [
        "fatal: Unable to create '/w/.git/index.lock': Read-only file system",
        "error: cannot lock ref 'refs/replace/ab': unable to create directory for "
        ".git/refs/replace/ab",
        "bash: line 1: .git/hooks/pre-commit: Read-only file system",
        "error: unable to create temporary file: Read-only file system",
    ],
)
def test_a_failed_git_write_names_the_git_tools(output: str) -> None:
    shown = format_shell_result(_result(output), 60, walled=False)
    assert shown.is_error
    assert shown.content.endswith(GIT_WRITE_REFUSED)
    assert shown.content.count("\n") == output.count("\n") + 2


@pytest.mark.parametrize(
    ("output", "exit_code", "walled"),
    [
        ("touch: cannot touch '/usr/x': Read-only file system", 1, True),
        ("fatal: Unable to create '/w/.git/index.lock': Read-only file system", 0, True),
        ("fatal: Unable to create '/w/.git/index.lock': Read-only file system", 128, False),
    ],
)
def test_other_failures_get_no_git_hint(output: str, exit_code: int, walled: bool) -> None:
    shown = format_shell_result(_result(output, exit_code, walled=walled), 60, walled=False)
    assert GIT_WRITE_REFUSED not in shown.content
