"""A plan's questions with choices, answered on the plan message: one select menu per such
question under the two rows of buttons (Approve · Edit · Reject, then the other ways to
approve), as many as Discord's five rows leave room for (``MENU_ROWS``). The questions past
those are answered through the ``Answer N more questions…`` button beside the other ways to
approve: it answers the one who tapped it privately with their menus, five to a message
(what a phone shows as one list of labelled menus), so every question stays answerable from
the card however many the plan asks. Each menu is a dynamic item whose custom id names the
revision and the question, so it works after a restart and wherever it is shown; a pick is
checked and kept by ``PlanAnswering``, and the plan message then shows it."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import discord

from plancord.core.plan_answers import PlanAnswer
from plancord.core.planning import PlanRevision
from plancord.discord_bot.plan_card.buttons import REVISION, plan_buttons, revision_for_click
from plancord.discord_bot.plan_card.comments import CommentButton
from plancord.discord_bot.plan_card.direct_edit import DirectEditButton
from plancord.discord_bot.shared.client import client_of
from plancord.discord_bot.shared.common import explained_refusals
from plancord.discord_bot.shared.controls import choice_menu, picked_choice
from plancord.discord_bot.shared.dynamic_items import PLAN_ID, CustomId
from plancord.discord_bot.shared.embed_basics import CONTENT_LIMIT, clip

BUTTON_ROWS = 2
"""The plan's buttons take the first two of Discord's five rows of components."""
MENU_ROWS = 5 - BUTTON_ROWS
MENUS_PER_MESSAGE = 5
"""The menus of more questions in one private answer: a row each, five rows at most."""
PLACEHOLDER_LIMIT = 150
ANSWER_ID = CustomId(
    "plan:answer:{plan_id}:{revision}:{question}",
    plan_id=PLAN_ID,
    revision=REVISION,
    question="[0-9]{1,2}",
)
MORE_ID = CustomId("plan:more:{plan_id}:{revision}", plan_id=PLAN_ID, revision=REVISION)


def plan_view(
    revision: PlanRevision,
    *,
    disabled: bool = False,
    answers: Mapping[int, PlanAnswer] | None = None,
) -> discord.ui.View:
    """The plan's buttons and, while it waits, a menu for each of its first questions that
    offer choices (showing the pick so far), and the button to the rest; all off once
    decided."""
    view = plan_buttons(revision.plan_id, revision.revision, disabled=disabled)
    view.add_item(DirectEditButton(revision.plan_id, revision.revision, disabled=disabled))
    view.add_item(CommentButton(revision.plan_id, revision.revision, disabled=disabled))
    menus = menu_questions(revision)
    for row, index in enumerate(menus, start=BUTTON_ROWS):
        view.add_item(_menu(revision, index, answers, disabled=disabled, row=row))
    more = more_questions(revision)
    if more:
        view.add_item(MoreQuestionsButton(revision.plan_id, revision.revision, len(more), disabled))
    return view


def _menu(
    revision: PlanRevision,
    index: int,
    answers: Mapping[int, PlanAnswer] | None,
    *,
    disabled: bool = False,
    row: int | None = None,
) -> PlanAnswerSelect:
    choices = revision.plan.choices_for(index)
    answer = (answers or {}).get(index)
    picked = choices.index(answer.answer) if answer and answer.answer in choices else None
    return PlanAnswerSelect(
        revision.plan_id,
        revision.revision,
        index,
        question=revision.plan.questions[index],
        choices=choices,
        picked=picked,
        disabled=disabled,
        row=row,
    )


def _with_choices(revision: PlanRevision) -> list[int]:
    plan = revision.plan
    return [i for i in range(len(plan.questions)) if plan.choices_for(i)]


def menu_questions(revision: PlanRevision) -> list[int]:
    """The questions (0-based) that get a menu on the card: those with choices, the first
    ``MENU_ROWS``."""
    return _with_choices(revision)[:MENU_ROWS]


def more_questions(revision: PlanRevision) -> list[int]:
    """The questions with choices past those: answered through ``MoreQuestionsButton``."""
    return _with_choices(revision)[MENU_ROWS:]


def more_questions_views(
    revision: PlanRevision, answers: Mapping[int, PlanAnswer]
) -> list[tuple[str, discord.ui.View]]:
    """The private answers to ``Answer N more questions…``: each lists its questions in full
    and holds their menus, five at most."""
    more = more_questions(revision)
    shown = []
    for start in range(0, len(more), MENUS_PER_MESSAGE):
        group = more[start : start + MENUS_PER_MESSAGE]
        view = discord.ui.View(timeout=None)
        lines = []
        for row, index in enumerate(group):
            view.add_item(_menu(revision, index, answers, row=row))
            lines.append(clip(f"**Q{index + 1}.** {revision.plan.questions[index]}", 390))
        head = f"Plan v{revision.revision}: pick an answer for each question."
        shown.append((clip("\n".join([head, *lines]), CONTENT_LIMIT), view))
    return shown


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


class MoreQuestionsButton(
    discord.ui.DynamicItem[discord.ui.Button[discord.ui.View]],
    template=MORE_ID.template,
):
    """``Answer N more questions…``: the menus of the questions the card has no row for,
    answered privately to whoever tapped it (a pick in them counts as on the card)."""

    def __init__(self, plan_id: str, revision: int, count: int = 0, disabled: bool = False) -> None:
        label = f"Answer {count} more question{'s' if count != 1 else ''}…" if count else "More"
        super().__init__(
            discord.ui.Button(
                label=label,
                style=discord.ButtonStyle.secondary,
                custom_id=MORE_ID(plan_id=plan_id, revision=revision),
                disabled=disabled,
                row=1,
            )
        )
        self.plan_id = plan_id
        self.revision = revision

    @classmethod
    async def from_custom_id(
        cls,
        interaction: discord.Interaction[discord.Client],
        item: discord.ui.Item[Any],
        match: re.Match[str],
        /,
    ) -> MoreQuestionsButton:
        return cls(match["plan_id"], int(match["revision"]))

    async def callback(self, interaction: discord.Interaction[discord.Client]) -> None:
        await interaction.response.defer(ephemeral=True, thinking=True)
        async with explained_refusals(interaction):
            revision = await revision_for_click(interaction, self.plan_id, self.revision)
            if revision is None:
                return
            answers = await client_of(interaction).app.plan_answers.for_revision(
                self.plan_id, self.revision
            )
            for content, view in more_questions_views(revision, answers):
                await interaction.followup.send(content, view=view, ephemeral=True)


ANSWER_CONTROLS: tuple[type[discord.ui.DynamicItem[Any]], ...] = (
    PlanAnswerSelect,
    MoreQuestionsButton,
)
