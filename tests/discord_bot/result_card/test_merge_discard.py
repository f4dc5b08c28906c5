"""The completion card through the real bot: posted when execution ends with per-step
outcomes, files with lines, commands, and the branch's diff attached; Merge (a fast-forward
to the pinned commit; a moved base is refused, see ``test_pinned``) and Discard (the tree
byte-identical to the reviewed one), each audited."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

from plancord.core.execution import ResultState
from tests.discord_bot.plans import assert_within_limits
from tests.discord_bot.result_card.completed import (
    completed,
    diff_of,
    git,
    record,
    reply,
    result_card,
)
from tests.world import buttons


async def test_the_card_shows_each_step_and_attaches_the_diff(plan_scene: Any) -> None:
    scene, _ = await completed(plan_scene)

    card = result_card(scene)
    assert_within_limits(card.embeds)
    embed = card.embeds[0]
    assert embed.title == "Result: Add a greeting module"
    assert "Waiting for a decision" in (embed.description or "")
    first, second = embed.fields
    assert first.name == "1. Write greet.py"
    assert "✅ done" in first.value and "`greet.py` +2 −0" in first.value
    assert "create_file" in first.value
    assert "`docs/greet.md` +1 −0" in second.value
    assert buttons(card) == {"Merge": True, "Discard": True}
    diff = (await diff_of(card).read()).decode()
    assert "+def hello():" in diff and "+# hello" in diff
    assert (await record(scene)).result is ResultState.WAITING


async def test_merge_fast_forwards_the_base_and_is_audited(plan_scene: Any) -> None:
    scene, workspace = await completed(plan_scene)
    found = await record(scene)
    tip = git(workspace, "rev-parse", found.branch).strip()

    answer = await scene.ana.click(result_card(scene), label="Merge")

    assert "as a fast-forward" in reply(answer)
    assert git(workspace, "rev-parse", "main").strip() == tip
    assert git(workspace, "symbolic-ref", "HEAD").strip() == "refs/heads/main"
    after = await record(scene)
    assert after.result is ResultState.MERGED and after.decided_by_name == "ana"
    assert buttons(result_card(scene)) == {"Merge": False, "Discard": False}
    assert "**Merged** by ana" in (result_card(scene).embeds[0].description or "")
    assert ("result-merge", f"user:{scene.ana.id}(ana)") in await scene.audit()


async def test_discard_returns_the_reviewed_tree_byte_for_byte(plan_scene: Any) -> None:
    reviewed: list[str] = []

    def prepare(workspace: Path) -> None:
        (workspace / "draft.txt").write_text("reviewed but uncommitted\n")
        (workspace / "README.md").write_text("changed before review\n")
        git(workspace, "add", "README.md")
        reviewed.append(git(workspace, "status", "--porcelain", "--untracked-files=all"))

    scene, workspace = await completed(plan_scene, prepare=prepare)
    found = await record(scene)
    main_before = found.base_commit

    answer = await scene.ana.click(result_card(scene), label="Discard")

    assert "back at the reviewed state" in reply(answer)
    assert git(workspace, "symbolic-ref", "HEAD").strip() == "refs/heads/main"
    assert git(workspace, "rev-parse", "main").strip() == main_before
    assert (workspace / "draft.txt").read_text() == "reviewed but uncommitted\n"
    assert (workspace / "README.md").read_text() == "changed before review\n"
    assert not (workspace / "greet.py").exists() and not (workspace / "docs").exists()
    assert git(workspace, "status", "--porcelain", "--untracked-files=all") == reviewed[0]
    assert (await record(scene)).result is ResultState.DISCARDED
    assert "result-discard" in [a for a, _ in await scene.audit()]


async def test_discard_removes_what_the_run_left_untracked_even_without_the_keep(
    plan_scene: Any,
) -> None:
    """Discard's own cleaning, not only the kept copy's restore: with the kept copy of the
    reviewed untracked files gone, what the run left uncommitted and untracked still goes."""
    scene, workspace = await completed(plan_scene)
    reviewed = await record(scene)
    kept = scene.world.data_dir / "agents" / "ada" / "kept"
    assert [entry.name for entry in kept.iterdir()]
    shutil.rmtree(kept)
    (workspace / "scratch").mkdir()
    (workspace / "scratch" / "notes.txt").write_text("left by the run\n")
    (workspace / "leftover.txt").write_text("left by the run\n")

    answer = await scene.ana.click(result_card(scene), label="Discard")

    # Discarded all the same, saying what it could not give back.
    assert "Discarded the result" in reply(answer)
    assert "kept copy of the ignored files is missing" in reply(answer)
    assert not (workspace / "scratch").exists() and not (workspace / "leftover.txt").exists()
    assert git(workspace, "status", "--porcelain", "--untracked-files=all") == ""
    assert git(workspace, "rev-parse", "HEAD").strip() == reviewed.base_commit


def _commit_on_main(workspace: Path, name: str, text: str) -> str:
    """Someone moves main on while the result waits (without touching the work tree)."""
    blob = _run(workspace, ["git", "hash-object", "-w", "--stdin"], text).strip()
    index = workspace / ".git" / "other.index"
    env = {"GIT_INDEX_FILE": str(index)}
    _run(workspace, ["git", "read-tree", "main"], env=env)
    _run(
        workspace, ["git", "update-index", "--add", "--cacheinfo", f"100644,{blob},{name}"], env=env
    )
    tree = _run(workspace, ["git", "write-tree"], env=env).strip()
    parent = git(workspace, "rev-parse", "main").strip()
    commit = _run(workspace, ["git", "commit-tree", tree, "-p", parent, "-m", "elsewhere"]).strip()
    git(workspace, "update-ref", "refs/heads/main", commit)
    index.unlink()
    return commit


def _run(
    workspace: Path, argv: list[str], stdin: str = "", env: dict[str, str] | None = None
) -> str:
    return subprocess.run(
        argv,
        cwd=workspace,
        check=True,
        capture_output=True,
        text=True,
        input=stdin,
        env={**os.environ, **(env or {})},
    ).stdout
