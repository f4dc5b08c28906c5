"""Discard always succeeds: when a person committed to the base branch since the execution
started, Discard leaves the base where they put it, stands the workspace on it with the
reviewed uncommitted changes put back, and says so; when the host's kept copy of the
ignored files is damaged or gone, Discard still ends the result and names what it could
not put back, on the card and in the answer."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

from plancord.agent.execution.ignored import KEPT_DIR
from plancord.core.execution import ResultState
from tests.discord_bot.result_card.completed import completed, git, record, reply, result_card


def _reviewed_draft(workspace: Path) -> None:
    (workspace / "draft.txt").write_text("reviewed but uncommitted\n")
    (workspace / ".gitignore").write_text("*.log\n")
    (workspace / "debug.log").write_text("kept by the host\n")


def _human_commit(workspace: Path) -> str:
    """A person commits ``human.txt`` on ``main`` while the execution branch is out."""
    index = workspace.parent / "human.index"
    env = {**os.environ, "GIT_INDEX_FILE": str(index)}

    def run(*args: str, data: str | None = None) -> str:
        return subprocess.run(
            ["git", *args], cwd=workspace, env=env, input=data, check=True,
            capture_output=True, text=True,
        ).stdout.strip()  # fmt: skip

    run("read-tree", "main")
    blob = run("hash-object", "-w", "--stdin", data="by a person\n")
    run("update-index", "--add", "--cacheinfo", f"100644,{blob},human.txt")
    tree = run("write-tree")
    commit = run(
        "-c",
        "user.name=p",
        "-c",
        "user.email=p@p",
        "commit-tree",
        tree,
        "-p",
        "main",
        "-m",
        "human",
    )
    run("update-ref", "refs/heads/main", commit)
    index.unlink()
    return commit


async def test_discard_after_the_base_moved_keeps_the_persons_commit(plan_scene: Any) -> None:
    scene, workspace = await completed(plan_scene, prepare=_reviewed_draft)
    executed = await record(scene)
    moved = _human_commit(workspace)

    answer = await scene.ana.click(result_card(scene), label="Discard")

    said = reply(answer)
    assert "Discarded the result" in said and "had moved" in said and moved[:12] in said
    assert (await record(scene)).result is ResultState.DISCARDED
    assert git(workspace, "symbolic-ref", "HEAD").strip() == "refs/heads/main"
    assert git(workspace, "rev-parse", "main").strip() == moved
    assert (workspace / "human.txt").read_text() == "by a person\n"
    assert (workspace / "draft.txt").read_text() == "reviewed but uncommitted\n"
    assert not (workspace / "greet.py").exists()
    assert (workspace / "debug.log").read_text() == "kept by the host\n"
    assert git(workspace, "branch", "--list", executed.branch).strip() == ""
    assert "had moved" in str(result_card(scene).embeds[0].to_dict())


def _keep_of(scene: Any) -> Path:
    [keep] = list((scene.app.manager.workspace_of("ada").parent / KEPT_DIR).iterdir())
    return keep


async def test_discard_with_the_kept_copy_gone_says_so(plan_scene: Any) -> None:
    scene, workspace = await completed(plan_scene, prepare=_reviewed_draft)
    for entry in _keep_of(scene).iterdir():
        entry.unlink()

    answer = await scene.ana.click(result_card(scene), label="Discard")

    said = reply(answer)
    assert "Discarded the result" in said
    assert "kept copy of the ignored files is missing" in said
    assert (await record(scene)).result is ResultState.DISCARDED
    assert not (workspace / "greet.py").exists()
    assert "kept copy of the ignored files is missing" in str(
        result_card(scene).embeds[0].to_dict()
    )


async def test_discard_with_a_damaged_kept_copy_names_the_files(plan_scene: Any) -> None:
    scene, workspace = await completed(plan_scene, prepare=_reviewed_draft)
    (workspace / "debug.log").write_text("changed after the card\n")
    content = _keep_of(scene) / "content"
    content.write_bytes(b"")

    answer = await scene.ana.click(result_card(scene), label="Discard")

    said = reply(answer)
    assert "Discarded the result" in said and "`debug.log`" in said
    assert (await record(scene)).result is ResultState.DISCARDED
    assert (workspace / "draft.txt").read_text() == "reviewed but uncommitted\n"
    assert not (workspace / "greet.py").exists()
