"""The member directory (``core.ports.MemberDirectory``) on Discord: a voter read again from
the agent's server when approval votes are counted, so a vote counts only if its voter may
still approve (their role ids and the admin flag as they are now).

The guild's member cache answers first; a member it does not hold is fetched. A member who
left, an agent without a server, or a server that cannot be read gives None, and the vote
does not count."""

from __future__ import annotations

import logging

import discord

from plancord.core.errors import PlancordError
from plancord.core.planning import Actor
from plancord.discord_bot.shared.client import PlancordClient
from plancord.discord_bot.shared.common import member_actor

log = logging.getLogger(__name__)


class DiscordMembers:
    def __init__(self, client: PlancordClient) -> None:
        self._client = client

    async def member(self, agent: str, user_id: str) -> Actor | None:
        if not user_id.isdigit():
            return None
        try:
            record = await self._client.app.store.get_agent(agent)
        except PlancordError:
            return None
        guild = self._client.get_guild(record.guild_id) if record.guild_id else None
        if guild is None:
            return None
        member = guild.get_member(int(user_id))
        if member is None:
            try:
                member = await guild.fetch_member(int(user_id))
            except discord.NotFound:
                return None
            except discord.HTTPException as exc:
                log.warning(
                    "cannot read member %s of %s to count their vote: %s", user_id, agent, exc
                )
                return None
        return member_actor(member)
