"""``words_of``: what a person sees of a reply, on the reply shapes the docs give for the
displays plancord asks for (``updates``, ``between_tools``, ``omitted``)."""

from __future__ import annotations

from plancord.llm.replies import words_of

REASONING = {"type": "thinking", "thinking": "", "signature": "sig-reasoning"}
"""Reasoning under display ``omitted`` or ``updates``: empty text, a signature."""


def update(text: str) -> dict[str, str]:
    """A progress update written between tool calls: a thinking block with its text."""
    return {"type": "thinking", "thinking": text, "signature": "sig-update"}


def tool_call(name: str) -> dict[str, object]:
    return {"type": "tool_use", "id": f"toolu_{name}", "name": name, "input": {}}


def test_progress_updates_between_tool_calls_are_shown_reasoning_is_not() -> None:
    """Sonnet 5.5 with display "updates": the reasoning block is empty, the update has text."""
    content = [REASONING, update("I'll read the config first."), tool_call("view")]
    assert words_of(content) == "I'll read the config first."


def test_between_tools_updates_are_shown() -> None:
    """``between_tools``: no up-front thinking; the updates come back as thinking blocks."""
    content = [update("Checking the tests next."), tool_call("grep"), update("Found it.")]
    assert words_of(content) == "Checking the tests next.\nFound it."


def test_a_final_answer_is_its_text_blocks_in_order() -> None:
    content = [REASONING, {"type": "text", "text": "Two files."}, {"type": "text", "text": "Done."}]
    assert words_of(content) == "Two files.\nDone."


def test_redacted_and_empty_blocks_and_tool_calls_show_nothing() -> None:
    content = [
        {"type": "redacted_thinking", "data": "opaque"},
        REASONING,
        update("   "),
        {"type": "text", "text": "\n"},
        tool_call("bash"),
    ]
    assert words_of(content) == ""


def test_text_keeps_its_own_layout() -> None:
    code = "Here:\n```\nx = 1\n```"
    assert words_of([update("Writing the fix."), {"type": "text", "text": code}]) == (
        "Writing the fix.\n" + code
    )
