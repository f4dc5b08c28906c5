"""What a person should see of a model's reply.

Why this exists: on Sonnet 5.5 (and Opus 5.5, Fable 5.x) the short notes the model writes
between tool calls come back in ``thinking`` blocks, not ``text`` blocks
(models/sonnet-5-5/whats-new-sonnet-5-5, "Text between tool calls"). Showing only ``text``
blocks leaves the channel silent between tool calls; showing every thinking block would show
reasoning. The request shapes (``llm/thinking.py``) never ask for ``display: "summarized"``:
they ask for ``display: "updates"`` (progress updates carry their text, reasoning blocks come
back empty), ``between_tools`` (only progress updates come back as thinking, with their
text), or ``omitted`` (every thinking block empty). So under every request plancord sends,
a thinking block with text is a progress update, and one without text is hidden reasoning.
"""

from __future__ import annotations

from typing import Any


def words_of(content: list[dict[str, Any]]) -> str:
    """The reply's words in order: its ``text`` blocks and the text of its progress-update
    thinking blocks, one line apart (as ``text_of`` joins text blocks); never a redacted or
    empty (hidden) thinking block, never a tool call."""
    parts: list[str] = []
    for block in content:
        kind = block.get("type")
        if kind == "text":
            words = block.get("text")
        elif kind == "thinking":
            words = block.get("thinking")
        else:
            continue
        if isinstance(words, str) and words.strip():
            parts.append(words)
    return "\n".join(parts)
