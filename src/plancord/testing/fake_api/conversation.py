"""The conversation rules of the Messages API: roles alternate, blocks are well formed,
every tool_use is answered by the next user turn, thinking blocks come back unchanged."""

from __future__ import annotations

import hashlib
from typing import Any

from plancord.testing.fake_api.rules import (
    ASSISTANT_BLOCKS,
    IMAGE_SOURCES,
    TOOL_CHOICES,
    TOOL_RESULT_BLOCKS,
    USER_BLOCKS,
    CacheMarks,
    check_text,
    reject,
    tags,
)
from plancord.testing.fake_api.wire import MAX_CACHE_BREAKPOINTS, TOOL_USE_ID_PATTERN, JsonObject


def check_messages(messages: object, marks: CacheMarks) -> None:
    if not isinstance(messages, list):
        raise reject("messages: Input should be a valid list")
    if not messages:
        raise reject("messages: at least one message is required")
    previous_role: str | None = None
    last = len(messages) - 1
    for index, message in enumerate(messages):
        role = _check_role(message, index, previous_role)
        blocks = _blocks_of(message, index, final_assistant=index == last and role == "assistant")
        for position, block in enumerate(blocks):
            _check_block(block, f"messages.{index}.content.{position}", role, marks)
        previous_role = role
    _check_final_assistant(messages[-1])
    _check_tool_pairing(messages)


def _check_role(message: object, index: int, previous_role: str | None) -> str:
    path = f"messages.{index}"
    if not isinstance(message, dict):
        raise reject(f"{path}: Input should be a valid dictionary")
    for key in message:
        if key not in ("role", "content"):
            raise reject(f"{path}.{key}: Extra inputs are not permitted")
    if "role" not in message:
        raise reject(f"{path}.role: Field required")
    role = message["role"]
    if role == "system":
        raise reject(
            'messages: Unexpected role "system". The Messages API accepts a top-level '
            '`system` parameter, not "system" as an input message role.'
        )
    if role not in ("user", "assistant"):
        raise reject(f"{path}.role: Input should be 'user' or 'assistant'")
    if previous_role is None and role != "user":
        raise reject('messages: first message must use the "user" role')
    if role == previous_role:
        raise reject(
            'messages: roles must alternate between "user" and "assistant", '
            f'but found multiple "{role}" roles in a row'
        )
    return str(role)


def _blocks_of(message: JsonObject, index: int, *, final_assistant: bool) -> list[Any]:
    path = f"messages.{index}"
    if "content" not in message:
        raise reject(f"{path}.content: Field required")
    content = message["content"]
    if isinstance(content, str):
        if not content and final_assistant:
            return []
        if not content:
            raise reject(
                f"{path}: all messages must have non-empty content except for the optional "
                "final assistant message"
            )
        return [{"type": "text", "text": content}]
    if not isinstance(content, list):
        raise reject(f"{path}.content: Input should be a valid string or a valid list")
    if not content and not final_assistant:
        raise reject(
            f"{path}: all messages must have non-empty content except for the optional "
            "final assistant message"
        )
    return content


def _check_block(block: object, path: str, role: str, marks: CacheMarks) -> None:
    if not isinstance(block, dict):
        raise reject(f"{path}: Input should be a valid dictionary")
    if "type" not in block:
        raise reject(f"{path}.type: Field required")
    kind = block["type"]
    allowed = USER_BLOCKS if role == "user" else ASSISTANT_BLOCKS
    if kind not in USER_BLOCKS | ASSISTANT_BLOCKS:
        raise reject(
            f"{path}: Input tag '{kind}' found using 'type' does not match any of the "
            f"expected tags: {tags(allowed)}"
        )
    if kind not in allowed:
        raise reject(f"{path}: `{kind}` blocks are not allowed in {role} messages")
    if kind == "text":
        check_text(block, path, owner="messages")
    elif kind in ("image", "document"):
        _check_source(block, f"{path}.{kind}", image=kind == "image")
    elif kind == "tool_use":
        _check_tool_use(block, f"{path}.tool_use")
    elif kind == "tool_result":
        _check_tool_result(block, f"{path}.tool_result", marks)
    elif kind == "thinking":
        for key in ("thinking", "signature"):
            if not isinstance(block.get(key), str):
                raise reject(f"{path}.thinking.{key}: Field required")
        if block["signature"] != thinking_signature(block["thinking"]):
            raise reject(f"{path}: Invalid `signature` in `thinking` block")
    elif kind == "redacted_thinking" and not isinstance(block.get("data"), str):
        raise reject(f"{path}.redacted_thinking.data: Field required")
    if block.get("cache_control") is not None and kind in ("thinking", "redacted_thinking"):
        raise reject(f"{path}.{kind}.cache_control: Extra inputs are not permitted")
    marks.check(block, path)


