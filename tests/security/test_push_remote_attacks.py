"""A remote the agent can write runs nothing of its own at Push, and a Push writes nothing
but the remote.

Each scenario runs through the real bot under SimCord with a scripted model: a plan is
executed to its completion card, then an ordinary turn of the agent (after the card, when
the shared directory is writable to it) plants hooks for the bare remote ``team.git`` that
lies in ``sandbox.shared_paths``: ``pre-receive``, ``update``, ``reference-transaction`` and
``post-receive`` in the remote's own ``hooks``, or the same hooks in the workspace with the
remote's config pointing ``core.hooksPath`` at them. Each hook, if it ran, would leave a
marker in the remote, set ``core.fsmonitor`` in the workspace's git config (which a
person's later ``git status`` would run outside any sandbox) and move ``main`` to a commit
of its own. Then a human clicks Push, or the agent calls its own ``git_push``: the branch
reaches the remote, no hook ran, and the workspace's git config and refs are as they were.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from plancord.core.execution import ResultState
from plancord.sandbox import layers
from tests.discord_bot.result_card.completed import completed, git, record, reply, result_card
from tests.fakes.anthropic_server import ToolCall, text_turn, tool_turn
from tests.world import PlanScene, Worlds, plan_scene_in

needs_bubblewrap = pytest.mark.skipif(
    layers.bubblewrap_problem() is not None, reason="needs the bubblewrap layer"
)

HOOKS = ("pre-receive", "update", "reference-transaction", "post-receive")


@pytest.fixture
async def plan_scene(worlds: Worlds) -> Callable[..., Any]:
    async def make(script: Any = (), **options: Any) -> PlanScene:
        return await plan_scene_in(await worlds.start(script, **options))

    return make


def _hook(remote: Path, name: str) -> str:
    """A hook as the agent's shell writes it (in an unquoted here-document run in the
    workspace, so ``$PWD`` is the workspace): a marker in the remote, an fsmonitor in the
    workspace's config, ``main`` moved to a commit of the hook's own."""
    return (
        "#!/bin/sh\n"
        f'touch "{remote}/ran-{name}"\n'
        'git --git-dir="$PWD/.git" config core.fsmonitor '
        f'"touch {remote}/fsmonitor-ran"\n'
        'evil=\\$(git --git-dir="$PWD/.git" commit-tree -m evil '
        '"\\$(git --git-dir="$PWD/.git" rev-parse main^{tree})")\n'
        'git --git-dir="$PWD/.git" update-ref refs/heads/main "\\$evil"\n'
        "cat >/dev/null\n"
        "exit 0\n"
    )


def _plant(directory: str, remote: Path) -> str:
    """The agent's shell command writing every hook into ``directory``."""
    parts = [f'mkdir -p "{directory}"']
    for name in HOOKS:
        path = f"{directory}/{name}"
        parts.append(f'cat > "{path}" <<EOF\n{_hook(remote, name)}EOF\nchmod +x "{path}"')
    return "\n".join(parts)


def _bash(command: str) -> Any:
    return tool_turn(ToolCall("bash_execute", {"command": command}))


#: What the agent plants: hooks in the remote's ``hooks``; the same hooks in the workspace,
#: named by the remote's ``core.hooksPath``; a program the remote's config names
#: (``core.alternateRefsCommand``, which ``receive-pack`` runs for the alternates it
#: advertises) with an alternate leading to the workspace's objects.
PLANTS = ("remote-hooks", "hooks-path", "config-program")


def _planting(remote: Path, plant: str) -> Any:
    """The agent's turn after the card that plants ``plant`` (the shared directory is
    writable to it then)."""
    if plant == "hooks-path":
        command = _plant("$PWD/.hooks", remote)
        command += f'\ngit --git-dir="{remote}" config core.hooksPath "$PWD/.hooks"'
    elif plant == "config-program":
        command = _plant(f"{remote}/programs", remote)
        command += (
            f'\necho "$PWD/.git/objects" > "{remote}/objects/info/alternates"'
            f'\ngit --git-dir="{remote}" config core.alternateRefsCommand '
            f'"{remote}/programs/pre-receive"'
        )
    else:
        command = _plant(f"{remote}/hooks", remote)
    return _bash(command + "\necho planted")


def _bare(path: Path) -> None:
    subprocess.run(["git", "init", "--quiet", "--bare", str(path)], check=True)


def _remote_ref(remote: Path, branch: str) -> str:
    argv = ["git", "--git-dir", str(remote), "rev-parse", "--verify", "--quiet"]
    done = subprocess.run([*argv, f"refs/heads/{branch}"], capture_output=True, text=True)
    return done.stdout.strip()


