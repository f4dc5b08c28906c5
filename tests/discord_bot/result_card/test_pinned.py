"""A result is pinned to the commit its card shows, through the real bot with a scripted
model: a commit on the branch after the card (the agent's own turn, asked to "commit this
too") is not merged, under the four-eyes rule and under ``approvals: 2``; a step subject the
agent forged moves no work between steps and keeps nothing on Roll back; the base moved by
someone else between card and click makes Merge and Discard refuse with the reason."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import discord

from plancord.core.execution import ResultState
from tests.discord_bot.result_card.completed import (
    completed,
    git,
    menu,
    record,
    reply,
    result_card,
)
from tests.discord_bot.result_card.test_merge_discard import _commit_on_main
from tests.fakes.anthropic_server import ToolCall, text_turn, tool_turn
from tests.world import PlanScene

LATER = (
    tool_turn(ToolCall("create_file", {"path": "later.txt", "content": "never reviewed\n"})),
    tool_turn(ToolCall("git_commit", {"message": "commit this too"})),
    text_turn("Committed that too."),
)


def _admin(scene: PlanScene, name: str) -> Any:
    role = scene.guild.create_role(
        f"{name}-admins", permissions=discord.Permissions(administrator=True)
    )
    return scene.guild.add_member(scene.env.create_user(name), roles=[role])


def _main_has(workspace: Path, path: str) -> bool:
    listing = git(workspace, "ls-tree", "-r", "--name-only", "main")
    return path in listing.splitlines()


async def _commit_this_too(scene: PlanScene, workspace: Path, pinned: str) -> None:
    """After the card, ana asks the agent for one more commit; it lands on the branch."""
    await scene.ana.send(scene.channel, "commit this too")
    await scene.app.runtime.wait_idle("ada")
    branch = (await record(scene)).branch
    assert git(workspace, "rev-parse", branch).strip() != pinned
    assert "commit this too" in git(workspace, "log", "-1", "--format=%s", branch)


async def test_a_commit_after_the_card_is_not_merged_under_four_eyes(plan_scene: Any) -> None:
    scene, workspace = await completed(
        plan_scene, approver="boss", plan_mode={"approval": "approver"}, after=LATER
    )
    found = await record(scene)
    pinned = git(workspace, "rev-parse", found.branch).strip()
    shown = result_card(scene).embeds[0].description or ""

    await _commit_this_too(scene, workspace, pinned)
    answer = await scene.boss.click(result_card(scene), label="Merge")

    assert "Merged" in reply(answer) and pinned[:8] in reply(answer)
    assert git(workspace, "rev-parse", "main").strip() == pinned
    assert not _main_has(workspace, "later.txt")
    assert not (workspace / "later.txt").exists()
    assert git(workspace, "status", "--porcelain") == ""
    after = await record(scene)
    assert after.result is ResultState.MERGED and after.result_commit == pinned
    assert pinned[:12] in shown


async def test_votes_before_a_later_commit_merge_only_the_pinned_result(plan_scene: Any) -> None:
    scene, workspace = await completed(
        plan_scene, approver="boss", plan_mode={"approvals": 2}, after=LATER
    )
    cara = _admin(scene, "cara")
    await cara.click(scene.plan_message(1), label="Approve")
    await scene.app.runtime.wait_idle("ada")
    found = await record(scene)
    pinned = git(workspace, "rev-parse", found.branch).strip()
    first = await scene.boss.click(result_card(scene), label="Merge")
    assert "recorded: 1 of 2 (boss)" in reply(first)

    await _commit_this_too(scene, workspace, pinned)
    voted = await scene.boss.click(result_card(scene), label="Merge")
    assert "recorded: 1 of 2 (boss)" in reply(voted)
    await scene.app.runtime.results.settled()
    description = result_card(scene).embeds[0].description or ""
    second = await cara.click(result_card(scene), label="Merge")

    assert "Merged" in reply(second)
    assert git(workspace, "rev-parse", "main").strip() == pinned
    assert not _main_has(workspace, "later.txt")
    assert "moved since this result" in description and pinned[:12] in description
    votes = await scene.app.db.fetchall(
        "SELECT result_commit FROM result_votes WHERE plan_id = ?", (found.plan_id,)
    )
    assert {row["result_commit"] for row in votes} == {pinned}


FORGED_PLAN = {
    "summary": "Add a greeting module",
    "steps": [
        {"description": "Write greet.py", "tools": ["create_file", "git_commit"],
         "files": ["greet.py"]},
        {"description": "Document it", "tools": ["create_file"], "files": ["docs/*"]},
    ],
}  # fmt: skip

FORGED_WORK = (
    tool_turn(ToolCall("create_file", {"path": "greet.py", "content": "def hello():\n    pass\n"})),
    tool_turn(ToolCall("git_commit", {"message": "step 2: Document it"})),
    tool_turn(ToolCall("create_file", {"path": "docs/greet.md", "content": "# hello\n"})),
    tool_turn(ToolCall("complete_plan", {"summary": "greeted"})),
    text_turn("Done."),
)


async def test_a_forged_step_subject_moves_nothing_and_roll_back_keeps_nothing(
    plan_scene: Any,
) -> None:
    scene, workspace = await completed(plan_scene, work=FORGED_WORK, plan=FORGED_PLAN)
    found = await record(scene)
    first, second = result_card(scene).embeds[0].fields
    assert "`greet.py`" in (first.value or "")
    assert "`greet.py`" not in (second.value or "")
    assert "`docs/greet.md`" in (second.value or "")
    history = git(workspace, "log", "--format=%s", f"{found.reviewed_commit}..{found.branch}")
    assert history.splitlines() == ["Document it", "step 2: Document it"]

    answer = await scene.ana.select(
        result_card(scene), ["1"], custom_id=menu(scene, result_card(scene))["custom_id"]
    )

    assert "back to before step 1" in reply(answer)
    assert not (workspace / "greet.py").exists()
    assert not (workspace / "docs" / "greet.md").exists()
    assert git(workspace, "rev-parse", found.branch).strip() == found.reviewed_commit
    after = await record(scene)
    assert after.result_commit == found.reviewed_commit


async def test_merge_refuses_when_the_base_moved_after_the_card(plan_scene: Any) -> None:
    scene, workspace = await completed(plan_scene)
    found = await record(scene)
    moved = _commit_on_main(workspace, "other.txt", "someone else's work\n")
    head = git(workspace, "symbolic-ref", "HEAD").strip()
    tree = git(workspace, "status", "--porcelain", "--untracked-files=all")

    merge = await scene.ana.click(result_card(scene), label="Merge")

    assert "`main` moved outside plancord" in reply(merge)
    assert moved[:12] in reply(merge) and found.base_commit[:12] in reply(merge)
    assert git(workspace, "rev-parse", "main").strip() == moved
    assert git(workspace, "symbolic-ref", "HEAD").strip() == head
    assert git(workspace, "status", "--porcelain", "--untracked-files=all") == tree
    assert (await record(scene)).result is ResultState.WAITING
    refused = [a for a in await scene.app.store.list_audit("ada") if a.action == "result-refused"]
    assert len(refused) == 1 and "moved outside" in refused[0].detail["why"]
    git(workspace, "update-ref", "refs/heads/main", found.base_commit)
    merged = await scene.ana.click(result_card(scene), label="Merge")
    assert "Merged" in reply(merged)


IGNORED_WORK = (
    tool_turn(ToolCall("create_file", {"path": "greet.py", "content": "def hello():\n    pass\n"})),
    tool_turn(ToolCall("create_file", {"path": "big.txt", "content": "built output\n"})),
    tool_turn(ToolCall("create_file", {"path": "docs/greet.md", "content": "# hello\n"})),
    tool_turn(ToolCall("complete_plan", {"summary": "greeted"})),
    text_turn("Done."),
)


async def test_ignored_files_a_step_wrote_are_listed_on_the_card(plan_scene: Any) -> None:
    def prepare(workspace: Path) -> None:
        (workspace / ".gitignore").write_text("big.txt\n")

    scene, workspace = await completed(plan_scene, work=IGNORED_WORK, prepare=prepare)
    found = await record(scene)

    before, first, second = result_card(scene).embeds[0].fields
    assert "`.gitignore` +1 −0" in (before.value or "")  # untracked before the plan
    assert "`big.txt` (ignored by git, in no commit)" in (first.value or "")
    assert "`greet.py` +2 −0" in (first.value or "")
    assert "ignored" not in (second.value or "")
    assert (workspace / "big.txt").read_text() == "built output\n"
    tree = git(workspace, "ls-tree", "-r", "--name-only", found.branch).splitlines()
    assert "big.txt" not in tree and "greet.py" in tree


async def test_a_result_opened_before_pinning_is_pinned_anew_not_merged(plan_scene: Any) -> None:
    scene, workspace = await completed(plan_scene)
    found = await record(scene)
    await scene.app.db.execute(
        "UPDATE executions SET result_commit = NULL WHERE plan_id = ?", (found.plan_id,)
    )

    refused = await scene.ana.click(result_card(scene), label="Merge")

    assert "not pinned to a commit" in reply(refused)
    assert git(workspace, "rev-parse", "main").strip() == found.base_commit
    await scene.app.runtime.results.settled()
    after = await record(scene)
    assert after.result_commit == git(workspace, "rev-parse", found.branch).strip()
    assert after.result_version == found.result_version + 1
    merged = await scene.ana.click(result_card(scene), label="Merge")
    assert "Merged" in reply(merged)
    assert git(workspace, "rev-parse", "main").strip() == after.result_commit
