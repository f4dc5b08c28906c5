"""Messages in an agent's channel (or a thread under it) are messages to that agent.

A message that answers an open ``ask_user`` question goes to the waiting question instead.
Everything else starts a turn or joins the running one; the runtime owns the loop and its
task, so the handler returns at once and ``ChannelIO`` shows typing until the turn ends.
"""

from __future__ import annotations

import logging

import discord
from discord.ext import commands

from plancord.core.errors import PlancordError
from plancord.core.instructions import Refused
from plancord.discord_bot.asks.asks import Asks
from plancord.discord_bot.shared.attachments import read_attachments
from plancord.discord_bot.shared.channel_io import ChannelIO
from plancord.discord_bot.shared.client import PlancordClient
from plancord.discord_bot.shared.common import actor_in, agent_for

log = logging.getLogger(__name__)

ROUTED_TYPES = frozenset({discord.MessageType.default, discord.MessageType.reply})


def is_for_an_agent(message: discord.Message) -> bool:
    """A human's text or files in a server: bots, webhooks and system messages are not."""
    return (
        not message.author.bot
        and message.webhook_id is None
        and message.guild is not None
        and message.type in ROUTED_TYPES
        and (bool(message.content.strip()) or bool(message.attachments))
    )


class MessageCog(commands.Cog):
    def __init__(self, bot: PlancordClient, io: ChannelIO, asks: Asks) -> None:
        self.bot = bot
        self.io = io
        self.asks = asks

    @commands.Cog.listener()
    async def on_message(self, message: discord.Message) -> None:
        if not is_for_an_agent(message):
            return
        app = self.bot.app
        record = await agent_for(app, message.channel)
        if record is None:
            return
        author = actor_in(message)
        verdict = await app.instructions.judge(record, author)
        if isinstance(verdict, Refused):
            if not verdict.again:
                await _reply_quietly(
                    message,
                    f"🔒 {message.author.mention}, {verdict.refusal.text}. "
                    "Your messages are not passed on (this note is shown once).",
                )
            return
        if self.asks.take_answer(message):
            return
        text = message.clean_content
        if message.attachments:
            files = await read_attachments(list(message.attachments))
            if files.refused:
                await _reply_quietly(message, files.refusal_message())
            text = "\n\n".join(part for part in (text.strip(), files.text) if part)
            if not text:
                return
        runtime = app.runtime
        running_at = self.io.origin_of(record.name) if runtime.is_busy(record.name) else None
        if running_at is not None and getattr(running_at, "id", None) != message.channel.id:
            # A turn runs elsewhere: its output stays there, and this message gets a turn of
            # its own when that one ends, answered here.
            runtime.queue_elsewhere(record.name, text, author, message.channel)
            await _reply_quietly(
                message,
                f"⏳ **{record.name}** is busy with a request made elsewhere; it answers you "
                "here when that is done.",
            )
            return
        if not runtime.is_busy(record.name):
            self.io.note_origin(record.name, message.channel)
        try:
            await runtime.handle_message(record.name, text, author)
        except PlancordError as exc:
            try:
                await message.channel.send(
                    f"⚠️ {exc}", allowed_mentions=discord.AllowedMentions.none()
                )
            except discord.HTTPException as send_exc:
                log.warning("could not report an error to %s: %s", message.channel.id, send_exc)
            return
        self.io.watch_turn(record.name)


async def _reply_quietly(message: discord.Message, text: str) -> None:
    try:
        await message.channel.send(text, allowed_mentions=discord.AllowedMentions.none())
    except discord.HTTPException as exc:
        log.warning("could not reply in %s: %s", message.channel.id, exc)
