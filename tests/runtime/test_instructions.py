"""Where the host's instructions go in a conversation that is only appended to: a system
message right after the newest user message (tool results or not) on a model that takes
them, else text in the newest plain user message while it is unanswered; read back from
the conversation itself."""

from __future__ import annotations

from typing import Any

from plancord.agent.instructions import (
    REASSERT_AFTER_TOKENS,
    added_tools,
    betas_for,
    instructions_block,
    merge_user,
    place,
    regime_due,
    told_prompt,
    tool_addition,
)


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def user(*blocks: dict[str, Any]) -> dict[str, Any]:
    return {"role": "user", "content": list(blocks)}


def assistant(*blocks: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": list(blocks)}


RESULTS = user({"type": "tool_result", "tool_use_id": "a", "content": "ok"})
REGIME = text("<plancord-regime>\nPhase: normal\n</plancord-regime>")


def test_a_system_message_follows_the_newest_user_message_even_with_tool_results() -> None:
    history = [user(text("hi")), assistant(text("looking")), RESULTS]
    placement = place(history, [REGIME], system_messages=True)
    assert placement is not None
    assert (placement.start, placement.tail) == (3, [{"role": "system", "content": [REGIME]}])


def test_a_second_instruction_joins_the_unanswered_system_message() -> None:
    history = [user(text("hi")), {"role": "system", "content": [REGIME]}]
    placement = place(history, [text("more")], system_messages=True)
    assert placement is not None
    assert placement.start == 1
    assert placement.tail == [{"role": "system", "content": [REGIME, text("more")]}]


def test_nothing_is_placed_after_the_models_turn() -> None:
    history = [user(text("hi")), assistant(text("hello"))]
    assert place(history, [REGIME], system_messages=True) is None
    assert place(history, [REGIME], system_messages=False) is None


def test_without_system_messages_the_regime_joins_a_plain_user_message_only() -> None:
    plain = [user(text("hi"))]
    placement = place(plain, [REGIME], system_messages=False)
    assert placement is not None
    assert placement.tail == [user(text("hi"), REGIME)]
    # No text right after tool results: it waits for the next plain user message.
    assert (
        place([user(text("hi")), assistant(text("x")), RESULTS], [REGIME], system_messages=False)
        is None
    )


def test_user_content_joins_the_unanswered_user_message_before_the_instructions() -> None:
    system = {"role": "system", "content": [REGIME]}
    history = [user(text("hi")), system]
    placement = merge_user(history, [text("ana: more")])
    assert placement.start == 0
    assert placement.tail == [user(text("hi"), text("ana: more")), system]
    answered = [user(text("hi")), system, assistant(text("hello"))]
    placement = merge_user(answered, [text("ana: more")])
    assert (placement.start, placement.tail) == (3, [user(text("ana: more"))])


def test_the_regime_is_due_when_new_changed_or_long_ago() -> None:
    history = [user(text("hi"), REGIME)]
    assert regime_due([user(text("hi"))], REGIME["text"])
    assert not regime_due(history, REGIME["text"])
    assert regime_due(history, REGIME["text"].replace("normal", "gathering"))
    long_after = [*history, assistant(text("y" * 4 * REASSERT_AFTER_TOKENS))]
    assert regime_due(long_after, REGIME["text"])


def test_tools_added_and_instructions_told_are_read_back_from_the_conversation() -> None:
    schema = {"name": "mcp__tracker__list", "description": "d", "input_schema": {"type": "object"}}
    system = {
        "role": "system",
        "content": [text(instructions_block("Be brief.")), tool_addition(schema)],
    }
    history = [user(text("hi")), system]
    assert added_tools(history) == [schema]
    assert betas_for(history)
    assert betas_for([user(text("hi"))]) == ()
    assert told_prompt(history) == "Be brief."
    assert told_prompt([user(text("hi"))]) is None
