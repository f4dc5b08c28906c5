"""A linked worktree (``git worktree add``, one per agent) as an agent's workspace, end to end
through the real bot with a scripted model: ``/agent create path:`` in the worktree writes
nothing into the shared repository's config (whose ``--local`` scope is every worktree's and
the human checkout's), a plan is explored and submitted there, and the agent's own commit
carries its identity in git's environment, on the worktree's branch only."""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path
from typing import Any

import pytest

from plancord.agent.host_io.git_run import agent_identity
from plancord.core.planning import Phase
from plancord.sandbox import Layer, LayerChoice, choose_layer
from tests.discord_bot.agent_scene import Scene, SceneFactory
from tests.fakes.anthropic_server import ToolCall, text_turn, tool_turn

pytestmark = pytest.mark.skipif(
    choose_layer(LayerChoice.AUTO) is not Layer.BUBBLEWRAP,
    reason="a worktree's git directory is mounted by bubblewrap",
)

PLAN: dict[str, Any] = {
    "summary": "Add a greeting module",
    "steps": [
        {"description": "Write greet.py", "tools": ["create_file"], "files": ["greet.py"]},
        {"description": "Commit it", "tools": ["git_commit"]},
    ],
}
GREET = 'def hello() -> str:\n    return "hello"\n'


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, check=True
    ).stdout.strip()


def repository_with_a_worktree(projects: Path) -> tuple[Path, Path]:
    """A human's repository (no user.name in its config) and a worktree of it on
    ``feature``, made as a team keeping one worktree per agent would."""
    repository = projects / "site"
    repository.mkdir(parents=True)
    git(repository, "init", "-q", "-b", "main")
    (repository / "README.md").write_text("# the site\n")
    git(repository, "add", "README.md")
    git(repository, "-c", "user.name=h", "-c", "user.email=h@h", "commit", "-qm", "first")
    worktree = projects / "site-ada"
    git(repository, "worktree", "add", "-q", "-b", "feature", str(worktree))
    return repository, worktree


def fingerprint(repository: Path) -> dict[str, str]:
    """The shared repository's config and every worktree's own config files, hashed."""
    common = repository / ".git"
    files = [common / "config", *sorted(common.glob("worktrees/*/config*"))]
    return {str(f): hashlib.sha256(f.read_bytes()).hexdigest() for f in files if f.is_file()}


async def agent_in_a_worktree(
    scene_factory: SceneFactory, tmp_path: Path, script: list[Any]
) -> tuple[Scene, Path, Path, Any, dict[str, str]]:
    repository, worktree = repository_with_a_worktree(tmp_path / "projects")
    before = fingerprint(repository)
    scene: Scene = await scene_factory(script)
    scene.app.manager.workspace_roots = [tmp_path / "projects"]
    channel = await scene.create_agent("ada", path=str(worktree), profile="open")
    return scene, repository, worktree, channel, before


async def test_creating_an_agent_in_a_worktree_writes_nothing_into_the_shared_config(
    scene_factory: SceneFactory, tmp_path: Path
) -> None:
    script = [
        tool_turn(ToolCall("bash_execute", {"command": "git status --short --branch"})),
        tool_turn(ToolCall("submit_plan", {"plan": PLAN})),
    ]
    scene, repository, worktree, channel, before = await agent_in_a_worktree(
        scene_factory, tmp_path, script
    )
    assert fingerprint(repository) == before
    assert "user." not in git(repository, "config", "--list", "--local")

    await scene.ana.slash(channel, "plan start", task="add a greeting module")

    assert (await scene.app.store.load_state("ada")).phase is Phase.SUBMITTED
    assert fingerprint(repository) == before
    assert git(worktree, "symbolic-ref", "--short", "HEAD") == "feature"


async def test_the_agents_commit_in_a_worktree_carries_its_identity_on_its_branch_only(
    scene_factory: SceneFactory, tmp_path: Path
) -> None:
    script = [
        tool_turn(ToolCall("create_file", {"path": "greet.py", "content": GREET})),
        tool_turn(ToolCall("git_commit", {"message": "Add greet.py"})),
        text_turn("Committed."),
    ]
    scene, repository, worktree, channel, before = await agent_in_a_worktree(
        scene_factory, tmp_path, script
    )
    main = git(repository, "rev-parse", "main")

    await scene.ana.send(channel, "add greet.py and commit it")

    assert scene.bot_texts(channel)[-1] == "Committed.", scene.bot_texts(channel)
    name, email = agent_identity("ada")
    assert git(worktree, "log", "-1", "--format=%an <%ae>|%cn <%ce>|%s", "feature") == (
        f"{name} <{email}>|{name} <{email}>|Add greet.py"
    )
    assert git(repository, "rev-parse", "main") == main
    assert not (repository / "greet.py").exists()
    assert fingerprint(repository) == before
