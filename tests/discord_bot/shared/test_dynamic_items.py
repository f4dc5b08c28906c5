"""The custom ids of the cards' controls as cards already posted in Discord carry them.

A click brings back only the custom id, perhaps to a process that never saw the card; each
id below is one a posted card carries. Every one must still be claimed by exactly one
registered control, which rebuilds itself from it with the same id, and every control a card
posts now must be one of them.
"""

from __future__ import annotations

import re
from typing import Any, cast

import discord
import pytest

from plancord.discord_bot.asks.permission_card import ASK_BUTTONS, permission_view
from plancord.discord_bot.asks.question_card import QUESTION_CONTROLS, question_view
from plancord.discord_bot.plan_card.answer_menu import PlanAnswerSelect
from plancord.discord_bot.plan_card.buttons import PLAN_BUTTONS, plan_buttons
from plancord.discord_bot.plan_card.review import REVIEW_BUTTONS
from plancord.discord_bot.result_card.buttons import RESULT_CONTROLS, result_view
from plancord.discord_bot.shared.dynamic_items import CustomId

REGISTERED: tuple[type[discord.ui.DynamicItem[Any]], ...] = (
    *PLAN_BUTTONS,
    *REVIEW_BUTTONS,
    PlanAnswerSelect,
    *ASK_BUTTONS,
    *QUESTION_CONTROLS,
    *RESULT_CONTROLS,
)
ASK = "0123456789abcdef"

POSTED = [
    "plan:approve:0a1b:3",
    "plan:approve-fresh:0a1b:3",
    "plan:approve-confirm:0a1b:3",
    "plan:ack:approve:0a1b:3:1",
    "plan:ack:approve-confirm:0a1b:3:12",
    "plan:edit:0a1b:3",
    "plan:reject:0a1b:3",
    "plan:findings:0a1b:3",
    "plan:answer:0a1b:3:0",
    f"ask:allow:{ASK}",
    f"ask:deny:{ASK}",
    f"ask:choice:{ASK}:4",
    f"ask:pick:{ASK}",
    f"ask:other:{ASK}",
    "result:merge:0a1b:2",
    "result:discard:0a1b:2",
    "result:push:0a1b:2",
    "result:rollback:0a1b:2",
]


def claimants(custom_id: str) -> list[tuple[type[discord.ui.DynamicItem[Any]], re.Match[str]]]:
    found = []
    for control in REGISTERED:
        match = control.__discord_ui_compiled_template__.fullmatch(custom_id)
        if match is not None:
            found.append((control, match))
    return found


@pytest.mark.parametrize("custom_id", POSTED)
async def test_a_posted_id_is_claimed_once_and_rebuilt_with_the_same_id(custom_id: str) -> None:
    found = claimants(custom_id)

    assert len(found) == 1, [control.__name__ for control, _ in found]
    control, match = found[0]
    rebuilt = await control.from_custom_id(
        cast(discord.Interaction, None), cast(discord.ui.Item[Any], None), match
    )
    assert rebuilt.custom_id == custom_id


async def test_every_control_a_card_posts_is_claimed() -> None:
    views = [
        plan_buttons("0a1b", 3),
        result_view("0a1b", 2, (), waiting=True, can_push=True),
        permission_view(ASK, labels=("Continue", "Stop")),
        question_view(ASK, ["yes", "no"]),
        question_view(ASK, [f"choice {n}" for n in range(7)]),
    ]
    posted = [
        str(item.custom_id)
        for view in views
        for item in view.children
        if isinstance(item, discord.ui.DynamicItem)
    ]

    assert len(posted) == 5 + 4 + 2 + 3 + 2
    assert [custom_id for custom_id in posted if len(claimants(custom_id)) != 1] == []
    assert set(posted) <= set(POSTED) | {f"ask:choice:{ASK}:{n}" for n in range(2)}


def test_a_custom_id_names_exactly_the_fields_it_is_given() -> None:
    with pytest.raises(ValueError, match="version"):
        CustomId("result:{action}:{plan_id}", action="merge", plan_id="[0-9a-f]+", version="[0-9]")
