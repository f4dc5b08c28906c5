"""Token estimates and the prompt-cache simulation: which prefix a request reads from the
cache, which it writes, and how long a cached prefix lives."""

from __future__ import annotations

import hashlib
import json
import math
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from plancord.testing.fake_api.wire import JsonObject


def canonical_json(value: object) -> str:
    """The serialisation token counts and cache keys are computed from."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def estimate_tokens(value: object) -> int:
    """About four bytes of canonical JSON per token, rounded up."""
    return math.ceil(len(canonical_json(value).encode()) / 4)


@dataclass(frozen=True)
class SimulatedUsage:
    """The usage block of one response, as the server computed it."""

    input_tokens: int
    output_tokens: int
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0

    @property
    def total_input_tokens(self) -> int:
        return self.input_tokens + self.cache_creation_input_tokens + self.cache_read_input_tokens

    def as_json(self) -> JsonObject:
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_creation_input_tokens": self.cache_creation_input_tokens,
            "cache_read_input_tokens": self.cache_read_input_tokens,
        }


@dataclass(frozen=True)
class _PromptPart:
    tokens: int
    prefix_hash: str
    breakpoint: bool


def _without_cache_control(block: JsonObject) -> JsonObject:
    stripped = {key: value for key, value in block.items() if key != "cache_control"}
    if block.get("type") == "tool_result" and isinstance(block.get("content"), list):
        stripped["content"] = [
            _without_cache_control(inner) if isinstance(inner, dict) else inner
            for inner in block["content"]
        ]
    return stripped


def _has_cache_control(block: JsonObject) -> bool:
    if block.get("cache_control") is not None:
        return True
    content = block.get("content")
    return (
        block.get("type") == "tool_result"
        and isinstance(content, list)
        and any(isinstance(inner, dict) and inner.get("cache_control") for inner in content)
    )


_NOT_CACHEABLE = frozenset({"thinking", "redacted_thinking"})
"""Blocks that cannot carry a breakpoint (docs/build-with-claude/prompt-caching)."""


def _raw_parts(body: JsonObject) -> Iterator[tuple[JsonObject, bool, object]]:
    """Each prompt part, whether it carries a breakpoint, and the block that could hold the
    automatic one (None where no breakpoint may go)."""
    for tool in body.get("tools") or []:
        yield {"tool": _without_cache_control(tool)}, _has_cache_control(tool), tool
    system = body.get("system")
    if isinstance(system, str) and system:
        yield {"system": {"type": "text", "text": system}}, False, system
    elif isinstance(system, list):
        for block in system:
            yield {"system": _without_cache_control(block)}, _has_cache_control(block), block
    for message in body["messages"]:
        content = message["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        for block in blocks:
            part = {"role": message["role"], "block": _without_cache_control(block)}
            holder: object = block
            if isinstance(content, str):
                holder = content
            elif block.get("type") in _NOT_CACHEABLE:
                holder = None
            yield part, _has_cache_control(block), holder


def _automatic_index(raw: list[tuple[JsonObject, bool, object]]) -> int | None:
    """docs/build-with-claude/prompt-caching: the top-level ``cache_control`` lands on the
    last cacheable block; past one that is not eligible, the nearest eligible one before it."""
    for index in range(len(raw) - 1, -1, -1):
        if raw[index][2] is not None:
            return index
    return None


def automatic_breakpoint(body: JsonObject) -> JsonObject | None:
    """The block the top-level breakpoint lands on, when it is a block (not a string)."""
    raw = list(_raw_parts(body))
    index = _automatic_index(raw)
    holder = raw[index][2] if index is not None else None
    return holder if isinstance(holder, dict) else None


def prompt_parts(body: JsonObject) -> list[_PromptPart]:
    """The prompt as ordered parts, each with the hash of the prefix it ends."""
    raw = list(_raw_parts(body))
    automatic = _automatic_index(raw) if body.get("cache_control") is not None else None
    if automatic is not None:
        raw[automatic] = (raw[automatic][0], True, raw[automatic][2])
    running = hashlib.sha256()
    running.update(b"[" + canonical_json(body["model"]).encode())
    parts: list[_PromptPart] = []
    for part, breakpoint, _ in raw:
        encoded = canonical_json(part).encode()
        running.update(b"," + encoded)
        snapshot = running.copy()
        snapshot.update(b"]")
        parts.append(_PromptPart(math.ceil(len(encoded) / 4), snapshot.hexdigest(), breakpoint))
    return parts


class PromptCache:
    """Which prompt prefixes have been cached, and what a request reads, writes and pays.

    Entries live for their TTL (5 minutes, or an hour when the request marks a breakpoint
    with ``ttl: "1h"``), measured on ``clock``; a read refreshes an entry's lifetime, as the
    real cache does. The TTL of a request is the longest it asks for on any breakpoint.
    A prefix shorter than ``min_cacheable_tokens`` is neither written nor read; left None,
    the floor is the model's (``account``'s ``model_floor``)."""

    def __init__(
        self,
        *,
        min_cacheable_tokens: int | None = 0,
        lookback_blocks: int = 20,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.min_cacheable_tokens = min_cacheable_tokens
        self.lookback_blocks = lookback_blocks
        self.clock = clock
        self._entries: dict[str, float] = {}

    def clear(self) -> None:
        """Forget every cached prefix, as if their TTL had expired."""
        self._entries.clear()

    def __len__(self) -> int:
        now = self.clock()
        return sum(1 for expiry in self._entries.values() if expiry > now)

    def _alive(self, prefix_hash: str, now: float) -> bool:
        expiry = self._entries.get(prefix_hash)
        return expiry is not None and expiry > now

    def account(
        self, body: JsonObject, output_tokens: int, *, model_floor: int = 0
    ) -> SimulatedUsage:
        """Compute the usage of a request and remember the prefixes it caches."""
        floor = self.min_cacheable_tokens if self.min_cacheable_tokens is not None else model_floor
        parts = prompt_parts(body)
        prefix_tokens: list[int] = []
        total = 0
        for part in parts:
            total += part.tokens
            prefix_tokens.append(total)
        breakpoints = [
            index
            for index, part in enumerate(parts)
            if part.breakpoint and prefix_tokens[index] >= floor
        ]
        now = self.clock()
        ttl = 3600.0 if '"ttl":"1h"' in canonical_json(body) else 300.0
        read_end = 0
        for index in breakpoints:
            for candidate in range(index, max(-1, index - self.lookback_blocks), -1):
                if self._alive(parts[candidate].prefix_hash, now):
                    read_end = max(read_end, candidate + 1)
                    self._entries[parts[candidate].prefix_hash] = max(
                        self._entries[parts[candidate].prefix_hash], now + ttl
                    )
                    break
        write_end = max(read_end, breakpoints[-1] + 1) if breakpoints else read_end
        read = prefix_tokens[read_end - 1] if read_end else 0
        written = (prefix_tokens[write_end - 1] if write_end else 0) - read
        for index in breakpoints:
            key = parts[index].prefix_hash
            self._entries[key] = max(self._entries.get(key, 0.0), now + ttl)
        return SimulatedUsage(
            input_tokens=total - read - written,
            output_tokens=output_tokens,
            cache_creation_input_tokens=written,
            cache_read_input_tokens=read,
        )
