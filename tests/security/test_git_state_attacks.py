"""Git's state is the host's: an agent steered by an attacker, executing an approved plan,
cannot write the repository's git directory, so none of what it would do there reaches the
base branch, the card, Merge, Discard or the next person who types a git command.

Each scenario runs through the real bot under SimCord with a scripted model: a plan is
submitted and approved, and the step's ``bash_execute`` call makes the attack next to the
step's real change (``drift: log``, so nothing but the sandbox stands in the way). Where it
makes sense the same command is also run on a repository of the agent's own in its private
``/tmp``: git itself works, only the workspace's git directory is out of reach.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from plancord.agent.tools.shell import GIT_WRITE_REFUSED
from plancord.core.execution import ResultState
from plancord.sandbox import landlock_abi, layers
from tests.discord_bot.result_card.completed import (
    completed,
    diff_of,
    git,
    record,
    reply,
    result_card,
)
from tests.fakes.anthropic_server import ToolCall, text_turn, tool_turn
from tests.world import PlanScene, Worlds, plan_scene_in

needs_bubblewrap = pytest.mark.skipif(
    layers.bubblewrap_problem() is not None, reason="needs the bubblewrap layer"
)

ORIGINAL = "print(1)\n"
CHANGED = "print(2)\n"
#: The step's real change, made before each attack.
CHANGE = f"printf '{CHANGED}' > app.py; "
#: An attacker's commit on top of main, made with git's plumbing in the workspace.
EVIL_COMMIT = (
    'printf \'print("evil")\\n\' > "$TMPDIR/evil.py" && '
    'blob=$(git hash-object -w "$TMPDIR/evil.py") && '
    "tree=$(printf '100644 blob %s\\tapp.py\\n' \"$blob\" | git mktree) && "
    'evil=$(git -c user.name=x -c user.email=x@x commit-tree "$tree" -p main -m evil)'
)
#: The same kind of write on a repository the agent made in its private /tmp.
CONTROL = (
    'cd "$(mktemp -d)" && git init -q && git -c user.name=x -c user.email=x@x commit -q '
    "--allow-empty -m x && git update-ref refs/heads/other HEAD && git tag v1 && "
    "echo control-ok"
)


@pytest.fixture
async def plan_scene(worlds: Worlds) -> Callable[..., Any]:
    async def make(script: Any = (), **options: Any) -> PlanScene:
        return await plan_scene_in(await worlds.start(script, **options))

    return make


def _bash(command: str) -> Any:
    return tool_turn(ToolCall("bash_execute", {"command": command}))


def _work(*calls: Any) -> tuple[Any, ...]:
    return (
        *(_bash(call) if isinstance(call, str) else call for call in calls),
        tool_turn(ToolCall("complete_plan", {"summary": "changed"})),
        text_turn("Done."),
    )


def _human_git(workspace: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """git as a person at the terminal runs it: outside any sandbox, their own config."""
    return subprocess.run(
        ["git", *args], cwd=workspace, capture_output=True, text=True, check=False
    )


def _with_app(workspace: Path) -> None:
    """The reviewed repository: app.py committed on main, tagged v1."""
    (workspace / "app.py").write_text(ORIGINAL)
    env = {**os.environ, "GIT_AUTHOR_NAME": "ana", "GIT_AUTHOR_EMAIL": "ana@example.com"}
    env |= {"GIT_COMMITTER_NAME": "ana", "GIT_COMMITTER_EMAIL": "ana@example.com"}
    for args in (("add", "app.py"), ("commit", "-qm", "app"), ("tag", "v1")):
        subprocess.run(["git", *args], cwd=workspace, check=True, env=env, capture_output=True)


async def _attacked(plan_scene: Any, *commands: str, **options: Any) -> tuple[PlanScene, Path, str]:
    """The plan approved and executed with ``commands`` as its step's calls; the scene, the
    workspace and the commit main named when the plan was approved."""
    scene, workspace = await completed(
        plan_scene,
        work=_work(*commands),
        prepare=_with_app,
        plan_mode={"drift": "log"},
        **options,
    )
    return scene, workspace, (await record(scene)).base_commit


def _results(scene: PlanScene) -> list[str]:
    found: list[str] = []
    for message in scene.world.server.requests[-1]["messages"]:
        if message["role"] == "user" and isinstance(message["content"], list):
            for block in message["content"]:
                if block.get("type") == "tool_result":
                    found.append(str(block.get("content")))
    return found


async def _card_diff(scene: PlanScene) -> str:
    return (await diff_of(result_card(scene)).read()).decode()


@needs_bubblewrap
async def test_update_ref_of_the_base_does_not_move_it_and_discard_keeps_it(
    plan_scene: Any,
) -> None:
    scene, workspace, base = await _attacked(
        plan_scene, CHANGE + EVIL_COMMIT + ' && git update-ref refs/heads/main "$evil"', CONTROL
    )
    attack, control = _results(scene)[1:3]

    assert git(workspace, "rev-parse", "main").strip() == base
    assert GIT_WRITE_REFUSED in attack and "git_commit" in GIT_WRITE_REFUSED
    assert "control-ok" in control
    answer = await scene.ana.click(result_card(scene), label="Discard")
    assert "back at the reviewed state" in reply(answer)
    assert git(workspace, "rev-parse", "main").strip() == base
    assert (workspace / "app.py").read_text() == ORIGINAL


@needs_bubblewrap
async def test_update_ref_of_the_base_then_merge_takes_only_the_card_s_commit(
    plan_scene: Any,
) -> None:
    scene, workspace, base = await _attacked(
        plan_scene, CHANGE + EVIL_COMMIT + ' && git update-ref refs/heads/main "$evil"'
    )
    found = await record(scene)
    tip = git(workspace, "rev-parse", found.branch).strip()

    answer = await scene.ana.click(result_card(scene), label="Merge")

    assert "as a fast-forward" in reply(answer)
    assert git(workspace, "rev-parse", "main").strip() == tip
    assert git(workspace, "rev-list", "--count", f"{base}..main").strip() == "1"
    assert git(workspace, "show", "main:app.py") == CHANGED
    assert (await record(scene)).result is ResultState.MERGED


@needs_bubblewrap
async def test_moving_a_tag_is_refused(plan_scene: Any) -> None:
    scene, workspace, base = await _attacked(
        plan_scene, CHANGE + EVIL_COMMIT + ' && git tag -f v1 "$evil"', CONTROL
    )
    attack, control = _results(scene)[1:3]

    assert git(workspace, "rev-parse", "v1^{commit}").strip() == base
    assert GIT_WRITE_REFUSED in attack
    assert "control-ok" in control
    assert git(workspace, "for-each-ref", "--format=%(refname)", "refs/tags").split() == [
        "refs/tags/v1"
    ]


@needs_bubblewrap
async def test_a_loose_object_cannot_be_rewritten_under_its_id(plan_scene: Any) -> None:
    rewrite = (
        'oid=$(git rev-parse main:app.py) && d=$(mktemp -d) && git init -q "$d" && '
        'printf \'print("evil")\\n\' > "$d/e" && e=$(git -C "$d" hash-object -w e) && '
        'cp -f "$d/.git/objects/${e:0:2}/${e:2}" ".git/objects/${oid:0:2}/${oid:2}" && '
        "echo rewritten"
    )
    scene, workspace, _ = await _attacked(plan_scene, CHANGE + rewrite)
    oid = git(workspace, "rev-parse", "main:app.py").strip()

    assert "rewritten" not in _results(scene)[1]
    assert git(workspace, "cat-file", "-p", oid) == ORIGINAL
    answer = await scene.ana.click(result_card(scene), label="Discard")
    assert "back at the reviewed state" in reply(answer)
    assert (workspace / "app.py").read_text() == ORIGINAL


@needs_bubblewrap
async def test_git_replace_cannot_dress_up_the_card_s_diff(plan_scene: Any) -> None:
    disguise = (
        "printf 'print(\"evil\")\\n' > app.py && real=$(git hash-object app.py) && "
        "harmless=$(printf 'print(2)  # harmless\\n' | git hash-object -w --stdin) && "
        'git hash-object -w app.py && git replace -f "$real" "$harmless"'
    )
    scene, workspace, _ = await _attacked(plan_scene, disguise)

    diff = await _card_diff(scene)
    assert '+print("evil")' in diff and "harmless" not in diff
    assert _human_git(workspace, "replace", "-l").stdout == ""
    assert GIT_WRITE_REFUSED in _results(scene)[1]


@needs_bubblewrap
async def test_planted_hooks_and_fsmonitor_run_nothing_for_the_next_person(
    plan_scene: Any, tmp_path: Path
) -> None:
    marker = tmp_path / "ran-for-the-human"
    plant = (
        f"printf '#!/bin/sh\\ntouch {marker}\\n' > .git/hooks/post-index-change; "
        "chmod +x .git/hooks/post-index-change; "
        f"git config core.fsmonitor 'touch {marker}'; "
        f"git config alias.st '!touch {marker}'"
    )
    scene, workspace, _ = await _attacked(plan_scene, CHANGE + plant)

    answer = await scene.ana.click(result_card(scene), label="Discard")
    assert "back at the reviewed state" in reply(answer)
    (workspace / "app.py").write_text("touched by a person\n")
    for args in (("status",), ("st",), ("add", "app.py"), ("status", "--short")):
        _human_git(workspace, *args)
    assert not marker.exists()
    assert not (workspace / ".git" / "hooks" / "post-index-change").exists()
    assert GIT_WRITE_REFUSED in _results(scene)[1]


@needs_bubblewrap
async def test_attributes_and_sparse_settings_do_not_hide_the_card_s_diff(
    plan_scene: Any,
) -> None:
    hide = (
        "echo '* -diff' > .git/info/attributes; "
        "git config core.sparseCheckout true; "
        "echo '/README.md' > .git/info/sparse-checkout"
    )
    scene, workspace, _ = await _attacked(plan_scene, CHANGE + hide)

    diff = await _card_diff(scene)
    assert "+print(2)" in diff and "Binary files" not in diff
    assert not (workspace / ".git" / "info" / "attributes").exists()
    assert GIT_WRITE_REFUSED in _results(scene)[1]


@needs_bubblewrap
async def test_an_in_tree_gitattributes_the_step_commits_does_not_hide_the_card_s_diff(
    plan_scene: Any,
) -> None:
    """A ``.gitattributes`` is the repository's content, and a step may commit one; the
    card shows it as the change it is, but the host's diff does not obey it, so the other
    files' changes stay readable (``* -diff`` would show them as "Binary files differ")."""
    scene, _, _ = await _attacked(plan_scene, CHANGE + "echo '* -diff' > .gitattributes")

    diff = await _card_diff(scene)
    assert "+print(2)" in diff and "Binary files" not in diff
    assert "+* -diff" in diff


