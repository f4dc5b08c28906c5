"""Discard puts the reviewed state back byte for byte, whatever the agent left, and says
what it did.

Played through the real bot under SimCord with a scripted model: a plan whose steps may
change anything under ``docs/`` executes to its completion card, leaving behind

- a folder of mode 000 (git's clean could not enter it: Discard failed with ``HEAD`` left
  detached);
- a ``docs/.gitattributes`` saying ``* text eol=crlf`` that ignores itself (no commit holds
  it, so git checked the reviewed files out through it, converting their line ends, and
  said all was well).

Discard is clicked: the base is checked out, every file holds the reviewed bytes, and the
answer says so only when it is true. And when git refuses (the repository's git directory
made unreadable), the answer says what Discard did and ``HEAD`` is not left detached.
"""

from __future__ import annotations

import hashlib
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

PLAN = {
    "summary": "Tidy the docs",
    "steps": [
        {"description": "Tidy docs", "tools": ["bash_execute", "create_file"], "files": ["docs/**"]}
    ],
}
GUIDE = "line one\nline two\n"


@pytest.fixture
async def plan_scene(worlds: Worlds) -> Callable[..., Any]:
    async def make(script: Any = (), **options: Any) -> PlanScene:
        return await plan_scene_in(await worlds.start(script, **options))

    return make


def _reviewed(workspace: Path) -> None:
    (workspace / "docs").mkdir()
    (workspace / "docs" / "guide.md").write_text(GUIDE)
    git(workspace, "add", "docs")
    git(workspace, "commit", "--quiet", "-m", "docs")


def _state(workspace: Path) -> dict[str, str]:
    """Every file outside ``.git``, by its bytes."""
    return {
        str(p.relative_to(workspace)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(workspace.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(workspace).parts
    }


async def _executed(plan_scene: Any, command: str) -> tuple[PlanScene, Path, dict[str, str]]:
    work = (
        tool_turn(ToolCall("create_file", {"path": "docs/new.md", "content": "new\n"})),
        tool_turn(ToolCall("bash_execute", {"command": command + " && echo left"})),
        tool_turn(ToolCall("complete_plan", {"summary": "tidied"})),
        text_turn("Done."),
    )
    seen: dict[str, dict[str, str]] = {}

    def prepare(workspace: Path) -> None:
        _reviewed(workspace)
        seen["state"] = _state(workspace)

    scene, workspace = await completed(
        plan_scene, plan=PLAN, work=work, prepare=prepare, plan_mode={"drift": "log"}
    )
    return scene, workspace, seen["state"]


@needs_bubblewrap
async def test_a_mode_000_folder_does_not_stop_discard(plan_scene: Any) -> None:
    scene, workspace, reviewed = await _executed(
        plan_scene,
        "mkdir -p docs/locked/deep && echo x > docs/locked/deep/f && chmod 000 docs/locked",
    )
    assert (workspace / "docs" / "locked").stat().st_mode & 0o777 == 0
    try:
        answer = await scene.ana.click(result_card(scene), label="Discard")
    finally:
        if (workspace / "docs" / "locked").exists():
            (workspace / "docs" / "locked").chmod(0o755)

    assert "back at the reviewed state" in reply(answer), reply(answer)
    assert (await record(scene)).result is ResultState.DISCARDED
    assert git(workspace, "symbolic-ref", "HEAD").strip() == "refs/heads/main"
    assert not (workspace / "docs" / "locked").exists()
    assert _state(workspace) == reviewed


@needs_bubblewrap
async def test_self_ignoring_crlf_attributes_cannot_change_what_discard_puts_back(
    plan_scene: Any,
) -> None:
    scene, workspace, reviewed = await _executed(
        plan_scene,
        "printf 'line three\\n' >> docs/guide.md"
        " && printf '* text eol=crlf\\n' > docs/.gitattributes"
        " && printf '.gitattributes\\n.gitignore\\n' > docs/.gitignore",
    )
    assert (workspace / "docs" / ".gitattributes").is_file()
    assert (workspace / "docs" / "guide.md").read_text() == GUIDE + "line three\n"

    answer = await scene.ana.click(result_card(scene), label="Discard")

    assert "back at the reviewed state" in reply(answer), reply(answer)
    assert (workspace / "docs" / "guide.md").read_bytes() == GUIDE.encode()
    assert not (workspace / "docs" / ".gitattributes").exists()
    assert _state(workspace) == reviewed
    assert git(workspace, "status", "--porcelain").strip() == ""


@needs_bubblewrap
async def test_when_git_refuses_discard_says_what_it_did(plan_scene: Any) -> None:
    scene, workspace, _ = await _executed(plan_scene, "true")
    objects = workspace / ".git" / "objects"
    objects.chmod(0o000)
    try:
        answer = await scene.ana.click(result_card(scene), label="Discard")
    finally:
        objects.chmod(0o755)

    said = reply(answer)
    assert said.startswith("Not discarded: git "), said
    assert "so far:" in said and "Discard can be tried again" in said, said
    assert git(workspace, "symbolic-ref", "HEAD").strip().startswith("refs/heads/"), said
    assert (await record(scene)).result is ResultState.WAITING

    again = await scene.ana.click(result_card(scene), label="Discard")

    assert "back at the reviewed state" in reply(again), reply(again)
    assert git(workspace, "symbolic-ref", "HEAD").strip() == "refs/heads/main"
