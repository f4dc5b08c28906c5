"""What the plan-message parts share: where a plan's messages are stored, how a channel is
reached, coalesced edits, and how an actor and a reason are shown."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import discord

from plancord.core.planning import (
    Actor,
    ActorKind,
)
from plancord.core.ports import PlanningChange
from plancord.discord_bot.client import PlancordClient
from plancord.discord_bot.embed_basics import jump_url
from plancord.storage.plan_messages import MessageStatus, PlanMessageRecord, PlanMessageStore

log = logging.getLogger(__name__)

NO_MENTIONS = discord.AllowedMentions.none()

_DECIDED_STATUS = {
    "approved": MessageStatus.DECIDED,
    "changes-requested": MessageStatus.DECIDED,
    "rejected": MessageStatus.DECIDED,
    "cancelled": MessageStatus.CANCELLED,
    "timed-out": MessageStatus.TIMED_OUT,
}


def display_name(actor: Actor) -> str | None:
    """How a decision's author is shown: people by name, the scheduler not at all."""
    if actor.kind is ActorKind.SCHEDULER:
        return None
    if actor.kind is ActorKind.OPERATOR:
        return "the operator"
    if actor.kind is ActorKind.POLICY:
        return f"policy ({actor.name})"
    return actor.name


class CoalescedEdits:
    """At most one edit in flight per message; while one is in flight (or waiting out the
    debounce), newer contents replace older ones, so only the latest is ever sent next."""

    def __init__(self, debounce: Callable[[], float]) -> None:
        self._debounce = debounce
        self._latest: dict[int, Callable[[], Awaitable[Any]]] = {}
        self._workers: dict[int, asyncio.Task[None]] = {}

    def submit(self, message_id: int, edit: Callable[[], Awaitable[Any]]) -> None:
        self._latest[message_id] = edit
        worker = self._workers.get(message_id)
        if worker is None or worker.done():
            self._workers[message_id] = asyncio.create_task(
                self._drain(message_id), name=f"plancord-progress-{message_id}"
            )

    async def flush(self, message_id: int) -> None:
        """Wait until the latest submitted content for ``message_id`` has been sent."""
        worker = self._workers.get(message_id)
        if worker is not None:
            await asyncio.shield(worker)

    async def _drain(self, message_id: int) -> None:
        try:
            while message_id in self._latest:
                delay = self._debounce()
                if delay > 0:
                    await asyncio.sleep(delay)
                edit = self._latest.pop(message_id)
                try:
                    await edit()
                except discord.HTTPException:
                    log.warning("could not update progress message %s", message_id, exc_info=True)
        finally:
            self._workers.pop(message_id, None)


class PlanMessagesBase:
    def __init__(self, bot: PlancordClient, *, progress_debounce: float = 1.0) -> None:
        self.bot = bot
        self.progress_debounce = progress_debounce
        self._edits = CoalescedEdits(lambda: self.progress_debounce)
        self._store: PlanMessageStore | None = None

    @property
    def store(self) -> PlanMessageStore:
        db = self.bot.app.db
        if self._store is None or self._store.db is not db:
            self._store = PlanMessageStore(db)
        return self._store

    @staticmethod
    def url_of(record: PlanMessageRecord) -> str:
        return jump_url(record.guild_id, record.channel_id, record.message_id)

    def _channel_of(self, record: PlanMessageRecord) -> discord.PartialMessageable:
        return self.bot.get_partial_messageable(record.channel_id, guild_id=record.guild_id)

    def _guild_of(self, channel_id: int) -> int | None:
        channel = self.bot.get_channel(channel_id)
        guild = getattr(channel, "guild", None)
        return guild.id if isinstance(guild, discord.Guild) else None

    async def _say(self, agent: str, text: str) -> None:
        record = await self.bot.app.store.get_agent(agent)
        if record.channel_id is None:
            return
        channel = self.bot.get_partial_messageable(record.channel_id, guild_id=record.guild_id)
        try:
            await channel.send(text, allowed_mentions=NO_MENTIONS)
        except discord.HTTPException:
            log.warning("could not tell %s's channel: %s", agent, text, exc_info=True)


def change_reason(change: PlanningChange) -> str | None:
    return audit_reason(change.detail)


def audit_reason(detail: Mapping[str, Any]) -> str | None:
    reason = detail.get("reason")
    return reason if isinstance(reason, str) and reason else None
