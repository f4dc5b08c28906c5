"""A repository's config never makes an agent's git run a program: through the real bot.

Each variant below got past plancord's own reading of ``.git/config`` while git obeyed it.
Each names a clean filter for every file (plancord used to switch off only the drivers its
own parser found); the program kills the git that runs it, so whether it ran shows even
from a read-only sandbox: the ``git_status`` tool (read-only, never asks) fails. Each
variant is first shown to work: plain git on the host, in the same workspace, is killed.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from plancord.sandbox import Layer, LayerChoice, choose_layer
from plancord.testing.anthropic_server import ToolCall, text_turn, tool_turn
from tests.security.hostile import Hostile

pytestmark = pytest.mark.skipif(
    choose_layer(LayerChoice.AUTO) is not Layer.BUBBLEWRAP,
    reason="hiding a repository's config needs bubblewrap; elsewhere the run is refused",
)


def _killer(root: Path) -> Path:
    program = root / "kill-git.sh"
    program.write_text("#!/bin/sh\nkill -KILL $PPID\n")
    program.chmod(0o755)
    return program


def _append(path: Path, text: str) -> None:
    with path.open("a") as handle:
        handle.write(text)


def _filter(killer: Path) -> str:
    return f'[filter "x"]\n\tclean = {killer}\n'


def _every_file_filtered(ws: Path) -> None:
    """Every file goes through filter ``x``; a tracked file is rewritten as it was, so git
    must read it (through the filter) to know it did not change."""
    (ws / ".gitattributes").write_text("* filter=x\n")
    tracked = subprocess.run(
        ["git", "ls-files"], cwd=ws, capture_output=True, text=True, check=True
    ).stdout.split()
    path = ws / tracked[0]
    path.write_bytes(path.read_bytes())
    os.utime(path, (2_000_000_000, 2_000_000_000))


def two_headers_on_one_line(ws: Path, killer: Path) -> None:
    _append(ws / ".git" / "config", f'[alias] [filter "x"] clean = {killer}\n')


def include_through_proc_self_cwd(ws: Path, killer: Path) -> None:
    (ws / "evil.config").write_text(_filter(killer))
    _append(ws / ".git" / "config", "[include]\n\tpath = /proc/self/cwd/evil.config\n")


def include_with_a_trailing_comment(ws: Path, killer: Path) -> None:
    (ws / ".git" / "evil.config").write_text(_filter(killer))
    _append(ws / ".git" / "config", "[include]\n\tpath = evil.config ; a comment\n")


def config_over_one_mib(ws: Path, killer: Path) -> None:
    padding = "# padding\n" * (120 * 1024)
    _append(ws / ".git" / "config", padding + _filter(killer))


def nineteen_includes(ws: Path, killer: Path) -> None:
    lines = []
    for index in range(19):
        (ws / ".git" / f"inc{index}").write_text(
            _filter(killer) if index == 18 else "[user]\n\tname = x\n"
        )
        lines.append(f"\tpath = inc{index}\n")
    _append(ws / ".git" / "config", "[include]\n" + "".join(lines))


VARIANTS: dict[str, Callable[[Path, Path], None]] = {
    "two section headers on one line": two_headers_on_one_line,
    "an include through /proc/self/cwd": include_through_proc_self_cwd,
    "an include path with a trailing comment": include_with_a_trailing_comment,
    "a config over 1 MiB": config_over_one_mib,
    "more than 18 includes": nineteen_includes,
}


def _host_git(ws: Path, *args: str) -> int:
    env = {"PATH": os.environ["PATH"], "HOME": str(ws.parent), "GIT_CONFIG_NOSYSTEM": "1"}
    return subprocess.run(
        ["git", *args], cwd=ws, env=env, capture_output=True, check=False, timeout=30
    ).returncode


async def _status_through_the_bot(hostile: Any) -> tuple[Hostile, Callable[[], Any]]:
    scene: Hostile = await hostile(
        [tool_turn(ToolCall("git_status", {})), text_turn("done")], profile="standard"
    )

    async def play() -> str:
        await scene.ana.send(scene.channel, "what is the state of the repository?")
        [result] = scene.tool_results()
        return result

    return scene, play


@pytest.mark.parametrize("variant", VARIANTS.values(), ids=VARIANTS.keys())
async def test_a_config_git_obeys_runs_nothing_from_git_status(
    hostile: Any, tmp_path: Path, variant: Callable[[Path, Path], None]
) -> None:
    scene, play = await _status_through_the_bot(hostile)
    variant(scene.workspace, _killer(scene.workspace / ".git"))
    _every_file_filtered(scene.workspace)
    result = await play()
    assert "## " in result, result
    assert await asyncio.to_thread(_host_git, scene.workspace, "status") == -9


async def test_a_git_file_pointing_elsewhere_is_refused(hostile: Any, tmp_path: Path) -> None:
    scene, play = await _status_through_the_bot(hostile)
    elsewhere = tmp_path / "elsewhere"
    await asyncio.to_thread(subprocess.run, ["git", "init", "-q", str(elsewhere)], check=True)
    _append(elsewhere / ".git" / "config", f"[core]\n\tfsmonitor = {_killer(tmp_path)}\n")
    dot_git = scene.workspace / ".git"
    await asyncio.to_thread(subprocess.run, ["rm", "-rf", str(dot_git)], check=True)
    dot_git.write_text(f"gitdir: {elsewhere / '.git'}\n")
    result = await play()
    assert "not a worktree plancord made" in result
    assert await asyncio.to_thread(_host_git, scene.workspace, "status") == -9


async def test_a_commondir_is_refused(hostile: Any, tmp_path: Path) -> None:
    scene, play = await _status_through_the_bot(hostile)
    other = tmp_path / "other"
    await asyncio.to_thread(subprocess.run, ["git", "init", "-q", str(other)], check=True)
    _append(other / ".git" / "config", _filter(_killer(tmp_path)))
    _every_file_filtered(scene.workspace)
    (scene.workspace / ".git" / "commondir").write_text(str(other / ".git"))
    result = await play()
    assert "commondir" in result
    assert await asyncio.to_thread(_host_git, scene.workspace, "status") == -9


def _signed(kind: str) -> str:
    """A script that adds a commit signed with a ``kind`` armour, on the branch ``signed``."""
    return (
        "git cat-file commit HEAD | awk '{print} /^committer /{print \"gpgsig -----BEGIN "
        f'{kind}-----"; print " x"; print " -----END {kind}-----"}}\' | '
        "git hash-object -t commit -w --stdin | xargs git update-ref refs/heads/signed"
    )


@pytest.mark.parametrize(
    ("kind", "config"),
    [
        ("PGP SIGNATURE", "[gpg]\n\tprogram = {killer}\n"),
        ("PGP SIGNATURE", '[gpg "openpgp"]\n\tprogram = {killer}\n'),
        ("SIGNED MESSAGE", '[gpg "x509"]\n\tprogram = {killer}\n'),
        (
            "SSH SIGNATURE",
            '[gpg "ssh"]\n\tprogram = {killer}\n\tallowedSignersFile = /dev/null\n',
        ),
    ],
    ids=["gpg.program", "gpg.openpgp.program", "gpg.x509.program", "gpg.ssh.program"],
)
async def test_a_pretty_alias_of_a_signature_check_runs_no_signing_program(
    hostile: Any, tmp_path: Path, kind: str, config: str
) -> None:
    command = "git log -1 --pretty=sig signed"
    scene: Hostile = await hostile(
        [tool_turn(ToolCall("bash_execute", {"command": command})), text_turn("done")]
    )
    ws = scene.workspace
    await asyncio.to_thread(subprocess.run, ["bash", "-c", _signed(kind)], cwd=ws, check=True)
    pretty = "[pretty]\n\tsig = %G?\n"
    _append(ws / ".git" / "config", pretty + config.format(killer=_killer(ws / ".git")))
    await scene.ana.send(scene.channel, "is the last commit signed?")
    [result] = scene.tool_results()
    # The alias is not on the allow-list: git inside never heard of it, and ran nothing.
    assert "invalid --pretty format: sig" in result, result
    assert "[exit code 137]" not in result
    assert await asyncio.to_thread(_host_git, ws, "log", "-1", "--pretty=sig", "signed") == -9
