"""A Push's sandbox: the remote the one writable place (exactly, in mount order), what a
process inside can and cannot write, the remote's config always shown allow-listed and its
hooks hidden, the remotes refused and why, and ``receive-pack``'s own command line beating
the remote's config on its own."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from plancord.core.sandbox_policy import HOST_NETWORK, Layer, LayerChoice, Limits, SandboxPolicy
from plancord.sandbox import SandboxUnavailable, layers, remote_view, run_sandboxed
from plancord.sandbox.argv import HostLayout, bwrap_argv, landlock_argv
from plancord.sandbox.process_run import ProcessResult

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
needs_bubblewrap = pytest.mark.skipif(
    layers.bubblewrap_problem() is not None, reason="needs the bubblewrap layer"
)


def _git(*args: str, cwd: Path | None = None) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True)
    return done.stdout


@pytest.fixture
def world(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A workspace repository with a commit, and a bare ``team.git`` in a shared directory
    (real paths)."""
    root = Path(os.path.realpath(tmp_path))
    workspace, shared = root / "workspace", root / "shared"
    workspace.mkdir()
    shared.mkdir()
    _git("init", "--quiet", "--initial-branch=main", cwd=workspace)
    (workspace / "app.py").write_text("print(1)\n")
    _git("add", "app.py", cwd=workspace)
    _git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one", cwd=workspace)
    remote = shared / "team.git"
    _git("init", "--quiet", "--bare", str(remote))
    return workspace, shared, remote


def _push_policy(workspace: Path, shared: Path, remote: Path | None) -> SandboxPolicy:
    executing = SandboxPolicy.executing(workspace, shared=(shared,), network=HOST_NETWORK)
    return executing.for_host_git().for_push(remote)


def test_a_push_binds_the_workspace_read_only_and_the_remote_writable_after_it() -> None:
    policy = SandboxPolicy.executing(
        Path("/w"), limits=LIMITS, shared=(Path("/s"),), network=HOST_NETWORK
    ).for_push(Path("/s/team.git"))
    argv = bwrap_argv(
        policy, HOST, ["git"], covers=(("/views/remote-config", "/s/team.git/config"),)
    )

    assert "--unshare-net" in argv
    assert argv[argv.index("--tmpfs") + 2 :] == [
        "--ro-bind", "/s", "/s",
        "--ro-bind", "/w", "/w",
        "--bind", "/s/team.git", "/s/team.git",
        "--ro-bind", "/views/remote-config", "/s/team.git/config",
        "--chdir", "/w", "--",
        *PRLIMIT, "--",
        "git",
    ]  # fmt: skip


def test_a_push_elsewhere_keeps_the_agents_network_and_writes_nothing() -> None:
    policy = SandboxPolicy.executing(Path("/w"), limits=LIMITS, network=HOST_NETWORK).for_push(None)
    argv = bwrap_argv(policy, HOST, ["git"])
    assert "--unshare-net" not in argv
    assert "--bind" not in argv
    assert not policy.writable and not policy.git_writable


def test_the_landlock_fallback_writes_only_the_remote() -> None:
    policy = SandboxPolicy.executing(Path("/w"), shared=(Path("/s"),)).for_push(Path("/s/r"))
    argv = landlock_argv(policy, HOST, ["git"], private_tmp="/t")
    writes = [argv[i + 1] for i, part in enumerate(argv) if part == "--write"]
    assert writes == ["/t", "/s/r"]


def test_reading_a_push_policy_drops_the_remote() -> None:
    policy = SandboxPolicy.executing(Path("/w"), shared=(Path("/s"),)).for_push(Path("/s/r"))
    assert policy.for_reading().remote is None


@needs_bubblewrap
async def test_inside_a_push_only_the_remote_can_be_written(
    world: tuple[Path, Path, Path],
) -> None:
    workspace, shared, remote = world
    config = (workspace / ".git" / "config").read_bytes()
    attempts = (
        f"git --git-dir={workspace}/.git config core.fsmonitor 'touch /x' && echo config-written; "
        f"git --git-dir={workspace}/.git update-ref refs/heads/evil HEAD && echo ref-written; "
        f"touch {workspace}/evil.sh && echo workspace-written; "
        f"touch {shared}/beside && echo shared-written; "
        f"touch {remote}/objects/mine && echo remote-written"
    )

    result = await run_sandboxed(
        ["bash", "-c", attempts], _push_policy(workspace, shared, remote), timeout=30
    )

    assert result.stdout.split() == ["remote-written"], result
    assert (workspace / ".git" / "config").read_bytes() == config
    assert not (workspace / "evil.sh").exists()
    assert _git("for-each-ref", "refs/heads/evil", cwd=workspace) == ""


@needs_bubblewrap
async def test_the_remotes_config_is_always_its_allow_listed_view_and_its_hooks_are_hidden(
    world: tuple[Path, Path, Path],
) -> None:
    workspace, shared, remote = world
    (remote / "hooks" / "pre-receive").write_text("#!/bin/sh\nexit 0\n")
    _git("--git-dir", str(remote), "config", "core.fsmonitor", "touch /x")
    show = f"git --git-dir={remote} config --list --show-scope; ls -A {remote}/hooks; echo end"

    result = await run_sandboxed(
        ["bash", "-c", show], _push_policy(workspace, shared, remote), timeout=30
    )

    assert "fsmonitor" not in result.stdout
    assert "local\tcore.bare=true" in result.stdout
    assert result.stdout.rstrip().endswith("end") and "pre-receive" not in result.stdout


