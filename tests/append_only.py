"""The append-only check on captured requests: what a model with preserved thinking needs.

Each request of the agent's conversation (its system prompt is plancord's) is checked
against the one before it: ``system`` and ``tools`` identical to the conversation's first
request, ``messages`` the previous request's messages, then the reply to it exactly as it
came, then only new messages. A request whose first message differs starts a new
conversation (compaction, a fresh context). Other requests (a summary, a review, a sub-agent)
are conversations of their own and are left out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from plancord.agent.context import BASE_SYSTEM_PROMPT

JsonObject = dict[str, Any]


@dataclass
class AppendOnly:
    checked: int = 0
    conversations: int = 0
    violations: list[str] = field(default_factory=list)


def is_agent_request(request: JsonObject) -> bool:
    system = request.get("system") or []
    first = system[0].get("text", "") if isinstance(system, list) and system else ""
    return isinstance(first, str) and first.startswith(BASE_SYSTEM_PROMPT[:60])


def reply_turn(response: JsonObject) -> JsonObject:
    """The assistant message the bot should keep from ``response`` (whitespace-only text is
    refused by the API when sent back, so it is the one thing left out)."""
    content = [
        b for b in response["content"] if b.get("type") != "text" or str(b.get("text", "")).strip()
    ]
    return {"role": "assistant", "content": content}


def check_append_only(requests: list[JsonObject], responses: list[JsonObject]) -> AppendOnly:
    """``requests`` and ``responses`` as the fake captured them (every request answered)."""
    outcome = AppendOnly()
    first: JsonObject | None = None
    previous: tuple[JsonObject, JsonObject] | None = None
    for number, (request, response) in enumerate(zip(requests, responses, strict=True)):
        if not is_agent_request(request):
            continue
        outcome.checked += 1
        messages = request["messages"]
        if first is None or messages[:1] != first["messages"][:1]:
            first, previous = request, (request, response)
            outcome.conversations += 1
            continue
        for key in ("system", "tools"):
            if request.get(key) != first.get(key):
                outcome.violations.append(f"request {number}: `{key}` differs from the first")
        before, answer = previous or (request, response)
        expected = [*before["messages"], reply_turn(answer)]
        if messages[: len(expected)] != expected:
            at = next(
                (i for i, (a, b) in enumerate(zip(messages, expected, strict=False)) if a != b),
                min(len(messages), len(expected)),
            )
            outcome.violations.append(
                f"request {number}: messages.{at} is not what the previous request and its "
                "reply had there"
            )
        previous = (request, response)
    return outcome
