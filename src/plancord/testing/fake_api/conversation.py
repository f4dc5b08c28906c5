"""The conversation rules of the Messages API: roles alternate, blocks are well formed,
every tool_use is answered by the next user turn, system messages sit where they may.

Whether thinking blocks come back unchanged, and bound to their conversation, is checked in
``fake_api.thinking_binding``; the rules that depend on the model in ``fake_api.model_rules``.
Consecutive turns of one role are merged, as the API merges them
(docs/build-with-claude/working-with-messages), except on the test models, which keep the
old fake's stricter rule and refuse them."""

from __future__ import annotations

from typing import Any

from plancord.testing.fake_api.rules import (
    ASSISTANT_BLOCKS,
    IMAGE_SOURCES,
    SYSTEM_BLOCKS,
    TOOL_CHOICES,
    TOOL_RESULT_BLOCKS,
    USER_BLOCKS,
    CacheMarks,
    check_text,
    reject,
    tags,
)
from plancord.testing.fake_api.service_rules import LAX_TEST_RULE, ModelRule
from plancord.testing.fake_api.system_messages import (
    SYSTEM_ROLE_REFUSED,
    check_system_message_keys,
    check_system_placement,
)
from plancord.testing.fake_api.thinking_binding import thinking_signature
from plancord.testing.fake_api.version_rules import RequestContext
from plancord.testing.fake_api.wire import MAX_CACHE_BREAKPOINTS, TOOL_USE_ID_PATTERN, JsonObject

__all__ = ["check_cache_marks", "check_messages", "check_tool_choice", "thinking_signature"]


def check_messages(
    messages: object,
    marks: CacheMarks,
    rule: ModelRule = LAX_TEST_RULE,
    context: RequestContext | None = None,
) -> None:
    if not isinstance(messages, list):
        raise reject("messages: Input should be a valid list")
    if not messages:
        raise reject("messages: at least one message is required")
    context = context or RequestContext()
    previous_role: str | None = None
    last = len(messages) - 1
    for index, message in enumerate(messages):
        role = _check_role(message, index, previous_role, rule, context)
        blocks = _blocks_of(message, index, final_assistant=index == last and role == "assistant")
        for position, block in enumerate(blocks):
            _check_block(block, f"messages.{index}.content.{position}", role, marks)
        if role != "system":
            previous_role = role
    check_system_placement(messages)
    _check_final_assistant(messages[-1])
    turns, indices = _merged_turns(messages)
    _check_tool_pairing(turns, indices)


def _check_role(
    message: object, index: int, previous_role: str | None, rule: ModelRule, context: RequestContext
) -> str:
    path = f"messages.{index}"
    if not isinstance(message, dict):
        raise reject(f"{path}: Input should be a valid dictionary")
    if "role" not in message:
        raise reject(f"{path}.role: Field required")
    role = message["role"]
    if role == "system":
        if not rule.system_messages:
            raise reject(SYSTEM_ROLE_REFUSED)
        check_system_message_keys(message, index, context)
        return "system"
    for key in message:
        if key not in ("role", "content"):
            raise reject(f"{path}.{key}: Extra inputs are not permitted")
    if role not in ("user", "assistant"):
        raise reject(f"{path}.role: Input should be 'user', 'assistant' or 'system'")
    if previous_role is None and role != "user":
        raise reject('messages: first message must use the "user" role')
    if role == previous_role and rule.lax_roles:
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
    allowed = {"user": USER_BLOCKS, "assistant": ASSISTANT_BLOCKS}.get(role, SYSTEM_BLOCKS)
    if kind not in USER_BLOCKS | ASSISTANT_BLOCKS | SYSTEM_BLOCKS:
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
    elif kind == "redacted_thinking" and not isinstance(block.get("data"), str):
        raise reject(f"{path}.redacted_thinking.data: Field required")
    if block.get("cache_control") is not None and kind in ("thinking", "redacted_thinking"):
        raise reject(f"{path}.{kind}.cache_control: Extra inputs are not permitted")
    marks.check(block, path)


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
    if message.get("role") != "assistant":
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


def _merged_turns(messages: list[JsonObject]) -> tuple[list[JsonObject], list[int]]:
    """The user and assistant turns as the API reads them: consecutive turns of one role
    merged into one, system messages left out. Beside them, the index of each turn's first
    message, for the paths of errors."""
    turns: list[JsonObject] = []
    indices: list[int] = []
    for index, message in enumerate(messages):
        if message["role"] == "system":
            continue
        if turns and turns[-1]["role"] == message["role"]:
            turns[-1]["content"] = _block_list(turns[-1]) + _block_list(message)
            continue
        turns.append({"role": message["role"], "content": _block_list(message)})
        indices.append(index)
    return turns, indices


def _check_tool_pairing(turns: list[JsonObject], indices: list[int]) -> None:
    """Every tool_use is answered first thing in the next turn; no result is orphaned."""
    seen_ids: set[str] = set()
    for turn_index, turn in enumerate(turns):
        blocks = _block_list(turn)
        if turn["role"] == "user":
            _check_results_answer_previous(turns, indices, turn_index)
            continue
        uses = [(pos, b["id"]) for pos, b in enumerate(blocks) if b["type"] == "tool_use"]
        for position, tool_use_id in uses:
            if tool_use_id in seen_ids:
                raise reject(
                    f"messages.{indices[turn_index]}.content.{position}: `tool_use` ids must be "
                    "unique"
                )
            seen_ids.add(tool_use_id)
        if uses:
            _check_uses_answered(turns, indices, turn_index, [use_id for _, use_id in uses])


def _check_uses_answered(
    turns: list[JsonObject], indices: list[int], turn_index: int, use_ids: list[str]
) -> None:
    has_next = turn_index + 1 < len(turns)
    following = _block_list(turns[turn_index + 1]) if has_next else []
    result_ids = [b["tool_use_id"] for b in following if b["type"] == "tool_result"]
    missing = [tool_use_id for tool_use_id in use_ids if tool_use_id not in result_ids]
    if missing:
        raise reject(
            f"messages.{indices[turn_index]}: `tool_use` ids were found without `tool_result` "
            f"blocks immediately after: {', '.join(missing)}. Each `tool_use` block must have "
            "a corresponding `tool_result` block in the next message."
        )
    leading = 0
    for block in following:
        if block["type"] != "tool_result":
            break
        leading += 1
    if leading < len(use_ids):
        raise reject(
            f"messages.{indices[turn_index + 1]}: Did not find {len(use_ids)} `tool_result` "
            "block(s) at the beginning of this message. Messages following `tool_use` blocks "
            "must begin with a matching number of `tool_result` blocks."
        )


def _check_results_answer_previous(
    turns: list[JsonObject], indices: list[int], turn_index: int
) -> None:
    previous = _block_list(turns[turn_index - 1]) if turn_index > 0 else []
    use_ids = {b["id"] for b in previous if b["type"] == "tool_use"}
    answered: set[str] = set()
    for position, block in enumerate(_block_list(turns[turn_index])):
        if block["type"] != "tool_result":
            continue
        tool_use_id = block["tool_use_id"]
        path = f"messages.{indices[turn_index]}.content.{position}"
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
