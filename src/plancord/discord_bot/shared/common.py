"""Small pieces every cog needs: who acted and where (a core ``Actor`` with its place), which
agent a channel is bound to (threads inherit their parent's agent), the first answer to a
click that changes its own card (``acknowledge``, ``update_clicked``), and ephemeral error
replies, including after a public deferral and for a refusal the service raised
(``explained_refusals``)."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import discord

from plancord.app import App
from plancord.core.agents import AgentRecord
from plancord.core.errors import PlancordError
from plancord.core.places import Place
from plancord.core.planning import Actor
from plancord.discord_bot.shared.client import client_of

log = logging.getLogger(__name__)


def member_actor(user: discord.User | discord.Member) -> Actor:
    """A Discord user as the approver policy sees them: role *ids* (never names, which anyone
    allowed to rename a role could take on) and the admin flag, with no place: only for a
    member read from the agent's own server (a voter counted again). An act a member makes
    is built with ``actor_at`` or ``actor_in``, which give it its place."""
    roles: frozenset[str] = frozenset()
    is_admin = False
    if isinstance(user, discord.Member):
        roles = frozenset(str(r.id) for r in user.roles)
        is_admin = user.guild_permissions.administrator
    return Actor.user(user.id, user.display_name, roles=roles, is_admin=is_admin)


def place_of(channel: object, channel_id: int | None, guild_id: int | None) -> Place:
    """Where an act in ``channel`` (``channel_id``) of server ``guild_id`` was made: a thread
    names the channel it is under. An act whose channel is unknown gets a place that is no
    agent's home (never no place, which the authority would not judge)."""
    parent = channel.parent_id if isinstance(channel, discord.Thread) else None
    return Place(
        guild=str(guild_id) if guild_id is not None else None,
        channel=str(channel_id) if channel_id is not None else "",
        parent=str(parent) if parent is not None else None,
    )


def actor_at(interaction: discord.Interaction) -> Actor:
    """Who clicked, submitted or ran a command, and where (``core.places``): the authority
    accepts their roles and admin flag only from the agent's own channel and server."""
    place = place_of(interaction.channel, interaction.channel_id, interaction.guild_id)
    return member_actor(interaction.user).model_copy(update={"place": place})


def actor_in(message: discord.Message) -> Actor:
    """Who wrote ``message``, and where."""
    guild_id = message.guild.id if message.guild is not None else None
    place = place_of(message.channel, message.channel.id, guild_id)
    return member_actor(message.author).model_copy(update={"place": place})


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


Reply = Callable[[discord.Interaction, str], Awaitable[None]]
"""How a handler sends a refusal: ``reply_error``, or ``reply_privately`` after a public
deferral."""

PLACEHOLDER_DONE = "Answered privately."


def _clipped(message: str) -> str:
    return message if len(message) <= 1900 else message[:1899] + "…"


async def reply_error(interaction: discord.Interaction, message: str) -> None:
    """An ephemeral error, whether or not the interaction was already answered (when it was
    deferred, the deferral must have been ephemeral; else see ``reply_privately``)."""
    text = _clipped(message)
    if interaction.response.is_done():
        await interaction.followup.send(text, ephemeral=True)
    else:
        await interaction.response.send_message(text, ephemeral=True)


async def reply_privately(
    interaction: discord.Interaction, message: str, *, embed: discord.Embed | None = None
) -> None:
    """An ephemeral answer to an interaction deferred *publicly* (``defer(thinking=True)``).

    Discord makes the first followup after a deferral replace the "thinking…" placeholder,
    with the deferral's visibility whatever the followup asks for. So the placeholder is
    completed first (which frees the next followup to be ephemeral), the answer follows as
    an ephemeral followup, and the placeholder is then deleted: others see it say
    ``PLACEHOLDER_DONE`` for a moment, then vanish. Should the placeholder refuse to be
    completed, the answer replaces it, publicly, rather than not arrive at all.
    """
    try:
        await interaction.edit_original_response(content=PLACEHOLDER_DONE)
    except discord.HTTPException as exc:
        log.warning("could not complete a deferred response before answering privately: %s", exc)
        completed = False
    else:
        completed = True
    if embed is None:
        await interaction.followup.send(_clipped(message), ephemeral=True)
    else:
        await interaction.followup.send(_clipped(message), embed=embed, ephemeral=True)
    if not completed:
        return
    try:
        await interaction.delete_original_response()
    except discord.HTTPException as exc:
        log.warning("could not delete a public placeholder after answering privately: %s", exc)


async def acknowledge(interaction: discord.Interaction) -> None:
    """Answer a click on a card at once with a deferred update, before anything reads the
    store: Discord fails an interaction whose first answer comes after 3 s, and a busy store
    can take longer. The card is then edited with ``update_clicked``, and a refusal follows
    as an ephemeral followup (``reply_error``). Should Discord refuse the deferral, the click
    is still decided and the card's edit becomes its first answer."""
    try:
        await interaction.response.defer()
    except discord.HTTPException as exc:
        log.warning("could not acknowledge a click: %s", exc)


async def update_clicked(interaction: discord.Interaction, **fields: Any) -> bool:
    """Edit the card the acknowledged click came from (``edit_message``'s ``fields``);
    False when Discord refused it."""
    try:
        if interaction.response.is_done():
            await interaction.edit_original_response(**fields)
        else:
            await interaction.response.edit_message(**fields)
    except discord.HTTPException as exc:
        log.warning("could not update the card of a click: %s", exc)
        return False
    return True


@contextlib.asynccontextmanager
async def explained_refusals(
    interaction: discord.Interaction, reply: Reply = reply_error
) -> AsyncIterator[None]:
    """Any ``PlancordError`` inside the block becomes an ephemeral reply that explains it
    (a stale plan's refusal also links to the current plan's message). ``reply`` sends it:
    ``reply_error`` unless the interaction was deferred publicly."""
    try:
        yield
    except PlancordError as exc:
        await reply(interaction, await client_of(interaction).explain(exc))
