"""What every request rule shares: the rejection the fake answers with, the block kinds the
API accepts, and the cache-breakpoint bookkeeping."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from plancord.testing.fake_api.script import ERROR_TYPES
from plancord.testing.fake_api.wire import (
    JsonObject,
)


class RequestRejected(Exception):
    """A request the real API would refuse, with the status and error it would answer."""

    def __init__(self, message: str, *, status: int = 400, error_type: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.error_type = error_type or ERROR_TYPES.get(status, "api_error")


def reject(message: str) -> RequestRejected:
    return RequestRejected(message)


USER_BLOCKS = frozenset({"text", "image", "document", "search_result", "tool_result"})


ASSISTANT_BLOCKS = frozenset({"text", "tool_use", "thinking", "redacted_thinking"})


SYSTEM_BLOCKS = frozenset({"text", "tool_addition", "tool_removal"})
"""docs/build-with-claude/mid-conversation-system-messages: text, and the tool changes."""


TOOL_RESULT_BLOCKS = frozenset({"text", "image", "document", "search_result", "tool_reference"})


IMAGE_SOURCES = frozenset({"base64", "url", "file"})


TOOL_CHOICES = frozenset({"auto", "any", "tool", "none"})


def tags(kinds: frozenset[str]) -> str:
    return ", ".join(f"'{kind}'" for kind in sorted(kinds))


@dataclass
class CacheMarks:
    """The `cache_control` markers met while validating, in prompt order."""

    ttls: list[str] = field(default_factory=list)

    def check(self, holder: Mapping[str, Any], path: str) -> bool:
        """Validate `holder["cache_control"]`; return whether it makes a breakpoint."""
        marker = holder.get("cache_control")
        if marker is None:
            return False
        where = f"{path}.cache_control" if path else "cache_control"
        if not isinstance(marker, dict):
            raise reject(f"{where}: Input should be a valid dictionary")
        if "type" not in marker:
            raise reject(f"{where}.type: Field required")
        if marker["type"] != "ephemeral":
            raise reject(f"{where}.type: Input should be 'ephemeral'")
        for key in marker:
            if key not in ("type", "ttl"):
                raise reject(f"{where}.{key}: Extra inputs are not permitted")
        ttl = marker.get("ttl", "5m")
        if ttl not in ("5m", "1h"):
            raise reject(f"{where}.ttl: Input should be '5m' or '1h'")
        self.ttls.append(ttl)
        return True


def check_text(block: JsonObject, path: str, *, owner: str) -> None:
    if "text" not in block:
        raise reject(f"{path}.text: Field required")
    text = block["text"]
    if not isinstance(text, str):
        raise reject(f"{path}.text: Input should be a valid string")
    if not text:
        raise reject(f"{owner}: text content blocks must be non-empty")
    if not text.strip():
        raise reject(f"{owner}: text content blocks must contain non-whitespace text")
