"""How the reviewer's findings come back from a model: the way is chosen per model, from
what the model takes (``llm.models.capabilities_of``), never from its id's spelling.

- **Structured outputs** (``output_config.format``), on every model that takes them: "JSON
  outputs control Claude's response format, ensuring Claude returns valid JSON matching your
  schema", "returned in the response's text content block" (build-with-claude/
  structured-outputs). No tool is declared; the answer is the reply's text. This is what
  the API offers in place of a forced tool: on Claude Sonnet 5.5 "``tool_choice`` set to
  ``{"type": "any"}`` or ``{"type": "tool", "name": "..."}`` returns a 400
  ``invalid_request_error``", and "For schema-valid tool input, keep ``tool_choice:
  {"type": "auto"}`` and set ``strict: true`` with strict tool use, or move the schema to
  structured outputs" (models/sonnet-5-5/whats-new-sonnet-5-5, "Forced tool use is not
  supported"). Structured outputs also leave the model its thinking: "Grammars apply only to
  Claude's direct output, not to tool use calls, tool results, or thinking".
- **A forced tool** (``tool_choice: tool`` naming ``submit_review``), on a model without
  structured outputs that still accepts forcing.
- **A tool with automatic choice**, on the rest: models that refuse forced tools without
  taking structured outputs, and ids the table does not know. ``strict`` is part of
  structured outputs, so it is not sent either; the prompt says to call the tool, and the
  input is checked by the host, as the migration guide advises where structured outputs are
  missing ("send ``auto`` without ``strict``, say in the prompt when to call the tool, and
  validate the tool input in your code").

Whichever way, only the answer's own blocks are read: text for structured outputs, the one
``submit_review`` call otherwise. Thinking blocks (which models that think by default put
in every reply) are never read as findings.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Final

from plancord.agent.plan_review.output_schema import structured_output_schema
from plancord.core.ports import ModelReply
from plancord.core.review import ReviewAnswerInvalid, Severity
from plancord.core.review_answer import review_input_schema
from plancord.llm.models import ModelCapabilities

REVIEW_TOOL_NAME: Final = "submit_review"

REVIEW_TOOL: Final[dict[str, Any]] = {
    "name": REVIEW_TOOL_NAME,
    "description": (
        "Record your review of the plan: the findings (each with a severity, the step number "
        "or null, and one or two sentences) and the numbers of the previous review's findings "
        "this revision resolves (empty when there was no previous review)."
    ),
    "input_schema": review_input_schema(),
}


class AnswerWay(StrEnum):
    """How one reviewer call asks for its findings (the value is how the docs say it)."""

    STRUCTURED_OUTPUT = "structured outputs"
    FORCED_TOOL = "a forced tool"
    AUTO_TOOL = "a tool with automatic choice"


def answer_way(capabilities: ModelCapabilities) -> AnswerWay:
    """Structured outputs where the model takes them, else a forced tool where forcing is
    still accepted, else a tool the model chooses to call."""
    if capabilities.structured_outputs:
        return AnswerWay.STRUCTURED_OUTPUT
    if capabilities.forced_tool_choice:
        return AnswerWay.FORCED_TOOL
    return AnswerWay.AUTO_TOOL


@dataclass(frozen=True, slots=True)
class RequestShape:
    """The parts of a reviewer request that depend on the way."""

    tools: list[dict[str, Any]]
    tool_choice: dict[str, Any] | None
    output_config: dict[str, Any] | None


def request_shape(way: AnswerWay) -> RequestShape:
    if way is AnswerWay.STRUCTURED_OUTPUT:
        schema = structured_output_schema(review_input_schema())
        return RequestShape([], None, {"format": {"type": "json_schema", "schema": schema}})
    if way is AnswerWay.FORCED_TOOL:
        choice = {"type": "tool", "name": REVIEW_TOOL_NAME, "disable_parallel_tool_use": True}
        return RequestShape([dict(REVIEW_TOOL)], choice, None)
    auto = {"type": "auto", "disable_parallel_tool_use": True}
    return RequestShape([dict(REVIEW_TOOL)], auto, None)


def how_to_answer(way: AnswerWay) -> str:
    """What the reviewer is told to answer with, for the end of its prompts."""
    if way is AnswerWay.STRUCTURED_OUTPUT:
        return "the JSON object the response format describes, and nothing else"
    if way is AnswerWay.FORCED_TOOL:
        return f"the {REVIEW_TOOL_NAME} tool"
    return (
        f"one call of the {REVIEW_TOOL_NAME} tool carrying every finding (call it even when "
        "there are none); do not answer in text"
    )


def read_answer(reply: ModelReply, way: AnswerWay) -> object:
    """The answer in ``reply`` for ``core.review_answer`` to check, its severities in the
    schema's case. Raises ``ReviewAnswerInvalid`` when the reply holds none: no text or not
    JSON (structured outputs), no ``submit_review`` call or more than one (a tool)."""
    if way is AnswerWay.STRUCTURED_OUTPUT:
        text = "".join(
            str(block.get("text", "")) for block in reply.content if block.get("type") == "text"
        )
        if not text.strip():
            raise ReviewAnswerInvalid(["the reviewer's answer has no text"])
        try:
            data: object = json.loads(text)
        except ValueError as exc:
            raise ReviewAnswerInvalid([f"the reviewer's answer is not JSON ({exc})"]) from exc
        return _severities_in_case(data)
    calls = [
        block
        for block in reply.content
        if block.get("type") == "tool_use" and block.get("name") == REVIEW_TOOL_NAME
    ]
    if not calls:
        raise ReviewAnswerInvalid([f"the reviewer answered without calling {REVIEW_TOOL_NAME}"])
    if len(calls) > 1:
        raise ReviewAnswerInvalid(
            [f"the reviewer answered with {len(calls)} {REVIEW_TOOL_NAME} calls, not one"]
        )
    return _severities_in_case(calls[0].get("input"))


_SEVERITIES: Final = {severity.value: severity.value for severity in Severity}


def _severities_in_case(data: object) -> object:
    """``data`` with each finding's severity in the schema's case: "Structured outputs don't
    guarantee the capitalization of string ``enum`` and ``const`` values ... Compare enum
    values case-insensitively" (structured-outputs, "Invalid outputs"). A "Blocker" is a
    blocker, never a finding dropped as invalid (nor a blocker left uncounted)."""
    if not isinstance(data, Mapping) or not isinstance(data.get("findings"), list):
        return data
    findings = [
        {**item, "severity": _SEVERITIES.get(item["severity"].lower(), item["severity"])}
        if isinstance(item, Mapping) and isinstance(item.get("severity"), str)
        else item
        for item in data["findings"]
    ]
    return {**data, "findings": findings}
