"""The custom ids of the cards' persistent controls, and the check a click on a card passes.

Why this exists: every control on a card (the plan's buttons and menus, the completion card's,
an ask's) is a ``discord.ui.DynamicItem`` whose custom id is all a click brings back, perhaps
to a process that never saw the card. Each control wrote its id twice, as the template
discord.py matches a click against and as the string the control is posted with, so the two
could drift apart and strand every card already in Discord. A :class:`CustomId` states the
shape once and gives both. The plan and completion cards also shared one rule, written twice:
a click counts only from the agent's own channel (:func:`clicked_in_channel_of`).
"""

from __future__ import annotations

import re

import discord

from plancord.app import App
from plancord.discord_bot.shared.common import agent_for

PLAN_ID = "[0-9a-f]{1,32}"
"""A plan id as the plan and completion cards carry it."""

_FIELD = re.compile(r"\{(\w+)\}")


class CustomId:
    """One control's custom id: ``pattern``'s literal text and its ``{name}`` fields, each
    matched by the regex given for it (``action="merge|push"`` names the words a field takes).

    ``template`` is the regex a ``DynamicItem`` class is declared with (each field a named
    group); calling the id with the fields' values gives the string a control is posted with.
    """

    def __init__(self, pattern: str, **fields: str) -> None:
        named = _FIELD.findall(pattern)
        if sorted(named) != sorted(fields):
            raise ValueError(f"{pattern!r} names {named}, but the fields given are {list(fields)}")
        literals = _FIELD.split(pattern)[::2]
        parts = [re.escape(literals[0])]
        for name, literal in zip(named, literals[1:], strict=True):
            parts += [f"(?P<{name}>{fields[name]})", re.escape(literal)]
        self.pattern = pattern
        self.template = "".join(parts)

    def __call__(self, **values: object) -> str:
        return self.pattern.format(**values)


async def clicked_in_channel_of(app: App, interaction: discord.Interaction, agent: str) -> bool:
    """Whether a click came from ``agent``'s own channel (or a thread under it): a card's
    controls act only there, whatever the custom id names."""
    found = await agent_for(app, interaction.channel)
    return found is not None and found.name == agent
