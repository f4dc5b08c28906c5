"""A conversation the API refuses as too large, made to fit again.

Why this exists: every tool bounds its own result, but a conversation kept from before a
bound existed, or a result whose bound the operator raised, can still make every later
request too large for the API (413, or a prompt past the context window that compaction
cannot shorten, since the newest turns are kept verbatim). Without a repair the agent is
stuck for good: each new message sends the same conversation again. So the largest tool
result is replaced by a note saying what happened and how to get a smaller one; the tool
call and its id stay, so the conversation remains whole.
"""

from __future__ import annotations

import json
from typing import Any

from plancord.storage.conversations import Message

#: A result smaller than this is never the reason a request is too large.
MIN_REMOVED_BYTES = 4096


def _size(content: Any) -> int:
    return len(json.dumps(content, ensure_ascii=False).encode("utf-8"))


def without_largest_result(history: list[Message]) -> list[Message] | None:
    """``history`` with its largest tool result (of at least ``MIN_REMOVED_BYTES``) replaced
    by a note; None when there is none to remove."""
    largest: tuple[int, int, int] | None = None
    for m, message in enumerate(history):
        content = message.get("content")
        if message.get("role") != "user" or not isinstance(content, list):
            continue
        for b, block in enumerate(content):
            if not isinstance(block, dict) or block.get("type") != "tool_result":
                continue
            size = _size(block.get("content", ""))
            if size >= MIN_REMOVED_BYTES and (largest is None or size > largest[0]):
                largest = (size, m, b)
    if largest is None:
        return None
    size, m, b = largest
    note = (
        f"[This tool result ({size:,} bytes) was removed: the model API refused the "
        "conversation as too large. Call the tool again with narrower arguments if you "
        "still need it.]"
    )
    blocks = list(history[m]["content"])
    blocks[b] = {**blocks[b], "content": note}
    repaired = list(history)
    repaired[m] = {**history[m], "content": blocks}
    return repaired
