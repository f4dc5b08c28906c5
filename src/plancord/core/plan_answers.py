"""Answers to a plan's open questions, picked by a reviewer from the question's choices on
the plan message before deciding, and the text that hands them to the agent with the
approval.

What is approved is all of it: the answers are frozen by the first approval vote. Once
anyone has voted to approve a revision (``plan_mode.approvals: N``), **a later pick is
refused** (``AnswerOutcome.FROZEN``) rather than resetting the votes: every approver approves
the same answers, and nobody's vote disappears because someone else changed an answer. The
store decides it in the same transaction that writes the pick (``storage.plan_answers``), so
a pick racing a vote is either before it or refused. To change an answer after a vote,
send the plan back with Edit: the next revision starts with no votes and no answers."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from enum import StrEnum

from pydantic import BaseModel, ConfigDict

from plancord.core.choices import stamp
from plancord.core.plan import Plan


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


class AnswerOutcome(StrEnum):
    """What keeping a pick did."""

    KEPT = "kept"
    """Kept (replacing an earlier pick of the same question), with its audit row."""
    CLOSED = "closed"
    """Nothing kept: the revision no longer waits for a decision."""
    FROZEN = "frozen"
    """Nothing kept: an approval vote was cast on the revision, which froze its answers."""


def pick_refusal(outcome: AnswerOutcome, revision: int) -> str:
    """Why a pick was not kept, for the person who made it."""
    if outcome is AnswerOutcome.FROZEN:
        return (
            f"Plan v{revision}'s answers are frozen: someone has already voted to approve it "
            "with the answers as they are. To change an answer, use Edit to send the plan "
            "back; its next version starts with no votes."
        )
    return f"Plan v{revision} is no longer waiting for a decision, so its questions are closed."


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
