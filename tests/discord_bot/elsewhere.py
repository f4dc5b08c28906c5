"""Places that are not the agent's home, for the attacks on every kind of card: a second
server the bot is in, where eve is an administrator (and nothing in the agent's server), and
another channel of the agent's own server; a copy of a card's controls posted by the bot
there; and the refusals the authority audited for clicks made elsewhere."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import discord

from plancord.core.authority import MISPLACED
from plancord.core.planning import AuditEntry
from plancord.testing.sim import World

ADMIN = discord.Permissions(administrator=True)


@dataclass
class Elsewhere:
    """Another server (``guild``), its channel ``lounge`` and eve, an administrator there."""

    guild: Any
    lounge: Any
    eve: Any


def another_server(world: World) -> Elsewhere:
    env = world.env
    guild = env.create_guild("elsewhere")
    lounge = guild.create_text_channel("lounge")
    admins = guild.create_role("Admins", permissions=ADMIN)
    eve = guild.add_member(env.create_user("eve"), roles=[admins])
    return Elsewhere(guild, lounge, eve)


async def copy_of(world: World, channel: Any, view: discord.ui.View) -> discord.Message:
    """A bot message in ``channel`` carrying a card's controls (``view``)."""
    sent: discord.Message = await world.bot.get_partial_messageable(
        channel.id, guild_id=channel.guild.id
    ).send("copy", view=view)
    return sent


def ask_id_of(message: discord.Message) -> str:
    """The ask id a card's controls carry (``ask:<choice>:<id>[:…]``)."""
    for row in message.components:
        for item in getattr(row, "children", ()):
            custom_id = getattr(item, "custom_id", None) or ""
            if custom_id.startswith("ask:"):
                return str(custom_id.split(":")[2])
    raise AssertionError("no ask control on the message")


async def misplaced(world: World, agent: str = "ada") -> list[AuditEntry]:
    """The refusals audited for acts made outside ``agent``'s home."""
    rows = await world.bot.app.store.list_audit(agent, limit=500)
    return [row for row in rows if row.detail.get("why") == MISPLACED]


def followup_text(result: Any) -> str:
    """The ephemeral answer a refused click got (deferred, then followed up)."""
    answer = result.followups[-1] if result.followups else result.response
    assert answer is not None and answer.ephemeral, result
    return str(answer.content)


def unchanged(world: World, message: discord.Message) -> bool:
    """Whether the simulated server still holds ``message`` as the bot posted it (never
    edited)."""
    stored = world.env.backend.messages[message.channel.id][message.id]
    return bool(stored.content == "copy" and stored.edited_timestamp is None)
