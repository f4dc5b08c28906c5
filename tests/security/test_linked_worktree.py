"""An agent put to work in a linked worktree (``git worktree add``) of a human's repository,
end to end through the real bot: git in the sandbox finds the worktree's git directory,
which lies outside the workspace (git names it, and the runner mounts it and the
repository's common directory read-only), and no agent process can write there."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from plancord.core.planning import Actor
from plancord.sandbox import Layer, LayerChoice, choose_layer
from plancord.testing.anthropic_server import ToolCall, text_turn, tool_turn
from tests.security.hostile import Hostile

pytestmark = pytest.mark.skipif(
    choose_layer(LayerChoice.AUTO) is not Layer.BUBBLEWRAP,
    reason="a worktree's git directory is walled off by bubblewrap's read-only mounts",
)


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, check=True
    ).stdout


def _human_repository_with_a_worktree(projects: Path) -> tuple[Path, Path]:
    repository = projects / "site"
    repository.mkdir(parents=True)
    git(repository, "init", "-q", "-b", "main")
    (repository / "README.md").write_text("# the site\n")
    git(repository, "add", "README.md")
    git(repository, "-c", "user.name=h", "-c", "user.email=h@h", "commit", "-qm", "first")
    worktree = projects / "site-feature"
    git(repository, "worktree", "add", "-q", "-b", "feature", str(worktree))
    (worktree / "README.md").write_text("# the site, changed on the feature branch\n")
    return repository, worktree


async def test_git_works_in_a_linked_worktree_and_its_git_directory_stays_read_only(
    hostile: Any, tmp_path: Path
) -> None:
    scene: Hostile = await hostile([], profile="open")
    repository, worktree = _human_repository_with_a_worktree(tmp_path / "projects")
    app = scene.app
    app.manager.workspace_roots = [tmp_path / "projects"]
    channel = scene.guild.create_text_channel("wt")
    await app.manager.create(
        "wt",
        actor=Actor.user(scene.ana.id, "ana"),
        channel_id=channel.id,
        guild_id=scene.guild.id,
        profile="open",
        existing_workspace=str(worktree),
    )
    main_before = git(repository, "rev-parse", "refs/heads/main")
    pointer = (worktree / ".git").read_text()
    writes = (
        "git update-ref refs/heads/main HEAD; "
        'echo x > "$(git rev-parse --git-common-dir)/hooks/post-checkout"; '
        "echo gitdir: /etc > .git; "
        "git rev-parse --absolute-git-dir"
    )
    scene.world.server.add_turns(
        tool_turn(ToolCall("git_status", {})),
        tool_turn(ToolCall("bash_execute", {"command": "git status --short --branch"})),
        tool_turn(ToolCall("bash_execute", {"command": writes})),
        text_turn("done"),
    )
    await scene.ana.send(channel, "what changed on this branch?")

    status, shell_status, written = scene.tool_results()
    for result in (status, shell_status, written):
        assert not result.startswith("Not run"), result
    assert "feature" in shell_status and "README.md" in shell_status, shell_status
    assert "README.md" in status, status
    assert "Read-only file system" in written, written
    assert str(repository / ".git" / "worktrees" / "site-feature") in written, written
    assert git(repository, "rev-parse", "refs/heads/main") == main_before
    assert not (repository / ".git" / "hooks" / "post-checkout").exists()
    assert (worktree / ".git").read_text() == pointer
