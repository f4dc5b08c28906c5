"""The request rules of the Messages API that do not depend on the conversation: headers,
parameters, tools, system, max_tokens, cache breakpoints; then the version's rules
(``version_rules``), the model's (``model_rules``) and the conversation's
(``conversation``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from anthropic.types import message_count_tokens_params, message_create_params
from anthropic.types.beta import message_create_params as beta_message_create_params

from plancord.testing.fake_api.conversation import (
    check_cache_marks,
    check_messages,
    check_tool_choice,
)
from plancord.testing.fake_api.json_schema import strict_schema_problem
from plancord.testing.fake_api.model_rules import check_model_rules
from plancord.testing.fake_api.prompt_cache import automatic_breakpoint
from plancord.testing.fake_api.rules import (
    CacheMarks,
    RequestRejected,
    check_text,
    reject,
)
from plancord.testing.fake_api.service_rules import LAX_TEST_RULE, ModelRule
from plancord.testing.fake_api.version_rules import RequestContext, check_version_rules
from plancord.testing.fake_api.wire import TOOL_NAME_PATTERN, JsonObject


def _param_names(*typed_dicts: Any) -> frozenset[str]:
    names: set[str] = set()
    for typed_dict in typed_dicts:
        names |= set(typed_dict.__required_keys__) | set(typed_dict.__optional_keys__)
    return frozenset(names)


_LEGACY_PARAMS = frozenset({"temperature", "top_p", "top_k"})
_CREATE_PARAMS = (
    _param_names(
        message_create_params.MessageCreateParamsBase,
        beta_message_create_params.MessageCreateParamsBase,
    )
    | _LEGACY_PARAMS
    | {"stream"}
)
_COUNT_TOKENS_PARAMS = _param_names(message_count_tokens_params.MessageCountTokensParams)


def check_headers(headers: Mapping[str, str], *, api_key: str | None) -> None:
    """Authentication and versioning, checked before the body as the real API does.

    The key may come as `x-api-key` or as `Authorization: Bearer …` (the SDK sends the
    latter); when the server was given an `api_key`, it must match.
    """
    key = headers.get("x-api-key", "").strip()
    authorization = headers.get("authorization", "").strip()
    if not key and authorization.lower().startswith("bearer "):
        key = authorization[len("bearer ") :].strip()
    if not key:
        raise RequestRejected("x-api-key header is required", status=401)
    if api_key is not None and key != api_key:
        raise RequestRejected("invalid x-api-key", status=401)
    RequestContext.of(headers)


def validate_request(
    body: object,
    *,
    count_tokens: bool = False,
    rule: ModelRule = LAX_TEST_RULE,
    context: RequestContext | None = None,
) -> JsonObject:
    """Apply the Messages API's request rules for ``rule``'s model and the request's headers
    (``context``); return the body or raise `RequestRejected`."""
    context = context or RequestContext()
    if not isinstance(body, dict):
        raise reject("There was an issue with your request body: expected a JSON object")
    known = _COUNT_TOKENS_PARAMS if count_tokens else _CREATE_PARAMS
    for key in body:
        if key not in known:
            raise reject(f"{key}: Extra inputs are not permitted")
    if "model" not in body:
        raise reject("model: Field required")
    if not isinstance(body["model"], str) or not body["model"]:
        raise reject("model: Input should be a valid string")
    if not count_tokens:
        _check_max_tokens(body)
    check_version_rules(body, context)
    if "messages" not in body:
        raise reject("messages: Field required")
    marks = CacheMarks()
    tool_names = _check_tools(body.get("tools"), marks)
    _check_system(body.get("system"), marks)
    check_messages(body["messages"], marks, rule, context)
    check_tool_choice(
        body.get("tool_choice"),
        tool_names,
        has_tools="tools" in body,
        thinking=body.get("thinking"),
    )
    check_model_rules(body, rule, context, count_tokens=count_tokens)
    if body.get("cache_control") is not None:
        _check_automatic_breakpoint(body, marks)
    check_cache_marks(marks)
    return body


def _check_automatic_breakpoint(body: JsonObject, marks: CacheMarks) -> None:
    """docs/build-with-claude/prompt-caching ("Automatic caching", edge cases): the top-level
    breakpoint lands on the last cacheable block and takes one of the 4 slots; on a block
    that already has one with the same TTL it is a no-op, with another TTL a 400."""
    explicit = len(marks.ttls)
    marks.check(body, "")
    ttl = marks.ttls.pop()
    target = automatic_breakpoint(body)
    if target is not None and isinstance(target.get("cache_control"), dict):
        if target["cache_control"].get("ttl", "5m") != ttl:
            raise reject(
                "cache_control: the last cacheable block already has a `cache_control` with "
                "another ttl than the top-level one"
            )
        return
    if explicit >= 4:
        raise reject(
            "cache_control: automatic caching needs a free breakpoint slot, and the request "
            f"already has {explicit} blocks with cache_control"
        )
    marks.ttls.append(ttl)


def _check_max_tokens(body: JsonObject) -> None:
    if "max_tokens" not in body:
        raise reject("max_tokens: Field required")
    max_tokens = body["max_tokens"]
    if not isinstance(max_tokens, int) or isinstance(max_tokens, bool):
        raise reject("max_tokens: Input should be a valid integer")
    if max_tokens < 1:
        raise reject("max_tokens: Input should be greater than or equal to 1")


def _check_tools(tools: object, marks: CacheMarks) -> list[str]:
    if tools is None:
        return []
    if not isinstance(tools, list):
        raise reject("tools: Input should be a valid list")
    names: list[str] = []
    for index, tool in enumerate(tools):
        path = f"tools.{index}"
        if not isinstance(tool, dict):
            raise reject(f"{path}: Input should be a valid dictionary")
        custom = tool.get("type") in (None, "custom")
        if custom:
            path = f"{path}.custom"
        name = tool.get("name")
        if name is None:
            raise reject(f"{path}.name: Field required")
        if not isinstance(name, str) or not TOOL_NAME_PATTERN.match(name):
            raise reject(f"{path}.name: String should match pattern '{TOOL_NAME_PATTERN.pattern}'")
        if custom:
            _check_input_schema(tool, path)
            _check_strict(tool, path)
        marks.check(tool, path)
        names.append(name)
    if len(set(names)) != len(names):
        raise reject("tools: Tool names must be unique.")
    return names


def _check_input_schema(tool: JsonObject, path: str) -> None:
    if "input_schema" not in tool:
        raise reject(f"{path}.input_schema: Field required")
    schema = tool["input_schema"]
    if not isinstance(schema, dict):
        raise reject(f"{path}.input_schema: Input should be a valid dictionary")
    if schema.get("type") != "object":
        raise reject(f"{path}.input_schema.type: Input should be 'object'")
    description = tool.get("description")
    if description is not None and not isinstance(description, str):
        raise reject(f"{path}.description: Input should be a valid string")


def _check_strict(tool: JsonObject, path: str) -> None:
    if "strict" not in tool:
        return
    if not isinstance(tool["strict"], bool):
        raise reject(f"{path}.strict: Input should be a valid boolean")
    if tool["strict"]:
        problem = strict_schema_problem(tool["input_schema"], f"{path}.input_schema")
        if problem is not None:
            raise reject(problem)


def _check_system(system: object, marks: CacheMarks) -> None:
    if system is None or isinstance(system, str):
        return
    if not isinstance(system, list):
        raise reject("system: Input should be a valid string or a valid list")
    for index, block in enumerate(system):
        path = f"system.{index}"
        if not isinstance(block, dict):
            raise reject(f"{path}: Input should be a valid dictionary")
        if block.get("type") != "text":
            raise reject(f"{path}.type: Input should be 'text'")
        check_text(block, path, owner="system")
        marks.check(block, path)
