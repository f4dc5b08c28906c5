"""Reading a captured Messages API request the way the bot builds them now: host
instructions (``role: "system"`` messages) may follow the newest user message, so "the last
message" of a request is not always the user's."""

from __future__ import annotations

from typing import Any


def last_user(request: dict[str, Any]) -> dict[str, Any]:
    """The newest user message of a request."""
    users = [m for m in request["messages"] if m["role"] == "user"]
    return users[-1] if users else {"role": "user", "content": []}


def first_call(request: dict[str, Any]) -> bool:
    """Whether a request is its conversation's first (the model has not answered yet)."""
    return answered(request) == 0


def answered(request: dict[str, Any]) -> int:
    """How many times the model has answered in this conversation so far."""
    return sum(1 for m in request["messages"] if m["role"] == "assistant")
