"""Decisions on a result that git and the database agree on, through the real bot: each of
Merge, Discard, Roll back and Push killed before git ran or after git ran but before its
record was written, then a restart; the database locked between git and the record; two
approvals at once from the card and the operator's shell.

A kill is the decision's own task stopped where it stands (the click's handler cancelled
while it waits inside git's step), the bot then closed and started again over the same
database and workspace, as a process exit and a new process would."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Awaitable, Callable
from contextlib import suppress
from pathlib import Path
from typing import Any

import pytest

from plancord.agent.execution.branch import ExecutionBranch
from plancord.command.operator import open_services
from plancord.command.operator_results import result_discard
from plancord.core.execution import ResultState
from plancord.core.intents import IntentState
from plancord.core.planning import AuditEntry
from plancord.storage.result_intents import ResultIntentStore
from plancord.storage.store import SqlStore
from tests.discord_bot.result_card.completed import completed, git, menu, record, reply, result_card
from tests.world import PlanScene


class Kill:
    """Stops ``ExecutionBranch.<method>`` before (or right after) git does its work, as a
    SIGKILL there would: the decision's task never returns."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, method: str, *, after_git: bool) -> None:
        self.reached = asyncio.Event()
        self.task: asyncio.Task[Any] | None = None
        self._monkeypatch = monkeypatch
        self._method = method
        self._original = getattr(ExecutionBranch, method)
        original = self._original

        async def killed(branch: ExecutionBranch, *args: Any, **kwargs: Any) -> Any:
            if after_git:
                await original(branch, *args, **kwargs)
            self.task = asyncio.current_task()
            self.reached.set()
            await asyncio.Event().wait()

        monkeypatch.setattr(ExecutionBranch, method, killed)

    async def during(self, decision: Callable[[], Awaitable[Any]]) -> None:
        """Run ``decision`` until it reaches the kill, kill it, and put git back as it was
        for the next process."""
        started = asyncio.ensure_future(decision())
        await self.reached.wait()
        assert self.task is not None
        self.task.cancel()
        with suppress(asyncio.CancelledError):
            await started
        self._monkeypatch.setattr(ExecutionBranch, self._method, self._original)


async def _remote_scene(plan_scene: Any, tmp_path: Path) -> tuple[PlanScene, Path, Path]:
    remote = tmp_path / "shared" / "origin.git"
    remote.parent.mkdir()
    git(tmp_path, "init", "--quiet", "--bare", str(remote))

    def prepare(workspace: Path) -> None:
        git(workspace, "remote", "add", "origin", str(remote))

    scene, workspace = await completed(
        plan_scene, prepare=prepare, config={"sandbox": {"shared_paths": [str(remote.parent)]}}
    )
    return scene, workspace, remote


def _decision(scene: PlanScene, action: str) -> Callable[[], Awaitable[Any]]:
    card = result_card(scene)
    if action == "roll_back":
        custom_id = menu(scene, card)["custom_id"]
        return lambda: scene.ana.select(card, ["2"], custom_id=custom_id)
    label = {"merge": "Merge", "discard": "Discard", "push": "Push"}[action]
    return lambda: scene.ana.click(card, label=label)


def _told(scene: PlanScene, words: str) -> list[str]:
    return [text for text in scene.bot_texts() if words in text]


async def _intent_states(scene: PlanScene, plan_id: str) -> list[IntentState]:
    return [i.state for i in await ResultIntentStore(scene.app.db).of_plan(plan_id)]


METHODS = {"merge": "merge", "discard": "discard", "roll_back": "roll_back", "push": "push"}


