"""The menu of choices a card offers, whose custom id a dynamic item parses again after a
restart.

Why this exists: the question's choices and the plan's questions are the same menu (one
option per choice, the pick so far shown as selected, an index read back from the click);
each card says what its menu means and this module says once how it is built and read.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import discord

Select = discord.ui.Select[discord.ui.View]

NO_PICK = -1
"""What :func:`picked_choice` reads from a click that carried no choice index."""


def choice_menu(
    custom_id: str,
    choices: Sequence[str],
    *,
    placeholder: str,
    chosen: int | None = None,
    disabled: bool = False,
    row: int | None = None,
) -> Select:
    """A menu with one option per choice (its value the choice's index), the ``chosen``
    one shown as selected. A menu rebuilt from its custom id alone (a click after a
    restart) has no choices; it gets one placeholder option, since Discord wants one."""
    options = [
        discord.SelectOption(label=choice, value=str(index), default=chosen == index)
        for index, choice in enumerate(choices)
    ] or [discord.SelectOption(label="…", value="0")]
    return discord.ui.Select(
        custom_id=custom_id,
        placeholder=placeholder,
        options=options,
        disabled=disabled,
        row=row,
    )


def picked_choice(menu: discord.ui.Select[Any]) -> int:
    """The index of the choice a click on ``menu`` picked, or :data:`NO_PICK`."""
    values = menu.values
    return int(values[0]) if values and values[0].isdigit() else NO_PICK
