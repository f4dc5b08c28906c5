"""A question an agent asks, as Discord shows it: the text with how to answer and, when the
agent offered choices, one button per choice (a select menu past five) and an "Other…"
button that opens a form for free text. The controls are dynamic items whose custom ids
carry only the ask id, so a click after a restart still reaches the bot and hears that the
question expired; once answered, the message shows the choice and the controls are disabled.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import discord

from plancord.discord_bot.asks.live import ASK_ID
from plancord.discord_bot.shared.channel_io import MESSAGE_LIMIT
from plancord.discord_bot.shared.client import client_of
from plancord.discord_bot.shared.controls import choice_menu, picked_choice
from plancord.discord_bot.shared.dynamic_items import CustomId

BUTTONS_UP_TO = 5
"""More choices than this become a select menu (a phone shows five buttons comfortably)."""
OTHER_LABEL = "Other…"
ANSWER_CHARS = 1000
CHOICE_ID = CustomId("ask:choice:{ask_id}:{index}", ask_id=ASK_ID, index="[0-9]{1,2}")
PICK_ID = CustomId("ask:pick:{ask_id}", ask_id=ASK_ID)
OTHER_ID = CustomId("ask:other:{ask_id}", ask_id=ASK_ID)


def question_text(agent: str, text: str, mention: str, *, choices: bool = False) -> str:
    lead = f"{mention} " if mention else ""
    how = (
        "Tap a choice, or reply to this message with your own answer."
        if choices
        else "Reply to this message, or just send your answer here."
    )
    return f"❓ {lead}**{agent}** asks:\n{text}\n-# {how}"


def with_note(content: str, note: str) -> str:
    """``content`` with ``note`` as its last line, cut so the whole fits one message."""
    room = MESSAGE_LIMIT - len(note) - 2
    body = content if len(content) <= room else content[: room - 1] + "…"
    return f"{body}\n{note}"


def question_view(
    ask_id: str, choices: Sequence[str], *, disabled: bool = False, chosen: int | None = None
) -> discord.ui.View:
    """The question's controls; ``chosen`` (an index) is highlighted once answered."""
    view = discord.ui.View(timeout=None)
    if len(choices) <= BUTTONS_UP_TO:
        for index, choice in enumerate(choices):
            view.add_item(
                ChoiceButton(ask_id, index, label=choice, disabled=disabled, chosen=chosen == index)
            )
    else:
        view.add_item(ChoiceSelect(ask_id, choices, disabled=disabled, chosen=chosen))
    view.add_item(OtherButton(ask_id, disabled=disabled))
    return view


class ChoiceButton(
    discord.ui.DynamicItem[discord.ui.Button[discord.ui.View]],
    template=CHOICE_ID.template,
):
    """One of up to five choices; a tap answers the question with it."""

    def __init__(
        self,
        ask_id: str,
        index: int,
        *,
        label: str = "…",
        disabled: bool = False,
        chosen: bool = False,
    ) -> None:
        super().__init__(
            discord.ui.Button(
                label=label,
                style=discord.ButtonStyle.success if chosen else discord.ButtonStyle.primary,
                custom_id=CHOICE_ID(ask_id=ask_id, index=index),
                disabled=disabled,
            )
        )
        self.ask_id = ask_id
        self.index = index

    @classmethod
    async def from_custom_id(
        cls,
        interaction: discord.Interaction[discord.Client],
        item: discord.ui.Item[Any],
        match: re.Match[str],
        /,
    ) -> ChoiceButton:
        return cls(match["ask_id"], int(match["index"]))

    async def callback(self, interaction: discord.Interaction[discord.Client]) -> None:
        await client_of(interaction).ask_controls.answer(interaction, self.ask_id, self.index)


class ChoiceSelect(
    discord.ui.DynamicItem[discord.ui.Select[discord.ui.View]],
    template=PICK_ID.template,
):
    """Six to 25 choices as a select menu; picking one answers the question."""

    def __init__(
        self,
        ask_id: str,
        choices: Sequence[str] = (),
        *,
        disabled: bool = False,
        chosen: int | None = None,
    ) -> None:
        super().__init__(
            choice_menu(
                PICK_ID(ask_id=ask_id),
                choices,
                placeholder="Choose an answer",
                chosen=chosen,
                disabled=disabled,
            )
        )
        self.ask_id = ask_id

    @classmethod
    async def from_custom_id(
        cls,
        interaction: discord.Interaction[discord.Client],
        item: discord.ui.Item[Any],
        match: re.Match[str],
        /,
    ) -> ChoiceSelect:
        return cls(match["ask_id"])

    async def callback(self, interaction: discord.Interaction[discord.Client]) -> None:
        await client_of(interaction).ask_controls.answer(
            interaction, self.ask_id, picked_choice(self.item)
        )


class OtherButton(
    discord.ui.DynamicItem[discord.ui.Button[discord.ui.View]],
    template=OTHER_ID.template,
):
    """ "Other…": a form for an answer in the member's own words."""

    def __init__(self, ask_id: str, *, disabled: bool = False) -> None:
        super().__init__(
            discord.ui.Button(
                label=OTHER_LABEL,
                style=discord.ButtonStyle.secondary,
                custom_id=OTHER_ID(ask_id=ask_id),
                disabled=disabled,
            )
        )
        self.ask_id = ask_id

    @classmethod
    async def from_custom_id(
        cls,
        interaction: discord.Interaction[discord.Client],
        item: discord.ui.Item[Any],
        match: re.Match[str],
        /,
    ) -> OtherButton:
        return cls(match["ask_id"])

    async def callback(self, interaction: discord.Interaction[discord.Client]) -> None:
        await client_of(interaction).ask_controls.answer(interaction, self.ask_id, None)


class OtherAnswer(discord.ui.Modal):
    """The "Other…" form: one paragraph, handed to the question when submitted."""

    answer: discord.ui.TextInput[OtherAnswer] = discord.ui.TextInput(
        label="Your answer",
        custom_id="answer",
        style=discord.TextStyle.paragraph,
        min_length=1,
        max_length=ANSWER_CHARS,
    )

    def __init__(self, ask_id: str, question: str) -> None:
        super().__init__(title="Answer the question", timeout=600)
        self.ask_id = ask_id
        self.answer.placeholder = question[:100]

    async def on_submit(self, interaction: discord.Interaction[discord.Client]) -> None:
        await client_of(interaction).ask_controls.answer_text(
            interaction, self.ask_id, self.answer.value
        )


QUESTION_CONTROLS = (ChoiceButton, ChoiceSelect, OtherButton)