def thinking_signature(thinking: str) -> str:
    """The signature this server gives a thinking block. The real API signs thinking so a
    client cannot edit it; a block passed back changed (or with another signature) fails."""
    digest = hashlib.sha256(b"fake-thinking-signature\0" + thinking.encode("utf-8"))
    return digest.hexdigest()


def check_thinking_param(body: JsonObject) -> None:
    thinking = body.get("thinking")
    if thinking is None:
        return
    if not isinstance(thinking, dict) or thinking.get("type") not in ("enabled", "disabled"):
        raise reject("thinking.type: Input should be 'enabled' or 'disabled'")
    if thinking["type"] == "disabled":
        return
    budget = thinking.get("budget_tokens")
    if not isinstance(budget, int) or budget < 1024:
        raise reject(
            "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024"
        )
    if isinstance(body.get("max_tokens"), int) and budget >= body["max_tokens"]:
        raise reject("`max_tokens` must be greater than `thinking.budget_tokens`")


def _check_source(block: JsonObject, path: str, *, image: bool) -> None:
    source = block.get("source")
    if source is None:
        raise reject(f"{path}.source: Field required")
    if not isinstance(source, dict):
        raise reject(f"{path}.source: Input should be a valid dictionary")
    if image and source.get("type") not in IMAGE_SOURCES:
        raise reject(
            f"{path}.source: Input tag '{source.get('type')}' found using 'type' does not "
            f"match any of the expected tags: {tags(IMAGE_SOURCES)}"
        )


def _check_tool_use(block: JsonObject, path: str) -> None:
    for key in ("id", "name", "input"):
        if key not in block:
            raise reject(f"{path}.{key}: Field required")
    if not isinstance(block["id"], str) or not TOOL_USE_ID_PATTERN.match(block["id"]):
        raise reject(f"{path}.id: String should match pattern '{TOOL_USE_ID_PATTERN.pattern}'")
    if not isinstance(block["name"], str) or not block["name"]:
        raise reject(f"{path}.name: Input should be a valid string")
    if not isinstance(block["input"], dict):
        raise reject(f"{path}.input: Input should be a valid dictionary")


def _check_tool_result(block: JsonObject, path: str, marks: CacheMarks) -> None:
    if not isinstance(block.get("tool_use_id"), str):
        raise reject(f"{path}.tool_use_id: Field required")
    if "is_error" in block and not isinstance(block["is_error"], bool):
        raise reject(f"{path}.is_error: Input should be a valid boolean")
    content = block.get("content")
    if content is None or isinstance(content, str):
        return
    if not isinstance(content, list):
        raise reject(f"{path}.content: Input should be a valid string or a valid list")
    for index, inner in enumerate(content):
        inner_path = f"{path}.content.{index}"
        if not isinstance(inner, dict):
            raise reject(f"{inner_path}: Input should be a valid dictionary")
        kind = inner.get("type")
        if kind not in TOOL_RESULT_BLOCKS:
            raise reject(
                f"{inner_path}: Input tag '{kind}' found using 'type' does not match any of "
                f"the expected tags: {tags(TOOL_RESULT_BLOCKS)}"
            )
        if kind == "text":
            check_text(inner, inner_path, owner="messages")
        elif kind in ("image", "document"):
            _check_source(inner, f"{inner_path}.{kind}", image=kind == "image")
        marks.check(inner, inner_path)


def _check_final_assistant(message: JsonObject) -> None:
    if message["role"] != "assistant":
        return
    content = message["content"]
    if isinstance(content, str):
        tail = content
    elif content and content[-1].get("type") == "text":
        tail = content[-1]["text"]
    else:
        return
    if tail and tail != tail.rstrip():
        raise reject("messages: final assistant content cannot end with trailing whitespace")


def _block_list(message: JsonObject) -> list[JsonObject]:
    content = message["content"]
    return [] if isinstance(content, str) else list(content)


