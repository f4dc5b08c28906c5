"""What the agent explored, condensed for the reviewer within a budget of characters.

The reviewer judges whether a plan follows from what the agent saw, without re-reading the
whole conversation: each tool call as one line (name, input, how the result went) and, of
each result, only the lines the plan cites (a file its steps name, a word it quotes in
backticks). Over budget, the oldest calls lose their excerpts first, then their lines; what
is left out is counted, never silently dropped.

It reads the conversation as the store keeps it: Messages API messages, ``{"role",
"content": [blocks]}``, with ``tool_use`` blocks in assistant turns and ``tool_result``
blocks (text or a list of blocks) in the user turn after them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from plancord.core.plan import Plan

DIGEST_CHARS: Final = 12_000
CALL_LINE_CHARS: Final = 240
EXCERPT_LINE_CHARS: Final = 200
EXCERPT_LINES_PER_RESULT: Final = 8
MIN_TERM_CHARS: Final = 3
_BACKTICKED = re.compile(r"`([^`\n]{3,100})`")
_WILDCARDS = frozenset("*?[")


@dataclass
class _Entry:
    call: str
    excerpt: list[str] = field(default_factory=list)

    def size(self) -> int:
        return sum(len(line) + 1 for line in [self.call, *self.excerpt])


def exploration_digest(
    messages: Sequence[Mapping[str, Any]], plan: Plan, *, max_chars: int = DIGEST_CHARS
) -> str:
    """The agent's tool calls in ``messages`` and the cited parts of their results, in at
    most ``max_chars`` characters; empty when the agent called no tool."""
    terms = cited_terms(plan)
    results = _results_by_id(messages)
    entries: list[_Entry] = []
    for block in _blocks(messages, "assistant"):
        if block.get("type") != "tool_use":
            continue
        tool_use_id = str(block.get("id", ""))
        text, is_error = results.get(tool_use_id, ("", False))
        entries.append(
            _entry(len(entries) + 1, block, text, is_error, tool_use_id in results, terms)
        )
    return _fit(entries, max_chars)


def cited_terms(plan: Plan) -> tuple[str, ...]:
    """What the plan points at: each step's file paths (a glob's directory part), their
    file names, and words quoted in backticks in the steps and the context notes."""
    terms: list[str] = []
    for step in plan.steps:
        for pattern in step.files:
            literal = _literal_part(pattern)
            terms += [literal, literal.rsplit("/", 1)[-1]]
        terms += _BACKTICKED.findall(step.description)
    terms += _BACKTICKED.findall(plan.context_notes)
    unique: dict[str, None] = {}
    for term in terms:
        term = term.strip().strip("/")
        if len(term) >= MIN_TERM_CHARS:
            unique.setdefault(term, None)
    return tuple(unique)


def _literal_part(pattern: str) -> str:
    """``src/app/*.py`` → ``src/app``; a path without wildcards is itself."""
    parts: list[str] = []
    for part in pattern.split("/"):
        if _WILDCARDS & set(part):
            break
        parts.append(part)
    return "/".join(parts)


def _blocks(messages: Iterable[Mapping[str, Any]], role: str) -> Iterable[Mapping[str, Any]]:
    for message in messages:
        if message.get("role") != role:
            continue
        content = message.get("content")
        if isinstance(content, list):
            yield from (block for block in content if isinstance(block, Mapping))


def _results_by_id(messages: Sequence[Mapping[str, Any]]) -> dict[str, tuple[str, bool]]:
    results: dict[str, tuple[str, bool]] = {}
    for block in _blocks(messages, "user"):
        if block.get("type") == "tool_result":
            text = _result_text(block.get("content"))
            results[str(block.get("tool_use_id", ""))] = (text, block.get("is_error") is True)
    return results


def _result_text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(inner.get("text", ""))
            for inner in content
            if isinstance(inner, Mapping) and inner.get("type") == "text"
        )
    return ""


def _entry(
    number: int,
    block: Mapping[str, Any],
    text: str,
    is_error: bool,
    answered: bool,
    terms: Sequence[str],
) -> _Entry:
    name = _short(str(block.get("name", "?")), 64)
    try:
        shown = json.dumps(block.get("input", {}), ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError):
        shown = "{…}"
    if not answered:
        outcome = "no result"
    elif is_error:
        outcome = f"error: {_short(' '.join(text.split()), 80)}"
    else:
        outcome = f"{len(text)} chars, {text.count(chr(10)) + 1 if text else 0} lines"
    call = _short(f"{number}. {name} {shown} → {outcome}", CALL_LINE_CHARS)
    excerpt: list[str] = []
    if answered and not is_error and terms:
        for line in text.splitlines():
            if any(term in line for term in terms):
                excerpt.append("   | " + _short(line.strip(), EXCERPT_LINE_CHARS))
                if len(excerpt) == EXCERPT_LINES_PER_RESULT:
                    break
    return _Entry(call, excerpt)


def _fit(entries: list[_Entry], max_chars: int) -> str:
    """Oldest excerpts go first, then the oldest call lines, until the rest fits."""
    total = sum(entry.size() for entry in entries)
    for entry in entries:
        if total <= max_chars:
            break
        total -= entry.size() - (len(entry.call) + 1)
        entry.excerpt = []
    dropped = 0
    while entries and total + (len(_dropped_line(dropped)) + 1 if dropped else 0) > max_chars:
        total -= entries.pop(0).size()
        dropped += 1
    lines = [_dropped_line(dropped)] if dropped else []
    for entry in entries:
        lines += [entry.call, *entry.excerpt]
    return "\n".join(lines)[:max_chars]


def _dropped_line(count: int) -> str:
    return f"({count} earlier tool call{'s' if count != 1 else ''} left out to fit)"


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
