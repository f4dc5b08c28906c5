"""The host's instructions, appended to a conversation and never edited afterwards.

Why this exists: models with preserved thinking refuse a request whose ``system``, ``tools``
or earlier messages changed since a thinking block was produced, so whatever the host must
tell the model later — the regime (phase, what is allowed, the plan and its steps), tools
that arrived after the conversation started (an MCP server), a changed system prompt — is a
new message at the end, as the API's docs on changing tools or instructions say: a
``role: "system"`` message where the model takes one (right after the newest user message,
even one holding tool results, and before the model's answer), else a text block in the
newest user message while it is unanswered and holds no tool results (text right after tool
results invites empty replies), else it waits for the next such message.

What has been told is read back from the conversation itself (the newest regime block, the
tools added, the newest instructions block), so a restart, a compaction or a rewritten tail
never leaves the record of what was told out of step with what the model saw.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from plancord.agent.context import estimate_tokens, unanswered_from
from plancord.storage.conversations import Message

REGIME_OPEN = "<plancord-regime>"
INSTRUCTIONS_OPEN = "<plancord-instructions>"
INSTRUCTIONS_CLOSE = "</plancord-instructions>"
#: The regime is asserted again when this many tokens (estimated) came after its last word.
REASSERT_AFTER_TOKENS = 30_000
#: Betas a request needs once its messages add tools by definition.
TOOL_CHANGE_BETAS = ("mid-conversation-tool-changes-2026-07-01", "inline-tools-2026-09-15")


def _texts(message: Message) -> Iterator[str]:
    for block in message["content"]:
        if block.get("type") == "text" and isinstance(block.get("text"), str):
            yield block["text"]


def last_regime(history: Sequence[Message]) -> tuple[int, str] | None:
    """The index and text of the newest regime the conversation holds."""
    for index in range(len(history) - 1, -1, -1):
        for text in _texts(history[index]):
            if text.startswith(REGIME_OPEN):
                return index, text
    return None


def regime_due(history: Sequence[Message], regime: str) -> bool:
    """Whether ``regime`` must be appended: never told, changed since, or told long ago."""
    found = last_regime(history)
    if found is None:
        return True
    index, told = found
    if told != regime:
        return True
    return estimate_tokens(list(history[index + 1 :])) >= REASSERT_AFTER_TOKENS


def added_tools(history: Sequence[Message]) -> list[dict[str, Any]]:
    """The tool definitions the conversation's system messages added, in order."""
    added: list[dict[str, Any]] = []
    for message in history:
        if message["role"] != "system":
            continue
        for block in message["content"]:
            tool = block.get("tool") if block.get("type") == "tool_addition" else None
            if isinstance(tool, dict) and tool.get("type") == "tool_definition":
                added.append(tool["definition"])
    return added


def betas_for(history: Sequence[Message]) -> tuple[str, ...]:
    return TOOL_CHANGE_BETAS if added_tools(history) else ()


def instructions_block(prompt: str) -> str:
    return (
        f"{INSTRUCTIONS_OPEN}\nYour instructions for this agent changed; from now on they "
        f"are (they replace the earlier ones):\n{prompt}\n{INSTRUCTIONS_CLOSE}"
    )


def told_prompt(history: Sequence[Message]) -> str | None:
    """The agent prompt the newest instructions block told, or None when none did."""
    for index in range(len(history) - 1, -1, -1):
        for text in _texts(history[index]):
            if text.startswith(INSTRUCTIONS_OPEN) and text.endswith(INSTRUCTIONS_CLOSE):
                body = text[len(INSTRUCTIONS_OPEN) : -len(INSTRUCTIONS_CLOSE)].strip("\n")
                return body.split("\n", 1)[1] if "\n" in body else ""
    return None


def tool_addition(schema: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_addition", "tool": {"type": "tool_definition", "definition": schema}}


@dataclass(frozen=True, slots=True)
class Placement:
    """Where an instruction goes: the stored conversation from ``start`` on is replaced by
    ``tail`` (the unanswered tail, rewritten, or a new message appended)."""

    start: int
    tail: list[Message]


def place(
    history: Sequence[Message], blocks: list[dict[str, Any]], *, system_messages: bool
) -> Placement | None:
    """Where ``blocks`` (an instruction) can be written now, or None when it must wait for
    the next user message (``system_messages``: the model takes ``role: "system"``)."""
    if not history or history[-1]["role"] == "assistant":
        return None
    last = history[-1]
    end = len(history) - 1
    if system_messages:
        if last["role"] == "system":
            return Placement(end, [{"role": "system", "content": [*last["content"], *blocks]}])
        return Placement(len(history), [{"role": "system", "content": list(blocks)}])
    if any(b.get("type") not in ("text",) for b in blocks):
        return None
    if last["role"] != "user" or any(b.get("type") == "tool_result" for b in last["content"]):
        return None
    return Placement(end, [{"role": "user", "content": [*last["content"], *blocks]}])


def merge_user(history: Sequence[Message], blocks: list[dict[str, Any]]) -> Placement:
    """Where user content goes: into the newest user message of the unanswered tail (before
    the instructions that follow it, which stay last), else a new user message."""
    start = unanswered_from(history)
    for index in range(len(history) - 1, start - 1, -1):
        message = history[index]
        if message["role"] == "user":
            merged = {"role": "user", "content": [*message["content"], *blocks]}
            return Placement(index, [merged, *history[index + 1 :]])
    return Placement(len(history), [{"role": "user", "content": list(blocks)}])
