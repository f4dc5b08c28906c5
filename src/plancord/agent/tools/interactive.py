"""``ask_user``: the agent's one way to put a question to the human it works for.

The question goes through the ``Notifier`` (in Discord: a message with a reply box) and the
call waits for the answer up to the configured timeout. Runs nobody can answer (scheduled
jobs, sub-agents) are told so at once instead of waiting for a timeout that is certain.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field, field_validator

from plancord.agent.tools.base import Tool, ToolContext, ToolResult
from plancord.core.choices import MAX_CHOICE_CHARS, MAX_CHOICES, MIN_CHOICES, clean_choices
from plancord.core.gate import ToolKind
from plancord.core.ports import Question

MAX_QUESTION_CHARS = 1800
"""With the asker's mention and the answering hint, a question fits one Discord message."""


class AskUserInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    question: str = Field(
        min_length=1,
        max_length=MAX_QUESTION_CHARS,
        description="One clear question.",
    )
    choices: list[str] | None = Field(
        default=None,
        description=(
            f"Optional: {MIN_CHOICES} to {MAX_CHOICES} short answers (at most "
            f"{MAX_CHOICE_CHARS} characters each) the human can pick with one tap; they may "
            "still answer in their own words."
        ),
    )

    @field_validator("choices")
    @classmethod
    def _choices(cls, value: list[str] | None) -> list[str] | None:
        if value is None:
            return None
        return list(clean_choices(value))


class AskUserTool(Tool[AskUserInput]):
    name: ClassVar[str] = "ask_user"
    description: ClassVar[str] = (
        "Ask the human you are working for a question and wait for the reply (up to a "
        "timeout, 10 minutes unless configured otherwise). Use it when a decision is theirs "
        "or the task is ambiguous; do not ask what you can find out with the other tools. "
        "In a run nobody can answer, it fails at once."
    )
    kind: ClassVar[ToolKind] = ToolKind.INTERACTIVE
    Input: ClassVar[type[BaseModel]] = AskUserInput

    def detail(self, args: AskUserInput) -> str:
        if args.choices:
            return f"{args.question[:160]} [{' / '.join(args.choices)[:40]}]"
        return args.question[:200]

    async def run(self, args: AskUserInput, ctx: ToolContext) -> ToolResult:
        if not ctx.interactive:
            return ToolResult.error(
                "Nobody can answer in this run (it was started by a schedule or another "
                "agent). Decide yourself and state your assumption, or stop and report the "
                "question."
            )
        question = Question(
            agent=ctx.agent.name,
            text=args.question,
            requested_by=ctx.requester.id if ctx.requester else None,
            timeout_seconds=ctx.ask_timeout_seconds,
            choices=tuple(args.choices or ()),
        )
        answer = await ctx.notifier.ask_user(question)
        if answer is None:
            return ToolResult(
                f"no answer (the user did not reply within {_duration(ctx.ask_timeout_seconds)})"
            )
        return ToolResult(f"The user answered: {answer}")


def _duration(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:g} seconds"
    minutes = round(seconds / 60, 1)
    return "1 minute" if minutes == 1 else f"{minutes:g} minutes"
