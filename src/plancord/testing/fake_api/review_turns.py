"""Scripted answers of the plan reviewer: its one forced ``submit_review`` call.

The reviewer is asked with ``tool_choice`` naming ``submit_review``, so the fake plays its
answer only as that one tool call, with an input the tool's schema accepts
(``fake_api.answers``); ``malformed_review_turn`` scripts the off-schema answer a model
without ``strict`` can still send.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from plancord.agent.plan_review import REVIEW_TOOL_NAME
from plancord.core.review import Finding
from plancord.testing.fake_api.script import Reply, ToolCall, tool_turn


def finding(severity: str, step: int | None, text: str) -> dict[str, object]:
    """One finding as the reviewer writes it."""
    return {"severity": severity, "step": step, "text": text}


def review_turn(*findings: Mapping[str, object] | Finding, resolved: Iterable[int] = ()) -> Reply:
    """The reviewer answers with ``findings`` and the numbers of the previous review's
    findings the revision ``resolved``."""
    shown = [
        item.model_dump(mode="json") if isinstance(item, Finding) else dict(item)
        for item in findings
    ]
    return tool_turn(ToolCall(REVIEW_TOOL_NAME, {"findings": shown, "resolved": list(resolved)}))


def malformed_review_turn(answer: Mapping[str, object]) -> Reply:
    """The reviewer calls ``submit_review`` with ``answer`` even though its schema refuses it."""
    return tool_turn(ToolCall(REVIEW_TOOL_NAME, dict(answer), malformed=True))
