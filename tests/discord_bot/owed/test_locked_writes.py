"""A write that must happen meets a database another process holds locked, through the real
bot: late, never lost.

ada executes a two-step plan and completes it; at the named write another connection holds
SQLite's write lock past the busy timeout, then lets it go. Opening the result and ending
the execution are owed (``agent.owed``): tried again after a wait, with no restart, and
found again at a restart when the process died first. Until the result opens, no other
plan of the agent starts (it would start on top of the first one's branch)."""

from __future__ import annotations

from typing import Any

import pytest

from plancord.core.execution import ResultState
from plancord.storage.executions import ExecutionStore
from tests.discord_bot.owed.locks import WriteLock, lock_at
from tests.discord_bot.result_card.completed import completed, record, reply, result_cards

OWED_CARDS_SWEEP = 61.0
"""Virtual seconds past the owed cards' first retry and their sweep (``SWEEP_SECONDS``)."""
RETRY_SECONDS = 3.0
"""Virtual seconds past the first retry's wait (``owed.FIRST_DELAY``)."""


async def _retried(scene: Any) -> None:
    await scene.env.advance_time(RETRY_SECONDS)
    await scene.env.settle()
    await scene.app.runtime.results.settled()
    await scene.env.settle()


async def test_opening_a_result_behind_a_lock_is_owed_and_lands_once_the_lock_goes(
    plan_scene: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    scene, lock = await _locked_at(plan_scene, monkeypatch, "open_result")
    assert lock.met == 1
    lock.release()

    unopened = await record(scene)
    assert not unopened.running and unopened.result is None
    assert result_cards(scene) == []
    assert scene.app.owed.held() == (f"open-result {unopened.plan_id}",)
    refusal = await scene.app.branches.refusal("ada")
    assert refusal is not None and "has not opened yet" in refusal, refusal

    await _retried(scene)

    opened = await record(scene)
    assert opened.result is ResultState.WAITING and opened.requested_by_name == "ana"
    assert len(result_cards(scene)) == 1
    assert scene.app.owed.held() == ()
    assert scene.app.owed.landed == [f"open-result {unopened.plan_id}"]
    assert await scene.app.owed.owed() == []


async def test_a_result_whose_opening_was_lost_with_its_process_opens_at_the_next_start(
    plan_scene: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    scene, lock = await _locked_at(plan_scene, monkeypatch, "open_result")
    lock.release()
    assert (await record(scene)).result is None

    await scene.restart()  # before the retry: the duty held in memory dies with the process
    await scene.app.runtime.results.settled()
    await scene.env.settle()

    assert (await record(scene)).result is ResultState.WAITING
    assert len(result_cards(scene)) == 1


async def test_ending_an_execution_behind_a_lock_is_late_and_the_agent_is_free_again(
    plan_scene: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    scene, lock = await _locked_at(plan_scene, monkeypatch, "end")
    assert lock.met == 1
    lock.release()

    wedged = await record(scene)
    assert wedged.running
    refusal = await scene.app.branches.refusal("ada")
    assert refusal is not None and "has not finished executing" in refusal

    await _retried(scene)

    ended = await record(scene)
    assert not ended.running and ended.end_reason.startswith("completed by ada")
    assert ended.result is ResultState.WAITING and ended.requested_by_name == "ana"
    assert [s.value for s in ended.steps] == ["done", "done"]
    assert len(result_cards(scene)) == 1
    refusal = await scene.app.branches.refusal("ada")
    assert refusal is not None and "waits for a decision" in refusal
    assert scene.app.owed.landed == [f"end-execution {ended.plan_id}"]


async def _locked_at(
    plan_scene: Any, monkeypatch: pytest.MonkeyPatch, method: str
) -> tuple[Any, WriteLock]:
    """``completed``, with ``ExecutionStore.<method>``'s first call meeting another
    connection's write lock (armed once the bot is up, before the plan starts)."""
    made: dict[str, Any] = {}

    async def scene_maker(*args: Any, **kwargs: Any) -> Any:
        made["scene"] = await plan_scene(*args, **kwargs)
        return made["scene"]

    def prepare(workspace: Any) -> None:
        made["lock"] = lock_at(monkeypatch, made["scene"].app, ExecutionStore, method)

    scene, _ = await completed(scene_maker, prepare=prepare)
    return scene, made["lock"]


async def test_a_card_whose_message_could_not_be_recorded_is_not_posted_twice(
    plan_scene: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The completion card is posted, and recording its message meets the lock: the card
    is owed, and the next try records and edits that message; no second copy."""
    scene, lock = await _locked_at(plan_scene, monkeypatch, "set_card")
    assert lock.met == 1
    lock.release()
    (posted,) = result_cards(scene)
    assert (await record(scene)).card_message is None

    await scene.env.advance_time(OWED_CARDS_SWEEP)  # every retry and sweep of the cards
    await scene.env.settle()

    (card,) = result_cards(scene)
    assert card.id == posted.id
    assert (await record(scene)).card_message == posted.id


async def test_a_copy_that_is_not_the_recorded_card_is_closed_at_its_click(
    plan_scene: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The process dies between posting the card and recording it; the next start posts the
    card again. The first copy's Merge does nothing but close that copy."""
    scene, lock = await _locked_at(plan_scene, monkeypatch, "set_card")
    lock.release()
    (first,) = result_cards(scene)

    await scene.restart()
    await scene.env.settle()
    first_copy, second = result_cards(scene)
    assert first_copy.id == first.id and (await record(scene)).card_message == second.id

    answer = reply(await scene.ana.click(first_copy, label="Merge"))

    assert "not the one in use" in answer and str(second.id) in answer
    assert (await record(scene)).result is ResultState.WAITING
    stored = scene.env.backend.messages[first.channel.id][first.id]
    assert not stored.components, "the copy still shows live buttons"
    merged = reply(await scene.ana.click(result_cards(scene)[-1], label="Merge"))
    assert "as a fast-forward" in merged
