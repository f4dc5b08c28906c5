"""The kept config view and nested repositories, attacked through the real bot.

plancord keeps git's reading of a repository's config between runs while nothing git read
has changed (``config_cache``), and gives every repository nested in the workspace a view of
its own (``nested``). Each attack here changes what git would obey between two runs, or
hides it in a nested repository; the program it names kills the git that runs it. Each is
first shown to work: plain git on the host is killed, and through the bot with the part
under test switched off, the program runs.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from plancord.sandbox import (
    Layer,
    LayerChoice,
    choose_layer,
    config_cache,
    nested,
    runner,
)
from plancord.testing.anthropic_server import ToolCall, text_turn, tool_turn
from tests.security.hostile import Hostile

pytestmark = pytest.mark.skipif(
    choose_layer(LayerChoice.AUTO) is not Layer.BUBBLEWRAP,
    reason="hiding a repository's config needs bubblewrap; elsewhere the run is refused",
)


@pytest.fixture(autouse=True)
def fresh(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """No reading kept from other tests, files count as settled at once (the one-second
    rule is tested in tests/sandbox/test_config_cache.py), and every reading counted."""
    config_cache.VIEWS.clear()
    nested.forget()
    monkeypatch.setattr(config_cache, "SETTLE_NS", 0)
    reads: list[Path] = []
    read = runner._read_config

    def counted(policy: Any, root: Path) -> Any:
        reads.append(root)
        return read(policy, root)

    monkeypatch.setattr(runner, "_read_config", counted)
    return reads


def _killer(root: Path) -> Path:
    program = root / "kill-git.sh"
    program.write_text("#!/bin/sh\nkill -KILL $PPID\n")
    program.chmod(0o755)
    return program


def _filtered_files(ws: Path) -> None:
    """Every file of ``ws`` goes through filter ``x``, and git must run it on a tracked one."""
    (ws / ".gitattributes").write_text("* filter=x\n")
    tracked = subprocess.run(
        ["git", "ls-files"], cwd=ws, capture_output=True, text=True, check=True
    ).stdout.split()
    path = ws / tracked[0]
    path.write_bytes(path.read_bytes())
    os.utime(path, (2_000_000_000, 2_000_000_000))


def _host_git(ws: Path, *args: str) -> int:
    env = {"PATH": os.environ["PATH"], "HOME": str(ws.parent), "GIT_CONFIG_NOSYSTEM": "1"}
    return subprocess.run(
        ["git", *args], cwd=ws, env=env, capture_output=True, check=False, timeout=30
    ).returncode


async def _two_statuses(hostile: Any, fresh: list[Path]) -> tuple[Hostile, Callable[[], Any]]:
    """``git_status`` (read-only, never asks) once per message ana sends; ``fresh`` then
    counts the readings from the first on."""
    turns = [tool_turn(ToolCall("git_status", {})), text_turn("done")]
    scene: Hostile = await hostile(turns * 2, profile="standard")

    async def ask() -> str:
        await scene.ana.send(scene.channel, "what is the state of the repository?")
        return scene.tool_results()[-1]

    fresh.clear()

    return scene, ask


# -- a config changed between two runs ---------------------------------------------------


def _same_size_rewrite(config: Path, killer: Path) -> None:
    """Replace an allowed entry by a filter of the same size, and put mtime back: only
    ctime (and the content) tells the two apart."""
    before = config.stat()
    text = config.read_text()
    harmless = text[text.index("[user]") :]
    evil = f'[filter "x"]\n\tclean = {killer}\n'
    evil += "#" * (len(harmless) - len(evil) - 1) + "\n"
    assert len(evil) == len(harmless)
    with config.open("r+") as handle:
        handle.seek(text.index("[user]"))
        handle.write(evil)
    os.utime(config, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = config.stat()
    assert (after.st_size, after.st_mtime_ns, after.st_ino) == (
        before.st_size,
        before.st_mtime_ns,
        before.st_ino,
    )


def _prepare_rewrite(ws: Path) -> None:
    killer_path = str(ws / ".git" / "kill-git.sh")
    with (ws / ".git" / "config").open("a") as handle:
        handle.write("[user]\n\tname = " + "n" * (len(killer_path) + 40) + "\n")


async def _rewrite_attack(hostile: Any, fresh: list[Path]) -> tuple[str, str, Hostile]:
    scene, ask = await _two_statuses(hostile, fresh)
    ws = scene.workspace
    _prepare_rewrite(ws)
    first = await ask()
    killer = _killer(ws / ".git")
    _filtered_files(ws)
    _same_size_rewrite(ws / ".git" / "config", killer)
    second = await ask()
    return first, second, scene


async def test_a_same_size_same_mtime_rewrite_is_read_again(
    hostile: Any, fresh: list[Path]
) -> None:
    first, second, scene = await _rewrite_attack(hostile, fresh)
    assert "## " in first, first
    assert "## " in second, second
    assert len(fresh) == 2, fresh
    assert await asyncio.to_thread(_host_git, scene.workspace, "status") == -9


async def test_without_ctime_in_the_key_the_rewrite_would_run_its_program(
    hostile: Any, fresh: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The control: a key of size and mtime alone keeps the stale view, which hid nothing,
    so git reads the rewritten config and runs the filter."""
    stat = config_cache._stat

    def without_ctime(path: str) -> config_cache.Stat:
        found = stat(path)
        return None if found is None else (*found[:5], 0)

    monkeypatch.setattr(config_cache, "_stat", without_ctime)
    first, second, _ = await _rewrite_attack(hostile, fresh)
    assert "## " in first, first
    assert len(fresh) == 1, fresh
    assert "## " not in second, second


