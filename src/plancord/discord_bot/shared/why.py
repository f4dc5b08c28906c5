"""Why each of an agent's last tool calls ran or did not: the text ``/plan why`` shows and the
"Why?" button on a turn's progress message, read from the decision records
(``core.call_records``) after the records noted so far are written.

The button carries only the agent's name; it answers privately, and only in the agent's own
channel. Records hold a digest of each input, never the input, and the name of whoever
answered a card, which the channel saw anyway.
"""

from __future__ import annotations

import re
from typing import Any

import discord

from plancord.app import App
from plancord.core.call_records import record_line
from plancord.discord_bot.shared.client import client_of
from plancord.discord_bot.shared.common import agent_for
from plancord.discord_bot.shared.dynamic_items import CustomId

WHY_ID = CustomId("why:{agent}", agent="[A-Za-z0-9_-]{1,32}")
WHY_CALLS = 15
WHY_CHARS = 1900
NO_MENTIONS = discord.AllowedMentions.none()


async def why_text(app: App, agent: str, limit: int = WHY_CALLS) -> str:
    """The agent's last ``limit`` calls, one line each, newest last, within one message."""
    if app.call_log is None:
        return "Decision records are not kept here."
    await app.call_log.flush()
    records = await app.call_log.store.recent(agent, limit=limit)
    if not records:
        return f"**{agent}** has made no tool calls yet."
    lines = [f"- {record_line(r)}" for r in records]
    header = f"Why **{agent}**'s last {len(lines)} tool calls ran or did not (newest last):"
    while lines and len(header) + sum(len(x) + 1 for x in lines) > WHY_CHARS:
        lines.pop(0)
    return "\n".join([header, *lines])


def why_view(agent: str) -> discord.ui.View:
    view = discord.ui.View(timeout=None)
    view.add_item(WhyButton(agent))
    return view


class WhyButton(
    discord.ui.DynamicItem[discord.ui.Button[discord.ui.View]], template=WHY_ID.template
):
    """ "Why?" on a turn's progress message."""

    def __init__(self, agent: str) -> None:
        super().__init__(
            discord.ui.Button(
                label="Why?", style=discord.ButtonStyle.secondary, custom_id=WHY_ID(agent=agent)
            )
        )
        self.agent = agent

    @classmethod
    async def from_custom_id(
        cls,
        interaction: discord.Interaction[discord.Client],
        item: discord.ui.Item[Any],
        match: re.Match[str],
        /,
    ) -> WhyButton:
        return cls(match["agent"])

    async def callback(self, interaction: discord.Interaction[discord.Client]) -> None:
        app = client_of(interaction).app
        await interaction.response.defer(ephemeral=True, thinking=True)
        found = await agent_for(app, interaction.channel)
        if found is None or found.name != self.agent:
            text = "This button belongs to another channel's agent."
        else:
            text = await why_text(app, self.agent)
        await interaction.followup.send(text, ephemeral=True, allowed_mentions=NO_MENTIONS)


WHY_CONTROLS = (WhyButton,)
