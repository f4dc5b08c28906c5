"""The conversation as stored: repairing interrupted histories append-only, and what an edit
of an earlier turn costs the thinking after it."""

from __future__ import annotations

from typing import Any

from plancord.agent.context import (
    INTERRUPTED,
    INTERRUPTED_BY_TOOL,
    repair_history,
    settle_edit,
    without_thinking,
)


def use(*ids: str) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": [{"type": "tool_use", "id": i, "name": "view", "input": {}} for i in ids],
    }


def result(i: str) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": i, "content": "ok"}


def user(*blocks: dict[str, Any]) -> dict[str, Any]:
    return {"role": "user", "content": list(blocks)}


TEXT = {"type": "text", "text": "ana: hi"}


def test_a_valid_history_is_left_alone() -> None:
    history = [user(TEXT), use("a", "b"), user(result("a"), result("b"))]
    assert repair_history(history) == (history, False)


def test_a_trailing_unanswered_call_gets_an_error_result() -> None:
    fixed, changed = repair_history([user(TEXT), use("a")])
    assert changed
    assert fixed[-1]["role"] == "user"
    block = fixed[-1]["content"][0]
    assert block == {
        "type": "tool_result",
        "tool_use_id": "a",
        "content": INTERRUPTED,
        "is_error": True,
    }


def test_an_interrupted_explore_call_says_its_sub_agent_was_ended_by_the_restart() -> None:
    explore = {"type": "tool_use", "id": "e", "name": "explore", "input": {"question": "?"}}
    viewed = {"type": "tool_use", "id": "v", "name": "view", "input": {}}
    fixed, changed = repair_history(
        [user(TEXT), {"role": "assistant", "content": [explore, viewed]}]
    )
    assert changed
    answers = {b["tool_use_id"]: b["content"] for b in fixed[-1]["content"]}
    assert answers == {"e": INTERRUPTED_BY_TOOL["explore"], "v": INTERRUPTED}
    assert "ended by the restart" in answers["e"]


def test_a_partly_answered_call_is_completed_before_later_text() -> None:
    fixed, changed = repair_history([user(TEXT), use("a", "b"), user(result("a"), TEXT)])
    assert changed
    kinds = [(b["type"], b.get("tool_use_id")) for b in fixed[-1]["content"]]
    assert kinds == [("tool_result", "a"), ("tool_result", "b"), ("text", None)]


def test_an_orphan_result_is_dropped() -> None:
    fixed, changed = repair_history([user(TEXT), use("a"), user(result("a"), result("zz"))])
    assert changed
    assert [b["tool_use_id"] for b in fixed[-1]["content"]] == ["a"]


THOUGHT = {"type": "thinking", "thinking": "", "signature": "sig"}


def thought(*blocks: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": [THOUGHT, *blocks]}


def test_a_call_cut_off_at_the_end_is_answered_by_appending() -> None:
    history = [user(TEXT), thought({"type": "tool_use", "id": "a", "name": "view", "input": {}})]
    fixed, changed = repair_history(history)
    start, tail = settle_edit(history, fixed)
    assert changed
    assert (start, tail) == (2, fixed[2:])
    assert fixed[:2] == history


def test_an_edit_of_an_answered_turn_drops_the_thinking_after_it_only() -> None:
    history = [
        user(TEXT),
        thought(*use("a")["content"]),
        user(result("a")),
        thought({"type": "text", "text": "seen"}),
        user(TEXT),
    ]
    edited = [*history[:2], user({**result("a"), "content": "removed"}), *history[3:]]
    start, tail = settle_edit(history, edited)
    assert start == 2
    assert tail[0] == edited[2]
    assert tail[1] == {"role": "assistant", "content": [{"type": "text", "text": "seen"}]}
    assert history[1]["content"][0] == THOUGHT  # the thinking before the edit stays


def test_an_edit_of_the_unanswered_tail_keeps_every_thinking_block() -> None:
    history = [user(TEXT), thought({"type": "text", "text": "hi"}), user(TEXT)]
    edited = [*history[:2], user(TEXT, {"type": "text", "text": "more"})]
    assert settle_edit(history, edited) == (2, edited[2:])


def test_a_turn_of_nothing_but_thinking_keeps_a_note() -> None:
    assert without_thinking([thought()]) == [
        {"role": "assistant", "content": [{"type": "text", "text": "(thought)"}]}
    ]
