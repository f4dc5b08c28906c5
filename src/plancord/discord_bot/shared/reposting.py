"""Cards the store knows, posted again the moment someone deletes one.

A card waiting for a human (a plan to decide, a checkpoint or permission request, a
question) that a moderator deletes would leave a decision nobody can see until a restart.
Every kind of card registers here (``CardReposting.register``) with one object that knows
its own cards (``KnownCards``); a deleted message (``on_raw_message_delete``, bulk deletes
too) is offered to each kind, and the one that knows it as a card still waiting posts it
again with the same buttons and state and records the new message. A card of something no
longer waiting is not posted again. The channel is told what was posted again and, when
the server's audit log says, who deleted it; the core keeps a row in the audit log
(``core.front_end_audit``).

The kinds live with their cards (``plan_card.reposting``, ``asks.reposting``); the notifier
registers them, so a new kind of card joins with one ``register`` line.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import timedelta
from typing import Protocol

import discord

from plancord.core.errors import PlancordError
from plancord.discord_bot.shared.client import PlancordClient

log = logging.getLogger(__name__)

NO_MENTIONS = discord.AllowedMentions.none()
AUDIT_LOG_WINDOW = timedelta(minutes=10)
"""How old a Discord audit-log entry may be to name who deleted the card (Discord merges a
moderator's deletes in a channel into one entry for a few minutes)."""


@dataclass(frozen=True, slots=True)
class Reposted:
    """A card posted again: what it is (for the channel), whose it is, and where it is now."""

    what: str
    agent: str
    url: str


class KnownCards(Protocol):
    """One kind of card the store knows."""

    async def repost(self, channel_id: int, message_id: int) -> Reposted | None:
        """When ``message_id`` was this kind's card of something still waiting: post it again
        (same buttons, same state), record the new message and say what it was. None when
        the message is not this kind's card or what it showed no longer waits."""
        ...


class CardReposting:
    """The kinds of card the store knows, and what happens when one of their messages goes."""

    def __init__(self, bot: PlancordClient) -> None:
        self.bot = bot
        self._kinds: dict[str, KnownCards] = {}

    def register(self, kind: str, cards: KnownCards) -> None:
        self._kinds[kind] = cards

    async def deleted(
        self, guild_id: int | None, channel_id: int, message_ids: Iterable[int], *, bulk: bool
    ) -> None:
        """Messages were deleted: post again each one that was a waiting card."""
        for message_id in message_ids:
            for kind, cards in self._kinds.items():
                try:
                    reposted = await cards.repost(channel_id, message_id)
                except (discord.HTTPException, PlancordError):
                    log.warning("could not post a deleted %s card again", kind, exc_info=True)
                    continue
                if reposted is not None:
                    log.info("posted the deleted %s card again: %s", kind, reposted.what)
                    who = await self._deleted_by(guild_id, channel_id, bulk=bulk)
                    await self._tell(channel_id, guild_id, kind, reposted, who)
                    break

    async def _tell(
        self,
        channel_id: int,
        guild_id: int | None,
        kind: str,
        reposted: Reposted,
        who: str | None,
    ) -> None:
        by = f" by **{who}**" if who else ""
        text = f"♻️ {reposted.what} was deleted{by}; it is posted again: {reposted.url}"
        channel = self.bot.get_partial_messageable(channel_id, guild_id=guild_id)
        try:
            await channel.send(text, allowed_mentions=NO_MENTIONS)
        except discord.HTTPException:
            log.warning("could not say that a card was posted again", exc_info=True)
        await self.bot.app.front_end_audit.card_reposted(
            reposted.agent, kind, reposted.what, who, reposted.url
        )

    async def _deleted_by(self, guild_id: int | None, channel_id: int, *, bulk: bool) -> str | None:
        """Who deleted the bot's message in ``channel_id``, as the server's audit log says;
        None when the bot may not read it or it does not say."""
        guild = self.bot.get_guild(guild_id) if guild_id is not None else None
        me = self.bot.user
        if guild is None or me is None:
            return None
        action = (
            discord.AuditLogAction.message_bulk_delete
            if bulk
            else discord.AuditLogAction.message_delete
        )
        since = self.bot.app.clock.now() - AUDIT_LOG_WINDOW
        try:
            async for entry in guild.audit_logs(limit=10, action=action):
                if entry.created_at < since:
                    break
                target = getattr(entry.target, "id", None)
                if bulk and target == channel_id:
                    return entry.user.display_name if entry.user else None
                extra = getattr(getattr(entry.extra, "channel", None), "id", None)
                if not bulk and target == me.id and extra == channel_id:
                    return entry.user.display_name if entry.user else None
        except discord.HTTPException:
            log.info("the server's audit log cannot say who deleted a card", exc_info=True)
        return None
