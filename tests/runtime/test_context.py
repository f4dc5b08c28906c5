"""Request building: breakpoints, the regime block, and repairing interrupted histories."""

from __future__ import annotations

from typing import Any

from plancord.agent.context import (
    INTERRUPTED,
    INTERRUPTED_BY_TOOL,
    build_messages,
    repair_history,
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


def test_breakpoints_sit_on_the_previous_and_current_tails() -> None:
    history = [user(TEXT), use("a"), user(result("a"))]
    messages = build_messages(history, "<plancord-regime>x</plancord-regime>")
    assert messages[0]["content"][-1]["cache_control"] == {"type": "ephemeral"}
    assert messages[2]["content"][0]["cache_control"] == {"type": "ephemeral"}
    assert messages[2]["content"][-1]["text"].startswith("<plancord-regime>")
    assert "cache_control" not in history[0]["content"][-1]
