"""The prefix of a thinking block, canonicalised as the prefix check compares it.

docs/build-with-claude/preserved-thinking ("What counts as an edit") and .../prefix-checks
decide what is part of a block's prefix; ``PREFIX_DETERMINATIONS`` is that table, as this
fake applies it. The prefix is hashed in three parts (top-level ``system``, ``tools``, and
the messages before the block), so a refusal can say which one changed.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from plancord.testing.fake_api.prompt_cache import canonical_json
from plancord.testing.fake_api.wire import JsonObject

_PAGE = "docs/build-with-claude/preserved-thinking"
PREFIX_DETERMINATIONS: tuple[tuple[str, str, str], ...] = (
    ("append messages at the end", "valid", _PAGE),
    ("edit, reorder or delete an earlier user, assistant or system message", "invalid", _PAGE),
    ("add a text block to an earlier user turn, or remove one added last time", "invalid", _PAGE),
    ("change the top-level system string or blocks", "invalid", _PAGE),
    ("add, remove, rename or edit a tool in tools", "invalid", _PAGE),
    ("add a defer_loading tool that nothing references yet", "valid: not hashed", _PAGE),
    ("add, move or remove cache_control markers", "valid: stripped before hashing", _PAGE),
    (
        "change a parameter outside system, tools and messages (max_tokens, output_config, "
        "tool_choice, thinking, metadata; effort on a system message)",
        "valid: not hashed",
        _PAGE,
    ),
    (
        "thinking and redacted_thinking blocks",
        "not part of the prefix; each records the one before it (a chain)",
        _PAGE,
    ),
    ("remove thinking blocks from the start of the history", "valid", _PAGE),
    (
        "remove or move a thinking block between others, an empty one included",
        "invalid for it and every later one",
        f"{_PAGE}/prefix-checks",
    ),
    (
        "content as a string, or as one text block with that text",
        "the same (this fake's determination: the API renders them alike)",
        "fake",
    ),
    ("a key whose value is null (citations: null)", "the same as the key left out", "fake"),
)


def _canonical_block(block: Any) -> Any:
    if not isinstance(block, dict):
        return block
    canonical = {
        key: value for key, value in block.items() if key != "cache_control" and value is not None
    }
    content = canonical.get("content")
    if block.get("type") == "tool_result" and isinstance(content, list):
        canonical["content"] = [_canonical_block(inner) for inner in content]
    return canonical


def _blocks(content: object) -> list[Any]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return list(content) if isinstance(content, list) else []


def is_thinking(block: object) -> bool:
    return isinstance(block, dict) and block.get("type") in ("thinking", "redacted_thinking")


def _digest(value: object) -> str:
    return hashlib.sha256(canonical_json(value).encode()).hexdigest()[:32]


def system_hash(body: JsonObject) -> str:
    return _digest([_canonical_block(block) for block in _blocks(body.get("system") or [])])


def tools_hash(body: JsonObject) -> str:
    """The tools the prefix holds: a ``defer_loading`` tool counts once a call names it."""
    used = {
        block.get("name")
        for message in body.get("messages") or []
        if isinstance(message, dict)
        for block in _blocks(message.get("content"))
        if isinstance(block, dict) and block.get("type") == "tool_use"
    }
    tools = [
        _canonical_block(tool)
        for tool in body.get("tools") or []
        if not (isinstance(tool, dict) and tool.get("defer_loading")) or tool.get("name") in used
    ]
    return _digest(tools)


@dataclass(frozen=True)
class ThinkingSite:
    """One thinking block of a request, and the hash of the messages before it."""

    index: int
    position: int
    block: JsonObject
    messages_hash: str

    @property
    def path(self) -> str:
        return f"messages.{self.index}.content.{self.position}"


class MessagesHasher:
    """A running hash over messages, thinking blocks left out, snapshotted at each block."""

    def __init__(self) -> None:
        self._running = hashlib.sha256(b"messages")

    def open_message(self, message: JsonObject) -> None:
        head = {
            key: value
            for key, value in message.items()
            if key not in ("content", "output_config") and value is not None
        }
        self._running.update(b"\0M" + canonical_json(head).encode())

    def add_block(self, block: object) -> None:
        self._running.update(b"\0B" + canonical_json(_canonical_block(block)).encode())

    def snapshot(self) -> str:
        return self._running.copy().hexdigest()[:32]

    def copy(self) -> MessagesHasher:
        twin = MessagesHasher()
        twin._running = self._running.copy()
        return twin


def thinking_sites(messages: list[Any], hasher: MessagesHasher) -> Iterator[ThinkingSite]:
    """Every thinking block of ``messages`` in order, feeding ``hasher`` the rest."""
    for index, message in enumerate(messages):
        if not isinstance(message, dict):
            continue
        hasher.open_message(message)
        for position, block in enumerate(_blocks(message.get("content"))):
            if is_thinking(block):
                yield ThinkingSite(index, position, block, hasher.snapshot())
            else:
                hasher.add_block(block)