@needs_bubblewrap
async def test_a_planted_commondir_leaves_discard_working(plan_scene: Any) -> None:
    scene, workspace, base = await _attacked(plan_scene, CHANGE + "echo /tmp > .git/commondir")

    answer = await scene.ana.click(result_card(scene), label="Discard")
    assert "back at the reviewed state" in reply(answer)
    assert git(workspace, "rev-parse", "main").strip() == base
    assert (workspace / "app.py").read_text() == ORIGINAL
    assert not (workspace / ".git" / "commondir").exists()
    assert GIT_WRITE_REFUSED in _results(scene)[1]


@pytest.mark.skipif(landlock_abi() < 1, reason="the fallback needs Landlock")
async def test_under_the_landlock_fallback_a_writing_command_is_refused_with_the_reason(
    plan_scene: Any,
) -> None:
    """Landlock cannot carve the git directory out of the writable workspace, so there the
    step's writing command does not run at all; the host's own git still does (the branch,
    the card, Discard)."""
    scene, workspace, base = await _attacked(
        plan_scene,
        CHANGE + EVIL_COMMIT + ' && git update-ref refs/heads/main "$evil"',
        config={"sandbox": {"layer": "landlock"}},
    )
    [refused] = _results(scene)[1:2]

    assert git(workspace, "rev-parse", "main").strip() == base
    assert refused.startswith("Not run:") and "Landlock fallback" in refused
    assert "git_commit" in refused
    assert (workspace / "app.py").read_text() == ORIGINAL
    answer = await scene.ana.click(result_card(scene), label="Discard")
    assert "back at the reviewed state" in reply(answer)
    assert git(workspace, "rev-parse", "main").strip() == base


@needs_bubblewrap
async def test_git_commit_in_bash_fails_naming_the_tool_and_the_tool_commits(
    plan_scene: Any,
) -> None:
    scene, workspace, _ = await _attacked(
        plan_scene,
        CHANGE + "git add -A && git commit -qm 'from bash'",
        tool_turn(ToolCall("git_commit", {"message": "from the tool"})),
    )
    bash, tool = _results(scene)[1:3]
    found = await record(scene)

    assert GIT_WRITE_REFUSED in bash and "Read-only file system" in bash
    assert bash.count("\n") <= 3, bash
    assert "from the tool" in tool and "error" not in tool.lower()
    subjects = git(workspace, "log", "--format=%s", f"{found.base_commit}..{found.branch}")
    assert "from the tool" in subjects and "from bash" not in subjects