def _check_tool_pairing(messages: list[JsonObject]) -> None:
    """Every tool_use is answered first thing in the next message; no result is orphaned."""
    seen_ids: set[str] = set()
    for index, message in enumerate(messages):
        blocks = _block_list(message)
        if message["role"] == "user":
            _check_results_answer_previous(messages, index)
            continue
        uses = [(pos, b["id"]) for pos, b in enumerate(blocks) if b["type"] == "tool_use"]
        for position, tool_use_id in uses:
            if tool_use_id in seen_ids:
                raise reject(f"messages.{index}.content.{position}: `tool_use` ids must be unique")
            seen_ids.add(tool_use_id)
        if uses:
            _check_uses_answered(messages, index, [tool_use_id for _, tool_use_id in uses])


def _check_uses_answered(messages: list[JsonObject], index: int, use_ids: list[str]) -> None:
    following = _block_list(messages[index + 1]) if index + 1 < len(messages) else []
    result_ids = [b["tool_use_id"] for b in following if b["type"] == "tool_result"]
    missing = [tool_use_id for tool_use_id in use_ids if tool_use_id not in result_ids]
    if missing:
        raise reject(
            f"messages.{index}: `tool_use` ids were found without `tool_result` blocks "
            f"immediately after: {', '.join(missing)}. Each `tool_use` block must have a "
            "corresponding `tool_result` block in the next message."
        )
    leading = 0
    for block in following:
        if block["type"] != "tool_result":
            break
        leading += 1
    if leading < len(use_ids):
        raise reject(
            f"messages.{index + 1}: Did not find {len(use_ids)} `tool_result` block(s) at the "
            "beginning of this message. Messages following `tool_use` blocks must begin with "
            "a matching number of `tool_result` blocks."
        )


def _check_results_answer_previous(messages: list[JsonObject], index: int) -> None:
    previous = _block_list(messages[index - 1]) if index > 0 else []
    use_ids = {b["id"] for b in previous if b["type"] == "tool_use"}
    answered: set[str] = set()
    for position, block in enumerate(_block_list(messages[index])):
        if block["type"] != "tool_result":
            continue
        tool_use_id = block["tool_use_id"]
        path = f"messages.{index}.content.{position}"
        if tool_use_id not in use_ids:
            raise reject(
                f"{path}: unexpected `tool_use_id` found in `tool_result` blocks: {tool_use_id}. "
                "Each `tool_result` block must have a corresponding `tool_use` block in the "
                "previous message."
            )
        if tool_use_id in answered:
            raise reject(f"{path}: duplicate `tool_result` blocks for tool_use id {tool_use_id}")
        answered.add(tool_use_id)


def check_tool_choice(
    choice: object, tool_names: list[str], *, has_tools: bool, thinking: object = None
) -> None:
    if choice is None:
        return
    if not isinstance(choice, dict) or choice.get("type") not in TOOL_CHOICES:
        raise reject(
            "tool_choice: Input tag found using 'type' does not match any of the expected "
            f"tags: {tags(TOOL_CHOICES)}"
        )
    kind = choice["type"]
    allowed = {"type", "name"} if kind == "tool" else {"type"}
    if kind != "none":
        allowed.add("disable_parallel_tool_use")
    for key in choice:
        if key not in allowed:
            raise reject(f"tool_choice.{kind}.{key}: Extra inputs are not permitted")
    if "disable_parallel_tool_use" in choice and not isinstance(
        choice["disable_parallel_tool_use"], bool
    ):
        raise reject(
            f"tool_choice.{kind}.disable_parallel_tool_use: Input should be a valid boolean"
        )
    if kind != "none" and not has_tools:
        raise reject("tool_choice may only be specified while providing tools")
    if kind in ("tool", "any") and isinstance(thinking, dict) and thinking.get("type") == "enabled":
        raise reject("Thinking may not be enabled when tool_choice forces tool use.")
    if choice["type"] == "tool":
        name = choice.get("name")
        if not isinstance(name, str):
            raise reject("tool_choice.tool.name: Field required")
        if name not in tool_names:
            raise reject(f"tool_choice.tool.name: tool '{name}' is not one of the `tools`")


def check_cache_marks(marks: CacheMarks) -> None:
    if len(marks.ttls) > MAX_CACHE_BREAKPOINTS:
        raise reject(
            f"A maximum of {MAX_CACHE_BREAKPOINTS} blocks with cache_control may be provided. "
            f"Found {len(marks.ttls)}."
        )
    if "5m" in marks.ttls and "1h" in marks.ttls[marks.ttls.index("5m") :]:
        raise reject(
            "cache_control: a block with ttl='1h' must not come after a block with ttl='5m'"
        )
