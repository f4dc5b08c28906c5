"""Answers to a plan's open questions, picked by a reviewer from the question's choices on
the plan message before deciding, and the text that hands them to the agent with the
approval."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from pydantic import BaseModel, ConfigDict

from plancord.core.choices import stamp
from plancord.core.plan import Plan

ANSWERED = "question-answered"
"""The audit action of an answer, written with it in one transaction."""


class PlanAnswer(BaseModel):
    """The reviewer's pick for question ``question`` (0-based) of one plan revision."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    plan_id: str
    revision: int
    question: int
    answer: str
    by: str
    """The answerer as the audit log names them (``Actor.label``)."""
    by_name: str
    at: datetime


def answers_text(plan: Plan, answers: Mapping[int, PlanAnswer]) -> str:
    """For the agent: each question that offered choices, with the pick and who made it, or
    that none was picked. Empty when no question offered choices."""
    lines = []
    for index, question in enumerate(plan.questions):
        if not plan.choices_for(index):
            continue
        first_line = question.split("\n", 1)[0]
        answer = answers.get(index)
        if answer is None:
            lines.append(f"{index + 1}. {first_line} → no choice picked")
        else:
            lines.append(
                f"{index + 1}. {first_line} → {answer.answer} "
                f"(picked by {answer.by_name} at {stamp(answer.at)})"
            )
    if not lines:
        return ""
    return "Answers to your open questions:\n" + "\n".join(lines)
