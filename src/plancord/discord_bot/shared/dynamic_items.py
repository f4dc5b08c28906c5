"""The custom ids of the cards' persistent controls.

Why this exists: every control on a card (the plan's buttons and menus, the completion card's,
an ask's) is a ``discord.ui.DynamicItem`` whose custom id is all a click brings back, perhaps
to a process that never saw the card. Each control wrote its id twice, as the template
discord.py matches a click against and as the string the control is posted with, so the two
could drift apart and strand every card already in Discord. A :class:`CustomId` states the
shape once and gives both. Where a click counts (the agent's own channel, in its own server)
is not a control's to check: the authority judges every act with its place (``core.places``).
"""

from __future__ import annotations

import re

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