async def test_an_include_target_appearing_is_read_again(hostile: Any, fresh: list[Path]) -> None:
    scene, ask = await _two_statuses(hostile, fresh)
    ws = scene.workspace
    with (ws / ".git" / "config").open("a") as handle:
        handle.write("[include]\n\tpath = later.config\n")
    first = await ask()
    assert "## " in first, first
    killer = _killer(ws / ".git")
    (ws / ".git" / "later.config").write_text(f'[filter "x"]\n\tclean = {killer}\n')
    _filtered_files(ws)
    second = await ask()
    assert "## " in second, second
    assert len(fresh) == 2, fresh
    assert await asyncio.to_thread(_host_git, ws, "status") == -9


async def test_an_unchanged_config_is_read_once(hostile: Any, fresh: list[Path]) -> None:
    scene, ask = await _two_statuses(hostile, fresh)
    with (scene.workspace / ".git" / "config").open("a") as handle:
        handle.write('[remote "origin"]\n\turl = https://example.invalid/r.git\n')
    assert "## " in await ask()
    assert "## " in await ask()
    assert fresh == [scene.workspace]


async def test_an_include_through_proc_is_never_kept(hostile: Any, fresh: list[Path]) -> None:
    """``/proc/self/cwd`` means another directory on the host than in the sandbox: a reading
    that depends on it cannot be checked from outside, so it is made every time."""
    scene, ask = await _two_statuses(hostile, fresh)
    ws = scene.workspace
    (ws / "more.config").write_text("[user]\n\tname = x\n")
    with (ws / ".git" / "config").open("a") as handle:
        handle.write("[include]\n\tpath = /proc/self/cwd/more.config\n")
    assert "## " in await ask()
    assert "## " in await ask()
    assert len(fresh) == 2, fresh


# -- nested repositories ----------------------------------------------------------------


async def _nested_repository(ws: Path, *, submodule: bool) -> Path:
    """``ws/sub``: a repository of its own (or a submodule of ``ws``) whose config names a
    filter that kills git, with a tracked file git must pass through it."""
    sub = ws / "sub"

    def make() -> None:
        env = {
            **os.environ,
            "GIT_AUTHOR_NAME": "x",
            "GIT_AUTHOR_EMAIL": "x@example.invalid",
            "GIT_COMMITTER_NAME": "x",
            "GIT_COMMITTER_EMAIL": "x@example.invalid",
            "GIT_CONFIG_GLOBAL": "/dev/null",
        }
        source = ws.parent / "sub-source"
        subprocess.run(["git", "init", "-q", str(source)], check=True, env=env)
        (source / "f.txt").write_text("nested\n")
        subprocess.run(["git", "add", "."], cwd=source, check=True, env=env)
        subprocess.run(["git", "commit", "-qm", "one"], cwd=source, check=True, env=env)
        if submodule:
            add = ["submodule", "add", "-q", str(source), "sub"]
            subprocess.run(
                ["git", "-c", "protocol.file.allow=always", *add],
                cwd=ws,
                check=True,
                env=env,
            )
            config = ws / ".git" / "modules" / "sub" / "config"
        else:
            subprocess.run(["git", "clone", "-q", str(source), str(sub)], check=True, env=env)
            config = sub / ".git" / "config"
        killer = _killer(ws)
        with config.open("a") as handle:
            handle.write(f'[filter "x"]\n\tclean = {killer}\n')
        _filtered_files(sub)

    await asyncio.to_thread(make)
    return sub


NESTED_COMMANDS = {
    "git -C": "git -C sub status --short",
    "cd": "cd sub && git status --short",
}


@pytest.mark.parametrize("submodule", [False, True], ids=["own .git", "submodule"])
@pytest.mark.parametrize("command", NESTED_COMMANDS.values(), ids=NESTED_COMMANDS.keys())
async def test_a_nested_repository_gets_its_own_view(
    hostile: Any, fresh: list[Path], submodule: bool, command: str
) -> None:
    scene: Hostile = await hostile(
        [tool_turn(ToolCall("bash_execute", {"command": command})), text_turn("done")],
        profile="open",
    )
    sub = await _nested_repository(scene.workspace, submodule=submodule)
    await scene.ana.send(scene.channel, "what changed in sub?")
    [result] = scene.ran(1)
    assert "[exit code 137]" not in result, result
    assert "?? .gitattributes" in result, result
    assert sub in fresh
    assert await asyncio.to_thread(_host_git, sub, "status") == -9


async def test_without_the_nested_view_the_program_runs(
    hostile: Any, fresh: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The control: with nested repositories not looked for, the same command through the
    bot runs the nested repository's filter."""
    monkeypatch.setattr(nested, "repositories", lambda workspace: ())
    command = NESTED_COMMANDS["git -C"]
    scene: Hostile = await hostile(
        [tool_turn(ToolCall("bash_execute", {"command": command})), text_turn("done")],
        profile="open",
    )
    await _nested_repository(scene.workspace, submodule=False)
    await scene.ana.send(scene.channel, "what changed in sub?")
    [result] = scene.ran(1)
    assert "[exit code 137]" in result, result


async def test_a_nested_git_file_leading_outside_is_refused(
    hostile: Any, fresh: list[Path], tmp_path: Path
) -> None:
    scene: Hostile = await hostile(
        [tool_turn(ToolCall("bash_execute", {"command": "ls"})), text_turn("done")],
        profile="open",
    )
    elsewhere = tmp_path / "elsewhere"
    await asyncio.to_thread(subprocess.run, ["git", "init", "-q", str(elsewhere)], check=True)
    (scene.workspace / "sub").mkdir()
    (scene.workspace / "sub" / ".git").write_text(f"gitdir: {elsewhere / '.git'}\n")
    await scene.ana.send(scene.channel, "list the files")
    [result] = scene.tool_results()
    assert "not a worktree plancord made" in result, result