def test_without_bubblewrap_a_remote_whose_config_names_a_program_is_refused(
    world: tuple[Path, Path, Path],
) -> None:
    workspace, shared, remote = world
    listing = b"local\0file:config\0core.bare\ntrue\0local\0file:config\0core.fsmonitor\nx\0"

    def read(policy: SandboxPolicy, git_dir: Path) -> ProcessResult:
        assert git_dir == remote and policy.remote is None and not policy.writable
        return ProcessResult(0, listing.decode(), "", False, False, Layer.LANDLOCK, True)

    policy = _push_policy(workspace, shared, remote)
    with pytest.raises(SandboxUnavailable, match=r"sets core\.fsmonitor"):
        remote_view.covers(policy, Layer.LANDLOCK, read, None)
    allowed = b"local\0file:config\0core.bare\ntrue\0"

    def read_allowed(policy: SandboxPolicy, git_dir: Path) -> ProcessResult:
        return ProcessResult(0, allowed.decode(), "", False, False, Layer.LANDLOCK, True)

    assert remote_view.covers(policy, Layer.LANDLOCK, read_allowed, None) == ((), None)


def test_where_a_remote_may_not_be_written(world: tuple[Path, Path, Path], tmp_path: Path) -> None:
    workspace, shared, remote = world
    policy = _push_policy(workspace, shared, remote)
    assert remote_view.checked(policy, remote) is None
    inside = workspace / "nested.git"
    inside.mkdir()
    assert "inside the agent's workspace" in (remote_view.checked(policy, inside) or "")
    assert "holds the agent's workspace" in (
        remote_view.checked(_push_policy(workspace, workspace.parent, None), workspace.parent) or ""
    )
    elsewhere = Path(os.path.realpath(tmp_path)) / "elsewhere.git"
    elsewhere.mkdir()
    assert "outside the directories shared" in (remote_view.checked(policy, elsewhere) or "")
    link = shared / "link.git"
    link.symlink_to(remote)
    assert "symbolic link" in (remote_view.checked(policy, link) or "")
    kept = SandboxPolicy.executing(
        workspace, shared=(shared,), read_only_shared=(shared,)
    ).for_push(remote)
    assert "the current step does not name" in (remote_view.checked(kept, remote) or "")


def test_remotes_that_send_git_elsewhere_are_refused(world: tuple[Path, Path, Path]) -> None:
    workspace, shared, remote = world
    assert remote_view.repository(remote).directory == remote
    (remote / "commondir").write_text(f"{workspace}/.git\n")
    with pytest.raises(SandboxUnavailable, match="commondir"):
        remote_view.repository(remote)
    (remote / "commondir").unlink()
    (remote / ".git").write_text(f"gitdir: {workspace}/.git\n")
    with pytest.raises(SandboxUnavailable, match="a link or a file"):
        remote_view.repository(remote)
    (remote / ".git").unlink()
    hooks = remote / "hooks"
    hooks.rename(remote / "old-hooks")
    hooks.symlink_to(workspace)
    with pytest.raises(SandboxUnavailable, match="hooks is a symbolic link"):
        remote_view.repository(remote)
    with pytest.raises(SandboxUnavailable, match="is not a git repository"):
        remote_view.repository(shared)


def test_receive_packs_command_line_beats_the_remotes_own_hooks_path(
    world: tuple[Path, Path, Path],
) -> None:
    """The third wall alone, with no sandbox: a remote whose config points
    ``core.hooksPath`` at a hook still runs none, started as :func:`receive_pack` says."""
    workspace, shared, remote = world
    hooks = shared / "planted"
    hooks.mkdir()
    for name in ("pre-receive", "update", "reference-transaction", "post-receive"):
        (hooks / name).write_text(f"#!/bin/sh\ntouch {shared}/ran-{name}\ncat >/dev/null\n")
        (hooks / name).chmod(0o755)
    _git("--git-dir", str(remote), "config", "core.hooksPath", str(hooks))
    pack = remote_view.receive_pack()
    _git(
        "push", "--quiet", f"--receive-pack={pack}", str(remote), "main:refs/heads/a", cwd=workspace
    )
    assert sorted(p.name for p in shared.glob("ran-*")) == []
    _git("push", "--quiet", str(remote), "main:refs/heads/b", cwd=workspace)
    assert (shared / "ran-pre-receive").exists(), "the control push runs the planted hooks"


def test_layer_choice_is_kept_for_a_push() -> None:
    policy = SandboxPolicy.executing(Path("/w"), layer=LayerChoice.OFF).for_push(Path("/r"))
    assert policy.layer is LayerChoice.OFF


def test_the_remote_is_bound_by_the_descriptor_checked() -> None:
    policy = SandboxPolicy.executing(Path("/w"), limits=LIMITS).for_push(Path("/s/team.git"))
    argv = bwrap_argv(policy, HOST, ["git"], remote_fd=7)
    assert argv[argv.index("--bind-fd") : argv.index("--bind-fd") + 3] == [
        "--bind-fd",
        "7",
        "/s/team.git",
    ]
    assert "--bind" not in argv


def test_a_remote_is_opened_only_where_its_path_leads_without_a_link(
    world: tuple[Path, Path, Path],
) -> None:
    workspace, shared, remote = world
    fd = remote_view.opened(remote)
    try:
        assert os.readlink(f"/proc/self/fd/{fd}") == str(remote)
    finally:
        os.close(fd)
    link = shared / "link.git"
    link.symlink_to(workspace / ".git")
    with pytest.raises(SandboxUnavailable, match="without a symbolic link"):
        remote_view.opened(link)
    (shared / "sub").mkdir()
    with pytest.raises(SandboxUnavailable, match="moved while the push started"):
        remote_view.opened(shared / "sub" / ".." / "team.git")
