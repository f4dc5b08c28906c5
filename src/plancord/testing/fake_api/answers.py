"""Whether a scripted reply is one the real API could give to this request.

``output_config.format`` (structured outputs) binds the answer: "Claude's response is valid
JSON matching your schema, returned in the response's text content block", except that "the
output may not match your schema" when the reply stops at ``refusal`` or ``max_tokens``
(platform.claude.com/docs/en/build-with-claude/structured-outputs, "How it works", "Invalid
outputs"); the grammar does not reach thinking or tool calls ("Grammars apply only to
Claude's direct output, not to tool use calls, tool results, or thinking"). So a reply that
ends its turn must carry JSON text its schema accepts, but for the case of its ``enum`` and
``const`` strings: "Structured outputs don't guarantee the capitalization of string ``enum``
and ``const`` values" ("Invalid outputs", "Enum value casing").
``tool_choice`` binds the model: ``tool`` (or ``any``) makes the API prefill a tool call, so
the reply is tool_use blocks only, with no text or thinking before them, naming that tool
(or one of the request's tools) and only one of them under ``disable_parallel_tool_use``;
``none`` means no tool call at all. A tool declared ``strict`` is only ever called with an
input its schema accepts. An input outside the schema of a forced tool is refused too,
unless the script marks the call ``malformed`` (a model without ``strict`` can produce one,
and the code reading it must cope). A script that breaks these rules would test a reply the
API never sends: the server refuses to play it and records the error in ``script_errors``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from plancord.testing.fake_api.json_schema import schema_problem
from plancord.testing.fake_api.script import Reply, Text, ToolCall
from plancord.testing.fake_api.wire import JsonObject


def check_answer(reply: Reply, body: JsonObject) -> None:
    """Raise ``ValueError`` saying why ``reply`` cannot answer ``body``."""
    tools = _tools_by_name(body.get("tools"))
    choice = body.get("tool_choice") or {"type": "auto"}
    kind = choice.get("type")
    calls = [block for block in reply.blocks if isinstance(block, ToolCall)]
    if kind == "none" and calls:
        raise ValueError("the request says tool_choice none, but the script calls a tool")
    forced = kind in ("tool", "any")
    if forced:
        _check_forced(reply, calls, choice, tools)
    _check_structured(reply, body.get("output_config"))
    for call in calls:
        tool = tools.get(call.name)
        if tool is None:
            continue
        strict = tool.get("strict") is True
        if not (strict or forced) or (call.malformed and not strict):
            continue
        problem = schema_problem(dict(call.input), tool.get("input_schema") or {})
        if problem is not None:
            why = "strict" if strict else "forced"
            raise ValueError(
                f"the script calls the {why} tool {call.name!r} with an input its schema "
                f"refuses ({problem}); mark the ToolCall malformed=True if that is the point"
                if not strict
                else f"the script calls the strict tool {call.name!r} with an input its schema "
                f"refuses ({problem}); the API never samples one"
            )


def _check_forced(
    reply: Reply, calls: list[ToolCall], choice: Mapping[str, Any], tools: Mapping[str, Any]
) -> None:
    if reply.stop_reason != "tool_use" or not calls:
        raise ValueError(
            f"tool_choice {choice.get('type')} forces a tool call; the script answers with "
            f"stop_reason {reply.stop_reason!r} and {len(calls)} tool call(s)"
        )
    if len(calls) != len(reply.blocks):
        raise ValueError(
            "tool_choice forces a tool call, so the API prefills it: the reply holds tool_use "
            "blocks only, no text or thinking"
        )
    if choice.get("disable_parallel_tool_use") is True and len(calls) > 1:
        raise ValueError("disable_parallel_tool_use is set, so the reply holds one tool call")
    for call in calls:
        if choice.get("type") == "tool" and call.name != choice.get("name"):
            raise ValueError(
                f"tool_choice forces {choice.get('name')!r}; the script calls {call.name!r}"
            )
        if call.name not in tools:
            raise ValueError(f"tool_choice any: the script calls {call.name!r}, not a request tool")


def _check_structured(reply: Reply, output_config: object) -> None:
    """A reply that ends its turn under ``output_config.format`` is JSON text its schema
    accepts; one cut off, refused or calling a tool is not bound by it."""
    if not isinstance(output_config, Mapping):
        return
    output_format = output_config.get("format")
    if not isinstance(output_format, Mapping) or output_format.get("type") != "json_schema":
        return
    if reply.stop_reason in ("max_tokens", "refusal", "tool_use"):
        return
    text = "".join(block.text for block in reply.blocks if isinstance(block, Text))
    if not text.strip():
        raise ValueError(
            "the request asks for structured outputs (output_config.format), so a reply that "
            f"ends its turn ({reply.stop_reason}) carries its JSON in a text block; the script "
            "has no text"
        )
    try:
        answer = json.loads(text)
    except ValueError as error:
        raise ValueError(
            f"the request asks for structured outputs, but the script's text is not JSON "
            f"({error}); the API never samples one"
        ) from error
    schema = _literals_casefolded(output_format.get("schema") or {})
    problem = schema_problem(_casefolded(answer), schema, "output")
    if problem is not None:
        raise ValueError(
            f"the request asks for structured outputs, but the script's JSON is outside the "
            f"schema ({problem}); the API never samples one"
        )


def _casefolded(value: Any) -> Any:
    """An answer with every string value in lower case (its keys as they are)."""
    if isinstance(value, str):
        return value.lower()
    if isinstance(value, list):
        return [_casefolded(item) for item in value]
    if isinstance(value, dict):
        return {key: _casefolded(item) for key, item in value.items()}
    return value


def _literals_casefolded(schema: Any) -> Any:
    """A schema with its ``enum`` and ``const`` strings in lower case, to meet a
    ``_casefolded`` answer."""
    if isinstance(schema, list):
        return [_literals_casefolded(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    return {
        key: _casefolded(item) if key in ("enum", "const") else _literals_casefolded(item)
        for key, item in schema.items()
    }


def _tools_by_name(tools: object) -> dict[str, Mapping[str, Any]]:
    if not isinstance(tools, list):
        return {}
    return {str(tool["name"]): tool for tool in tools if isinstance(tool, dict) and "name" in tool}
