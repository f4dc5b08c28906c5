"""A ``.git`` the agent writes below the workspace's top is drift: it can neither wedge the
host's git nor hide what it holds.

Played through the real bot under SimCord with a scripted model: a plan whose one step may
change anything under ``sub/`` runs a command that writes a nested ``.git`` (a file saying
``gitdir: /nonexistent``, a symbolic link, or a repository with a ``commondir``), then
writes ``sub/notes.txt``. Every later git run of the host would refuse such a workspace (the
card offered Merge of an empty commit, Discard answered "not pinned" for good); now the
``.git`` is undone after the call whatever the drift policy, the model is told, the audit
row says so, and the result is merged or discarded as the card shows it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from plancord.core.execution import ResultState
from plancord.core.planning import AuditAction
from plancord.sandbox import layers
from tests.discord_bot.result_card.completed import completed, git, record, reply, result_card
from tests.fakes.anthropic_server import ToolCall, text_turn, tool_turn
from tests.world import PlanScene, Worlds, plan_scene_in

needs_bubblewrap = pytest.mark.skipif(
    layers.bubblewrap_problem() is not None, reason="needs the bubblewrap layer"
)

PLAN = {
    "summary": "Fill sub",
    "steps": [
        {"description": "Write sub", "tools": ["bash_execute", "create_file"], "files": ["sub/**"]}
    ],
}

#: Each nested ``.git`` form, as the agent's shell writes it.
FORMS = {
    "gitdir-file": "mkdir -p sub && printf 'gitdir: /nonexistent\\n' > sub/.git",
    "symlink": "mkdir -p sub && ln -s /nonexistent sub/.git",
    "commondir": "git init -q sub && echo /tmp > sub/.git/commondir",
}


@pytest.fixture
async def plan_scene(worlds: Worlds) -> Callable[..., Any]:
    async def make(script: Any = (), **options: Any) -> PlanScene:
        return await plan_scene_in(await worlds.start(script, **options))

    return make


async def _executed(plan_scene: Any, form: str, drift: str) -> tuple[PlanScene, Path]:
    work = (
        tool_turn(ToolCall("bash_execute", {"command": FORMS[form] + " && echo written"})),
        tool_turn(ToolCall("create_file", {"path": "sub/notes.txt", "content": "notes\n"})),
        tool_turn(ToolCall("complete_plan", {"summary": "filled"})),
        text_turn("Done."),
    )
    return await completed(plan_scene, plan=PLAN, work=work, plan_mode={"drift": drift})


def _told(scene: PlanScene) -> list[str]:
    found: list[str] = []
    for request in scene.world.server.requests:
        for message in request["messages"]:
            if message["role"] == "user" and isinstance(message["content"], list):
                found += [
                    str(block.get("content"))
                    for block in message["content"]
                    if block.get("type") == "tool_result"
                ]
    return found


@needs_bubblewrap
@pytest.mark.parametrize("drift", ["log", "ask"])
@pytest.mark.parametrize("form", sorted(FORMS))
async def test_a_nested_git_is_undone_and_the_result_merges(
    plan_scene: Any, form: str, drift: str
) -> None:
    scene, workspace = await _executed(plan_scene, form, drift)
    found = await record(scene)

    assert not (workspace / "sub" / ".git").is_symlink()
    assert not (workspace / "sub" / ".git").exists()
    assert any("git directories are the host's" in text for text in _told(scene)), _told(scene)
    rows = [e for e in await scene.app.store.list_audit("ada") if e.action is AuditAction.DRIFT]
    assert [(r.detail["finding"], r.detail["outcome"]) for r in rows] == [
        ("git-directory", "refuse")
    ]
    assert found.result_commit is not None and found.result_commit != found.reviewed_commit

    answer = await scene.ana.click(result_card(scene), label="Merge")

    assert "Merged" in reply(answer), reply(answer)
    assert git(workspace, "show", "main:sub/notes.txt") == "notes\n"
    assert git(workspace, "ls-tree", "-r", "--name-only", "main").split() == ["sub/notes.txt"]


@needs_bubblewrap
@pytest.mark.parametrize("form", sorted(FORMS))
async def test_a_nested_git_leaves_discard_working(plan_scene: Any, form: str) -> None:
    scene, workspace = await _executed(plan_scene, form, "log")

    answer = await scene.ana.click(result_card(scene), label="Discard")

    assert "back at the reviewed state" in reply(answer), reply(answer)
    assert (await record(scene)).result is ResultState.DISCARDED
    assert not (workspace / "sub").exists()
    assert git(workspace, "branch", "--show-current").strip() == "main"
