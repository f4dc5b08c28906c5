"""``/agent create path:`` puts an agent to work in an existing repository or folder, but
only under the operator's ``workspace_roots``: a path outside them, a symlink inside a root
that points out of it, or plancord's own agents folder are refused and nothing is created."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.discord_bot.agent_scene import Scene, SceneFactory
from tests.fakes.anthropic_server import ToolCall, text_turn, tool_turn
from tests.requests_seen import last_user


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, check=True
    ).stdout


def make_repo(path: Path) -> Path:
    path.mkdir(parents=True)
    git(path, "init", "-q")
    (path / "README.md").write_text("# existing project\n")
    git(path, "add", "README.md")
    git(path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "first")
    return path


async def test_an_agent_works_in_an_existing_repository(
    scene_factory: SceneFactory, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "projects" / "site")
    scene: Scene = await scene_factory(
        [tool_turn(ToolCall("view", {"path": "README.md"})), text_turn("It is the site.")]
    )
    scene.app.manager.workspace_roots = [tmp_path / "projects"]

    result = await scene.ana.slash(scene.lobby, "agent create", name="ada", path=str(repo))
    assert result.response.content.startswith("Created agent"), result.response.content
    channel = scene.channel("ada")
    await scene.ana.send(channel, "what is this?")

    assert "# existing project" in last_user(scene.server.requests[1])["content"][0]["content"]
    assert scene.bot_texts(channel)[-1] == "It is the site."
    assert git(repo, "log", "--format=%s").splitlines() == ["first"]


async def test_paths_outside_the_roots_are_refused(
    scene_factory: SceneFactory, tmp_path: Path
) -> None:
    make_repo(tmp_path / "secret")
    projects = tmp_path / "projects"
    projects.mkdir()
    (projects / "sneaky").symlink_to(tmp_path / "secret", target_is_directory=True)
    scene: Scene = await scene_factory()
    scene.app.manager.workspace_roots = [projects]
    agents_dir = scene.app.manager.agents_dir

    for name, path, reason in (
        ("a1", str(tmp_path / "secret"), "not under an allowed workspace root"),
        ("a2", str(projects / "sneaky"), "not under an allowed workspace root"),
        ("a3", str(projects / ".." / "secret"), "not under an allowed workspace root"),
        ("a4", "projects", "absolute path"),
        ("a5", str(projects / "missing"), "not an existing directory"),
    ):
        result = await scene.ana.slash(scene.lobby, "agent create", name=name, path=path)
        content = result.response.content if result.response else result.followups[-1].content
        assert reason in content, (name, content)
        assert not (agents_dir / name).exists()
        assert name not in scene.guild.channels

    scene.app.manager.workspace_roots = [agents_dir.parent]
    result = await scene.ana.slash(scene.lobby, "agent create", name="a6", path=str(agents_dir))
    content = result.response.content if result.response else result.followups[-1].content
    assert "overlaps plancord's own agents folder" in content
