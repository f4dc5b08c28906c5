"""Small pieces every cog needs: who clicked (as a core ``Actor``), which agent a channel is
bound to (threads inherit their parent's agent), and ephemeral error replies."""

from __future__ import annotations

import discord

from plancord.app import App
from plancord.core.agents import AgentRecord
from plancord.core.planning import Actor


def actor_from(user: discord.User | discord.Member) -> Actor:
    """A Discord user as the approver policy sees them: role ids and names, admin flag."""
    roles: frozenset[str] = frozenset()
    is_admin = False
    if isinstance(user, discord.Member):
        roles = frozenset(str(r.id) for r in user.roles) | frozenset(r.name for r in user.roles)
        is_admin = user.guild_permissions.administrator
    return Actor.user(user.id, user.display_name, roles=roles, is_admin=is_admin)


def bound_channel_id(channel: object) -> int | None:
    """The channel an agent would be bound to: a thread counts as its parent."""
    if isinstance(channel, discord.Thread):
        return channel.parent_id
    channel_id = getattr(channel, "id", None)
    return channel_id if isinstance(channel_id, int) else None


async def agent_for(app: App, channel: object) -> AgentRecord | None:
    channel_id = bound_channel_id(channel)
    if channel_id is None:
        return None
    return await app.store.find_agent_by_channel(channel_id)


NO_AGENT = "No agent is bound to this channel. Create one with `/agent create`."


async def reply_error(interaction: discord.Interaction, message: str) -> None:
    """An ephemeral error, whether or not the interaction was already answered."""
    text = message if len(message) <= 1900 else message[:1899] + "…"
    if interaction.response.is_done():
        await interaction.followup.send(text, ephemeral=True)
    else:
        await interaction.response.send_message(text, ephemeral=True)
