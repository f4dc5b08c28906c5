"""A plan's questions with choices, answered on the plan message: one select menu per such
question under the Approve · Edit · Reject buttons. Each menu is a dynamic item whose custom
id names the revision and the question, so it works after a restart; a pick is checked and
kept by ``PlanAnswering``, and the message then shows it as the menu's selected option."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import discord

from plancord.core.plan_answers import PlanAnswer
from plancord.core.planning import PlanRevision
from plancord.discord_bot.plan_card.buttons import REVISION, plan_buttons
from plancord.discord_bot.shared.client import client_of
from plancord.discord_bot.shared.controls import choice_menu, picked_choice
from plancord.discord_bot.shared.dynamic_items import PLAN_ID, CustomId

MENU_ROWS = 4
"""Discord allows five rows of components; the plan's buttons take the first."""
PLACEHOLDER_LIMIT = 150
ANSWER_ID = CustomId(
    "plan:answer:{plan_id}:{revision}:{question}",
    plan_id=PLAN_ID,
    revision=REVISION,
    question="[0-9]{1,2}",
)


def plan_view(
    revision: PlanRevision,
    *,
    disabled: bool = False,
    answers: Mapping[int, PlanAnswer] | None = None,
) -> discord.ui.View:
    """The plan's buttons and, while it waits, a menu for each of its first four questions
    that offer choices (showing the pick so far); all off once decided."""
    view = plan_buttons(revision.plan_id, revision.revision, disabled=disabled)
    for row, index in enumerate(menu_questions(revision), start=1):
        choices = revision.plan.choices_for(index)
        answer = (answers or {}).get(index)
        picked = choices.index(answer.answer) if answer and answer.answer in choices else None
        view.add_item(
            PlanAnswerSelect(
                revision.plan_id,
                revision.revision,
                index,
                question=revision.plan.questions[index],
                choices=choices,
                picked=picked,
                disabled=disabled,
                row=row,
            )
        )
    return view


def menu_questions(revision: PlanRevision) -> list[int]:
    """The questions (0-based) that get a menu: those with choices, the first four."""
    plan = revision.plan
    with_choices = [i for i in range(len(plan.questions)) if plan.choices_for(i)]
    return with_choices[:MENU_ROWS]


class PlanAnswerSelect(
    discord.ui.DynamicItem[discord.ui.Select[discord.ui.View]],
    template=ANSWER_ID.template,
):
    """The choices of one open question; picking one answers it for the reviewers."""

    def __init__(
        self,
        plan_id: str,
        revision: int,
        question_index: int,
        *,
        question: str = "",
        choices: tuple[str, ...] = (),
        picked: int | None = None,
        disabled: bool = False,
        row: int | None = None,
    ) -> None:
        placeholder = f"Q{question_index + 1}: {' '.join(question.split())}"
        if len(placeholder) > PLACEHOLDER_LIMIT:
            placeholder = placeholder[: PLACEHOLDER_LIMIT - 1] + "…"
        super().__init__(
            choice_menu(
                ANSWER_ID(plan_id=plan_id, revision=revision, question=question_index),
                choices,
                placeholder=placeholder,
                chosen=picked,
                disabled=disabled,
                row=row,
            )
        )
        self.plan_id = plan_id
        self.revision = revision
        self.question_index = question_index

    @classmethod
    async def from_custom_id(
        cls,
        interaction: discord.Interaction[discord.Client],
        item: discord.ui.Item[Any],
        match: re.Match[str],
        /,
    ) -> PlanAnswerSelect:
        return cls(match["plan_id"], int(match["revision"]), int(match["question"]))

    async def callback(self, interaction: discord.Interaction[discord.Client]) -> None:
        await client_of(interaction).plan_questions.answer(
            interaction, self.plan_id, self.revision, self.question_index, picked_choice(self.item)
        )
