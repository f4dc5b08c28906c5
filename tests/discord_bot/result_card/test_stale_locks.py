"""A decision on a result killed in git, which left git's lock files behind, through the real
bot: after the restart the recovery removes the stale locks and finishes the decision."""

from __future__ import annotations

import os
import time
from typing import Any

import pytest

from plancord.core.execution import ResultState
from tests.discord_bot.result_card.completed import completed, git, record
from tests.discord_bot.result_card.test_intents import Kill, _decision, _told

LONG_AGO = time.time() - 3600


async def test_a_discard_killed_in_git_is_finished_after_its_stale_locks_are_removed(
    plan_scene: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    scene, workspace = await completed(plan_scene)
    found = await record(scene)
    kill = Kill(monkeypatch, "discard", after_git=False)
    await kill.during(_decision(scene, "discard"))
    locks = [workspace / ".git" / "index.lock", workspace / ".git" / "HEAD.lock"]
    for lock in locks:  # the git the kill stopped left them, untouched since
        lock.write_text("")
        os.utime(lock, (LONG_AGO, LONG_AGO))

    await scene.restart()
    await scene.app.runtime.results.settled()
    await scene.env.settle()

    assert [lock for lock in locks if lock.exists()] == []
    assert _told(scene, "was interrupted; plancord finished it")
    assert _told(scene, "plancord removed them")
    after = await record(scene)
    assert after.result is ResultState.DISCARDED
    assert git(workspace, "rev-parse", "main").strip() == found.base_commit
    assert git(workspace, "symbolic-ref", "HEAD").strip() == "refs/heads/main"
    assert not (workspace / "greet.py").exists()
    [removed] = [
        entry.detail["locks_removed"]
        for entry in await scene.app.store.list_audit("ada")
        if entry.detail.get("recovered") and "locks_removed" in entry.detail
    ]
    assert sorted(removed) == [".git/HEAD.lock", ".git/index.lock"]  # type: ignore[call-overload]
