"""Partial failures leave an accurate message: a database that refuses the record of tool
results after the tools ran does not claim that nothing was changed."""

from __future__ import annotations

from typing import Any

import pytest

from plancord.core.errors import StorageError
from plancord.storage.conversations import ConversationStore, Message
from tests.fakes.anthropic_server import ToolCall, text_turn, tool_turn
from tests.runtime.conftest import Harness

LOCKED = StorageError(
    "The database /x/plancord.db is locked by another process; nothing was changed. "
    "Try again in a moment.",
    "locked",
)


async def test_a_lock_after_a_tool_ran_does_not_say_nothing_changed(
    make_harness: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    harness: Harness = await make_harness(
        [
            tool_turn(ToolCall("create_file", {"path": "made.txt", "content": "real\n"})),
            text_turn("Checked: made.txt exists."),
        ]
    )
    original = ConversationStore.append

    async def locked_for_results(
        self: ConversationStore, agent: str, message: Message, at: Any
    ) -> None:
        if any(b.get("type") == "tool_result" for b in message["content"]):
            raise LOCKED
        await original(self, agent, message, at)

    monkeypatch.setattr(ConversationStore, "append", locked_for_results)
    await harness.say("make the file")
    monkeypatch.setattr(ConversationStore, "append", original)

    assert (harness.workspace / "made.txt").read_text() == "real\n"
    said = harness.channel.said[-1]
    assert "nothing was changed" not in said
    assert "ran, but their results could not be saved: create_file(made.txt)" in said
    assert "locked by another process" in said

    # The next turn sees the call marked as interrupted, so the conversation stays valid.
    await harness.say("go on")
    assert harness.channel.said[-1] == "Checked: made.txt exists."
    results = harness.tool_results(1)
    assert results[0]["is_error"] is True