def _git_state(workspace: Path) -> tuple[bytes, str]:
    """The workspace's git config, byte for byte, and every ref with its value."""
    refs = git(workspace, "for-each-ref", "--format=%(refname) %(objectname)")
    return (workspace / ".git" / "config").read_bytes(), refs


def _markers(remote: Path) -> list[str]:
    return sorted(path.name for path in (*remote.glob("ran-*"), *remote.glob("*-ran")))


def _tool_results(scene: PlanScene) -> list[str]:
    found: list[str] = []
    for message in scene.world.server.requests[-1]["messages"]:
        if message["role"] == "user" and isinstance(message["content"], list):
            for block in message["content"]:
                if block.get("type") == "tool_result":
                    found.append(str(block.get("content")))
    return found


async def _after_card(
    plan_scene: Any, tmp_path: Path, turns: Callable[[Path], tuple[Any, ...]]
) -> tuple[PlanScene, Path, Path, tuple[bytes, str]]:
    """The plan executed to its card with ``team.git`` (in the shared directory) as
    origin, and the workspace's git state then; ana's next message makes the agent take
    ``turns(remote)``."""
    shared = tmp_path / "shared"
    shared.mkdir()
    remote = shared / "team.git"
    _bare(remote)
    scene, workspace = await completed(
        plan_scene,
        prepare=lambda workspace: git(workspace, "remote", "add", "origin", str(remote)),
        config={"sandbox": {"shared_paths": [str(shared)]}},
        after=(*turns(remote), text_turn("Done.")),
    )
    before = _git_state(workspace)
    await scene.ana.send(scene.channel, "tidy up the team remote")
    await scene.app.runtime.wait_idle("ada")
    return scene, workspace, remote, before


async def _planted(
    plan_scene: Any, tmp_path: Path, plant: str, then: tuple[Any, ...] = ()
) -> tuple[PlanScene, Path, Path, tuple[bytes, str]]:
    """:func:`_after_card` with the agent planting ``plant``, then doing ``then``."""
    found = await _after_card(
        plan_scene, tmp_path, lambda remote: (_planting(remote, plant), *then)
    )
    scene, workspace, remote, _ = found
    planted = {"hooks-path": workspace / ".hooks", "config-program": remote / "programs"}
    where = planted.get(plant, remote / "hooks")
    assert all((where / name).is_file() for name in HOOKS), _tool_results(scene)
    return found


@needs_bubblewrap
@pytest.mark.parametrize("plant", PLANTS)
async def test_a_push_click_runs_no_hook_of_a_remote_the_agent_wrote(
    plan_scene: Any, tmp_path: Path, plant: str
) -> None:
    scene, workspace, remote, before = await _planted(plan_scene, tmp_path, plant)
    found = await record(scene)

    answer = await scene.ana.click(result_card(scene), label="Push")

    assert "Pushed" in reply(answer), reply(answer)
    assert _remote_ref(remote, found.branch) == found.result_commit
    assert _markers(remote) == []
    assert _git_state(workspace) == before
    assert git(workspace, "rev-parse", "main").strip() == found.base_commit


@needs_bubblewrap
@pytest.mark.parametrize("plant", PLANTS)
async def test_the_agents_git_push_runs_no_hook_of_a_remote_it_wrote(
    plan_scene: Any, tmp_path: Path, plant: str
) -> None:
    push = tool_turn(ToolCall("git_push", {"remote": "origin"}))
    scene, workspace, remote, before = await _planted(plan_scene, tmp_path, plant, then=(push,))
    found = await record(scene)

    pushed = _tool_results(scene)[-1]
    assert pushed.startswith(f"Pushed {found.branch} to origin."), pushed
    assert _remote_ref(remote, found.branch) == git(workspace, "rev-parse", found.branch).strip()
    assert _markers(remote) == []
    assert _git_state(workspace) == before
    assert git(workspace, "rev-parse", "main").strip() == found.base_commit


@needs_bubblewrap
async def test_a_remote_the_agent_turned_into_the_workspaces_git_directory_is_refused(
    plan_scene: Any, tmp_path: Path
) -> None:
    """After the card, the agent replaces the shared ``team.git`` with a link to the
    workspace's own git directory: the click is refused, naming where the remote leads,
    and nothing of the workspace's git state changes."""

    def swap(remote: Path) -> tuple[Any, ...]:
        return (_bash(f'rm -rf "{remote}" && ln -s "$PWD/.git" "{remote}" && echo swapped'),)

    scene, workspace, remote, before = await _after_card(plan_scene, tmp_path, swap)
    assert remote.is_symlink(), _tool_results(scene)

    answer = await scene.ana.click(result_card(scene), label="Push")

    said = reply(answer)
    assert said.startswith("Not pushed: the remote "), said
    assert f"{workspace.resolve() / '.git'} is inside the agent's workspace" in said
    assert _git_state(workspace) == before
    assert (await record(scene)).result is ResultState.WAITING
