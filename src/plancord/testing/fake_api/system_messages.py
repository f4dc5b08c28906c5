"""Mid-conversation system messages: ``role: "system"`` entries inside ``messages``.

docs/build-with-claude/mid-conversation-system-messages ("Limitations"): not the first entry;
a system message (or a run of them, treated as one section) must immediately follow a
``user`` turn (one carrying ``tool_result`` blocks counts) or an ``assistant`` turn ending in
a server tool result, and must precede an ``assistant`` turn or end ``messages``; anywhere
else, between a ``tool_use`` and its ``tool_result`` included, is a 400. Content is a string
or ``text`` blocks (``tool_addition``/``tool_removal`` with their beta). ``clear_at``
(turn-scoped, docs/build-with-claude/preserved-thinking) and a per-message ``output_config``
(docs/build-with-claude/effort) need their beta headers. Models without them refuse the role
as the fake always did (``service_rules.ModelRule.system_messages``).
"""

from __future__ import annotations

from typing import Any

from plancord.testing.fake_api.rules import reject
from plancord.testing.fake_api.version_rules import SYSTEM_CLEAR_AT_BETA, RequestContext
from plancord.testing.fake_api.wire import JsonObject

SYSTEM_ROLE_REFUSED = (
    'messages: Unexpected role "system". The Messages API accepts a top-level `system` '
    'parameter, not "system" as an input message role.'
)
MID_CONVERSATION_EFFORT_BETA = "mid-conversation-output-config-2026-07-01"
_OPTIONAL_KEYS = {"clear_at": SYSTEM_CLEAR_AT_BETA, "output_config": MID_CONVERSATION_EFFORT_BETA}


def check_system_message_keys(message: JsonObject, index: int, context: RequestContext) -> None:
    path = f"messages.{index}"
    if index == 0:
        raise reject(
            f"{path}: A system message cannot be the first entry in `messages`. Use the "
            "top-level `system` field for instructions that apply from the very start."
        )
    for key in message:
        if key in ("role", "content"):
            continue
        beta = _OPTIONAL_KEYS.get(key)
        if beta is None or not context.has(beta):
            raise reject(f"{path}.{key}: Extra inputs are not permitted")
    clear_at = message.get("clear_at")
    if clear_at is not None and clear_at != "next_user_message":
        raise reject(f"{path}.clear_at: Input should be 'next_user_message'")


def _ends_in_server_tool_result(message: JsonObject) -> bool:
    content = message.get("content")
    if not isinstance(content, list) or not content:
        return False
    last: Any = content[-1]
    kind = last.get("type", "") if isinstance(last, dict) else ""
    return isinstance(kind, str) and kind.endswith("_tool_result") and kind != "tool_result"


def check_system_placement(messages: list[JsonObject]) -> None:
    """Each run of system messages follows a user turn and precedes an assistant turn."""
    index = 0
    while index < len(messages):
        if messages[index].get("role") != "system":
            index += 1
            continue
        start = index
        while index < len(messages) and messages[index].get("role") == "system":
            index += 1
        before = messages[start - 1] if start > 0 else {}
        after_ok = index == len(messages) or messages[index].get("role") == "assistant"
        before_ok = before.get("role") == "user" or (
            before.get("role") == "assistant" and _ends_in_server_tool_result(before)
        )
        if not (before_ok and after_ok):
            raise reject(
                f"messages.{start}: A `system` message must immediately follow a `user` turn "
                "(or an `assistant` turn ending in a server tool result) and either end "
                "`messages` or be immediately followed by an `assistant` turn."
            )
