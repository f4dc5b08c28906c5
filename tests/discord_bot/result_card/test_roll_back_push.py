"""Roll back… and Push on the completion card, through the real bot: the branch and the
tree go back to before the chosen step and the card says so; Push sends the branch to a
bare repository in the agent's shared paths, and is offered only where there is a remote
the agent can reach."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from plancord.agent.execution import remotes
from plancord.core.execution import ResultState
from tests.discord_bot.result_card.completed import completed, git, menu, record, reply, result_card
from tests.world import buttons


async def test_roll_back_to_before_a_step_and_the_card_updates(plan_scene: Any) -> None:
    scene, workspace = await completed(plan_scene)
    found = await record(scene)
    options = [o["label"] for o in menu(scene, result_card(scene))["options"]]
    assert options == ["Before step 1", "Before step 2"]

    answer = await scene.ana.select(
        result_card(scene), ["2"], custom_id=menu(scene, result_card(scene))["custom_id"]
    )

    assert "back to before step 2" in reply(answer)
    assert (workspace / "greet.py").exists()
    assert not (workspace / "docs" / "greet.md").exists()
    subjects = git(workspace, "log", "--format=%s", f"{found.reviewed_commit}..{found.branch}")
    assert subjects.splitlines() == ["Write greet.py"]
    second = result_card(scene).embeds[0].fields[1]
    assert "↩️ rolled back" in (second.value or "")
    after = await record(scene)
    assert after.result is ResultState.WAITING and after.result_version == found.result_version + 1
    assert "result-roll-back" in [a for a, _ in await scene.audit()]
    merged = await scene.ana.click(result_card(scene), label="Merge")
    assert "Merged" in reply(merged)
    assert not (workspace / "docs" / "greet.md").exists()


async def test_push_sends_the_branch_to_a_bare_remote_in_shared_paths(
    plan_scene: Any, tmp_path: Path
) -> None:
    remote = tmp_path / "shared" / "origin.git"
    remote.parent.mkdir()
    _bare(remote)

    def prepare(workspace: Path) -> None:
        git(workspace, "remote", "add", "origin", str(remote))

    scene, workspace = await completed(
        plan_scene, prepare=prepare, config={"sandbox": {"shared_paths": [str(remote.parent)]}}
    )
    found = await record(scene)
    assert buttons(result_card(scene)) == {"Merge": True, "Discard": True, "Push": True}

    answer = await scene.ana.click(result_card(scene), label="Push")

    assert "Pushed" in reply(answer)
    pushed = _bare_ref(remote, found.branch)
    assert pushed == git(workspace, "rev-parse", found.branch).strip()
    assert "result-push" in [a for a, _ in await scene.audit()]
    refused = await scene.bob.click(result_card(scene), label="Push")
    assert "this result" in reply(refused)


async def test_the_card_reads_the_push_remote_once_and_a_push_reads_it_again(
    plan_scene: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    remote = tmp_path / "shared" / "origin.git"
    remote.parent.mkdir()
    _bare(remote)
    reads: list[tuple[str, ...]] = []
    run_git = remotes.run_git

    async def counted(policy: Any, *args: str, **options: Any) -> Any:
        if args[:1] == ("remote",):
            reads.append(args)
        return await run_git(policy, *args, **options)

    monkeypatch.setattr(remotes, "run_git", counted)

    def prepare(workspace: Path) -> None:
        git(workspace, "remote", "add", "origin", str(remote))

    scene, workspace = await completed(
        plan_scene, prepare=prepare, config={"sandbox": {"shared_paths": [str(remote.parent)]}}
    )
    assert buttons(result_card(scene))["Push"]
    drawn = len(reads)
    assert drawn > 0

    await scene.ana.select(
        result_card(scene), ["2"], custom_id=menu(scene, result_card(scene))["custom_id"]
    )
    assert "↩️ rolled back" in (result_card(scene).embeds[0].fields[1].value or "")
    assert buttons(result_card(scene))["Push"]
    assert len(reads) == drawn, "redrawing the card ran git again"

    git(workspace, "remote", "remove", "origin")
    answer = await scene.ana.click(result_card(scene), label="Push")

    assert "no push remote it can reach" in reply(answer)
    assert len(reads) > drawn
    assert "Push" not in buttons(result_card(scene))
    assert _bare_ref_missing(remote)


async def test_no_push_without_a_reachable_remote(plan_scene: Any, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere.git"
    _bare(elsewhere)

    def prepare(workspace: Path) -> None:
        git(workspace, "remote", "add", "origin", str(elsewhere))

    scene, _ = await completed(plan_scene, prepare=prepare)

    assert buttons(result_card(scene)) == {"Merge": True, "Discard": True}


def _bare(path: Path) -> None:
    subprocess.run(["git", "init", "--quiet", "--bare", str(path)], check=True)


def _bare_ref_missing(path: Path) -> bool:
    argv = ["git", "--git-dir", str(path), "for-each-ref"]
    return subprocess.run(argv, check=True, capture_output=True, text=True).stdout == ""


def _bare_ref(path: Path, branch: str) -> str:
    argv = ["git", "--git-dir", str(path), "rev-parse", f"refs/heads/{branch}"]
    return subprocess.run(argv, check=True, capture_output=True, text=True).stdout.strip()