@pytest.mark.parametrize("after_git", [False, True], ids=["before-git", "after-git"])
@pytest.mark.parametrize("action", ["merge", "discard", "roll_back", "push"])
async def test_a_decision_killed_is_finished_or_undone_at_the_restart_and_the_channel_told(
    plan_scene: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    action: str,
    after_git: bool,
) -> None:
    scene, workspace, remote = await _remote_scene(plan_scene, tmp_path)
    found = await record(scene)
    pinned = found.result_commit or ""
    kill = Kill(monkeypatch, METHODS[action], after_git=after_git)

    await kill.during(_decision(scene, action))
    await scene.restart()
    await scene.app.runtime.results.settled()
    await scene.env.settle()

    after = await record(scene)
    main = git(workspace, "rev-parse", "main").strip()
    head = git(workspace, "symbolic-ref", "--quiet", "HEAD").strip()
    if action == "merge" and after_git:
        assert _told(scene, "was interrupted after git merged it; plancord finished it")
        assert after.result is ResultState.MERGED
        assert (main, head) == (pinned, "refs/heads/main")
        assert (workspace / "greet.py").exists()
    elif action == "merge":
        assert _told(scene, "was interrupted before git changed anything")
        assert after.result is ResultState.WAITING
        assert (main, head) == (found.base_commit, f"refs/heads/{found.branch}")
        merged = await scene.ana.click(result_card(scene), label="Merge")
        assert "as a fast-forward" in reply(merged)
    elif action == "discard":
        assert _told(scene, "was interrupted; plancord finished it")
        assert after.result is ResultState.DISCARDED
        assert (main, head) == (found.base_commit, "refs/heads/main")
        assert not (workspace / "greet.py").exists()
        assert git(workspace, "status", "--porcelain", "--untracked-files=all") == ""
    elif action == "roll_back":
        assert _told(scene, "back to before step 2 was interrupted; plancord finished it")
        assert after.result is ResultState.WAITING
        assert after.result_version == found.result_version + 1
        assert after.result_commit == git(workspace, "rev-parse", found.branch).strip()
        assert (workspace / "greet.py").exists()
        assert not (workspace / "docs" / "greet.md").exists()
    else:
        # Killed before git pushed or after: the recovery pushes again (the same commit
        # under the same name, harmless twice) rather than leaving it to chance.
        assert _told(scene, "was interrupted; plancord pushed it again: `origin` has")
        assert after.result is ResultState.WAITING
        pushed = git(remote, "for-each-ref", "--format=%(objectname)").split()
        assert pushed == [pinned]
        assert "result-push" in [a for a, _ in await scene.audit()]
        again = await scene.ana.click(result_card(scene), label="Push")
        assert "Pushed" in reply(again)
    states = await _intent_states(scene, found.plan_id)
    assert states[0] in (IntentState.DONE, IntentState.UNDONE), "the intent is still open"


