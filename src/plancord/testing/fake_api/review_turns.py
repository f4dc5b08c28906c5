"""Scripted answers of the plan reviewer, in each of the shapes it asks for
(``agent.plan_review.answer_ways``).

``review_turn`` answers a request that declares the ``submit_review`` tool (forced or not)
with one call of it; ``malformed_review_turn`` scripts the off-schema call a model without
``strict`` can still send. ``structured_review_turn`` answers a structured-output request
(the way of the default model, Claude Sonnet 5.5): the findings as the JSON text of the
reply, which the fake plays only when the request's schema accepts it
(``fake_api.answers``). ``is_review_request`` tells a reviewer's request from the agent's,
whatever its shape.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping

from plancord.agent.plan_review import (
    RESULT_REVIEWER_SYSTEM_PROMPT,
    REVIEW_TOOL_NAME,
    REVIEWER_SYSTEM_PROMPT,
)
from plancord.core.review import Finding
from plancord.testing.fake_api.script import Reply, Text, ToolCall, tool_turn
from plancord.testing.fake_api.wire import JsonObject


def finding(severity: str, step: int | None, text: str) -> dict[str, object]:
    """One finding as the reviewer writes it."""
    return {"severity": severity, "step": step, "text": text}


def review_answer(
    *findings: Mapping[str, object] | Finding, resolved: Iterable[int] = ()
) -> dict[str, object]:
    """The reviewer's answer: ``findings`` and the numbers of the previous review's
    findings the revision ``resolved``."""
    shown = [
        item.model_dump(mode="json") if isinstance(item, Finding) else dict(item)
        for item in findings
    ]
    return {"findings": shown, "resolved": list(resolved)}


def review_turn(*findings: Mapping[str, object] | Finding, resolved: Iterable[int] = ()) -> Reply:
    """The reviewer answers with one ``submit_review`` call carrying ``findings``."""
    return tool_turn(ToolCall(REVIEW_TOOL_NAME, review_answer(*findings, resolved=resolved)))


def structured_review_turn(
    *findings: Mapping[str, object] | Finding, resolved: Iterable[int] = ()
) -> Reply:
    """The reviewer answers a structured-output request with ``findings`` as its JSON."""
    answer = review_answer(*findings, resolved=resolved)
    return Reply(blocks=(Text(json.dumps(answer)),), stop_reason="end_turn")


def malformed_review_turn(answer: Mapping[str, object]) -> Reply:
    """The reviewer calls ``submit_review`` with ``answer`` even though its schema refuses it."""
    return tool_turn(ToolCall(REVIEW_TOOL_NAME, dict(answer), malformed=True))


def is_review_request(body: JsonObject) -> bool:
    """Whether ``body`` is a reviewer's request (of a plan or of a result), by its system
    prompt, the one part every shape of it shares."""
    system = body.get("system")
    if not isinstance(system, list) or not system or not isinstance(system[0], dict):
        return False
    text = str(system[0].get("text", ""))
    return text.startswith((REVIEWER_SYSTEM_PROMPT, RESULT_REVIEWER_SYSTEM_PROMPT))
