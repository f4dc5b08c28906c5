"""The kept readings of repository configs and the kept walk for nested repositories, with
real git and the real sandbox: what is kept, what is read again, and what is never kept."""

from __future__ import annotations

import asyncio
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from plancord.sandbox import (
    LayerChoice,
    SandboxPolicy,
    SandboxUnavailable,
    config_cache,
    landlock_abi,
    nested,
    run_sandboxed,
    runner,
)


@pytest.fixture(autouse=True)
def reads(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    config_cache.VIEWS.clear()
    nested.forget()
    found: list[Path] = []
    read = runner._read_config

    def counted(policy: Any, root: Path) -> Any:
        found.append(root)
        return read(policy, root)

    monkeypatch.setattr(runner, "_read_config", counted)
    return found


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    return ws


async def true_in(ws: Path, layer: LayerChoice = LayerChoice.AUTO) -> None:
    policy = SandboxPolicy.read_only(ws, layer=layer)
    result = await run_sandboxed(["true"], policy, timeout=30)
    assert result.exit_code == 0, result.stderr


async def test_a_settled_config_is_read_once(
    repo: Path, reads: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(config_cache, "SETTLE_NS", 0)
    await true_in(repo)
    await true_in(repo)
    assert reads == [repo]


async def test_a_config_changed_just_before_the_reading_is_not_kept(
    repo: Path, reads: list[Path]
) -> None:
    """Coarse timestamps could hide a second write in the same tick: a file changed within
    the last second is read again next time."""
    with (repo / ".git" / "config").open("a") as handle:
        handle.write("[user]\n\tname = x\n")
    await true_in(repo)
    await true_in(repo)
    assert reads == [repo, repo]


async def test_every_change_to_a_file_git_read_reads_again(
    repo: Path, reads: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(config_cache, "SETTLE_NS", 0)
    (repo / ".git" / "extra").write_text("[user]\n\tname = x\n")
    with (repo / ".git" / "config").open("a") as handle:
        handle.write("[include]\n\tpath = extra\n")
    await true_in(repo)
    os.utime(repo / ".git" / "extra")
    await true_in(repo)
    (repo / ".git" / "HEAD").write_text("ref: refs/heads/other\n")
    await true_in(repo)
    await true_in(repo)
    assert reads == [repo] * 3


def test_a_walk_is_kept_until_a_directory_changes(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(config_cache, "SETTLE_NS", 0)
    (repo / "a" / "b").mkdir(parents=True)
    assert nested.repositories(repo) == ()
    walked: list[Path] = []
    walk = nested._walk

    def counted(workspace: Path) -> Any:
        walked.append(workspace)
        return walk(workspace)

    monkeypatch.setattr(nested, "_walk", counted)
    assert nested.repositories(repo) == ()
    assert walked == []
    subprocess.run(["git", "init", "-q", str(repo / "a" / "b")], check=True)
    assert nested.repositories(repo) == (repo / "a" / "b",)
    assert walked == [repo]


def test_a_workspace_too_large_to_walk_is_refused(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(nested, "MAX_DIRECTORIES", 3)
    for name in "abcd":
        (repo / name).mkdir()
    with pytest.raises(nested.TooManyDirectories, match="more than 3 directories"):
        nested.repositories(repo)


async def test_the_fallback_refuses_a_nested_repository_it_cannot_hide(tmp_path: Path) -> None:
    if landlock_abi() == 0:
        pytest.skip("the fallback needs Landlock")
    ws = tmp_path / "ws"
    ws.mkdir()
    await asyncio.to_thread(subprocess.run, ["git", "init", "-q", str(ws / "sub")], check=True)
    with (ws / "sub" / ".git" / "config").open("a") as handle:
        handle.write("[core]\n\tfsmonitor = /bin/false\n")
    with pytest.raises(SandboxUnavailable, match=r"config in sub sets core\.fsmonitor"):
        await true_in(ws, LayerChoice.LANDLOCK)


async def test_a_nested_git_directory_git_does_not_take_for_a_repository(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An empty ``sub/.git`` is no repository to git (it reads the workspace's config from
    there): the workspace's view still hides its keys, and nothing is bound over the
    ``sub/.git/config`` that does not exist."""
    with (repo / ".git" / "config").open("a") as handle:
        handle.write("[core]\n\tfsmonitor = /bin/false\n")
    (repo / "sub" / ".git").mkdir(parents=True)
    policy = SandboxPolicy.read_only(repo)
    command = ["git", "-C", "sub", "config", "--get-regexp", "^core[.](bare|fsmonitor)$"]
    result = await run_sandboxed(command, policy, timeout=30)
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "core.bare false\n"