async def test_the_database_locked_between_git_and_the_record_then_a_restart(
    plan_scene: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Git merged; the record cannot be written (another process holds the database's write
    lock past the busy timeout). The member is told what git did, never that nothing
    changed; the restart records the merge and tells the channel."""
    scene, workspace = await completed(plan_scene)
    found = await record(scene)
    path = scene.app.config.database_path
    assert path is not None
    holder = sqlite3.connect(path, isolation_level=None)
    original = ExecutionBranch.merge

    async def merge_then_lock(branch: ExecutionBranch, *args: Any) -> str:
        merged = await original(branch, *args)
        holder.execute("BEGIN IMMEDIATE")
        return merged

    monkeypatch.setattr(ExecutionBranch, "merge", merge_then_lock)
    try:
        answer = reply(await scene.ana.click(result_card(scene), label="Merge"))
    finally:
        holder.execute("ROLLBACK")
        holder.close()
        monkeypatch.setattr(ExecutionBranch, "merge", original)

    assert "nothing was changed" not in answer.lower()
    assert "Merged" in answer and "could not record it" in answer
    assert git(workspace, "rev-parse", "main").strip() == found.result_commit
    assert (await record(scene)).result is ResultState.WAITING

    await scene.restart()
    await scene.app.runtime.results.settled()
    await scene.env.settle()

    after = await record(scene)
    assert after.result is ResultState.MERGED and after.decided_by_name == "ana"
    assert _told(scene, "was interrupted after git merged it; plancord finished it")
    assert "**Merged** by ana" in (result_card(scene).embeds[0].description or "")
    assert await _intent_states(scene, found.plan_id) == [IntentState.DONE]


async def test_a_record_that_failed_is_finished_by_the_next_click(
    plan_scene: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same failure, and the bot keeps running: the next click on the card records
    what git did first, and says so, rather than refusing forever."""
    scene, workspace = await completed(plan_scene)
    found = await record(scene)
    path = scene.app.config.database_path
    assert path is not None
    holder = sqlite3.connect(path, isolation_level=None)
    original = ExecutionBranch.discard

    async def discard_then_lock(branch: ExecutionBranch, *args: Any) -> Any:
        done = await original(branch, *args)
        holder.execute("BEGIN IMMEDIATE")
        return done

    monkeypatch.setattr(ExecutionBranch, "discard", discard_then_lock)
    try:
        first = reply(await scene.ana.click(result_card(scene), label="Discard"))
    finally:
        holder.execute("ROLLBACK")
        holder.close()
        monkeypatch.setattr(ExecutionBranch, "discard", original)
    assert "Discarded" in first and "nothing was changed" not in first.lower()

    second = reply(await scene.ana.click(result_card(scene), label="Merge"))

    assert "Nothing new was done" in second and "plancord finished it" in second
    assert (await record(scene)).result is ResultState.DISCARDED
    assert git(workspace, "rev-parse", "main").strip() == found.base_commit
    assert not (workspace / "greet.py").exists()


async def test_two_approvals_at_once_one_wins_and_the_other_hears_already(
    plan_scene: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ana clicks Merge while an operator discards from the shell (another process's
    services over the same database). Whichever reaches git first is held there until the
    other has reached git too or been refused, so both get every chance to run."""
    scene, workspace = await completed(plan_scene)
    found = await record(scene)
    kept = scene.world.data_dir / "agents" / "ada" / "kept"
    arrived: list[str] = []
    both_arrived, one_refused = asyncio.Event(), asyncio.Event()
    append_audit = SqlStore.append_audit

    async def audited(store: SqlStore, entry: AuditEntry) -> None:
        await append_audit(store, entry)
        if entry.action == "result-refused":
            one_refused.set()

    monkeypatch.setattr(SqlStore, "append_audit", audited)
    for method in ("merge", "discard"):
        original = getattr(ExecutionBranch, method)

        def held(original: Any, method: str) -> Any:
            async def run(branch: ExecutionBranch, *args: Any) -> Any:
                arrived.append(method)
                if len(arrived) == 2:
                    both_arrived.set()
                waits = {asyncio.ensure_future(e.wait()) for e in (both_arrived, one_refused)}
                _, pending = await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
                for waiting in pending:
                    waiting.cancel()
                return await original(branch, *args)

            return run

        monkeypatch.setattr(ExecutionBranch, method, held(original, method))

    async def from_the_shell() -> str:
        async with open_services(scene.app.config) as services:
            try:
                return await result_discard(services, "ada")
            except Exception as exc:
                return str(exc)

    clicked, shell = await asyncio.gather(
        scene.ana.click(result_card(scene), label="Merge"), from_the_shell()
    )
    await scene.app.runtime.results.settled()
    await scene.env.settle()

    answers = [reply(clicked), shell]
    after = await record(scene)
    main = git(workspace, "rev-parse", "main").strip()
    if after.result is ResultState.MERGED:
        won, lost = answers
        assert "as a fast-forward" in won
        assert main == found.result_commit and (workspace / "greet.py").exists()
        assert git(workspace, "symbolic-ref", "HEAD").strip() == "refs/heads/main"
    else:
        lost, won = answers
        assert after.result is ResultState.DISCARDED
        assert "Discarded" in won
        assert main == found.base_commit and not (workspace / "greet.py").exists()
        assert git(workspace, "branch", "--list", found.branch).strip() == ""
    assert "already" in lost and "Nothing changed" in lost
    assert len(arrived) == 1, f"both decisions ran git: {arrived}"
    assert git(workspace, "status", "--porcelain", "--untracked-files=all") == ""
    assert not kept.exists() or not any(kept.iterdir())
    assert await _intent_states(scene, found.plan_id) == [IntentState.DONE]
    decided = [a for a, _ in await scene.audit() if a in ("result-merge", "result-discard")]
    assert len(decided) == 1
