"""Completion cards in the agent's channel: posted when an execution ends, redrawn when the
result changes, posted again at once when deleted, and brought back after a restart.

Why this exists: the decision on an execution's result must never be lost. The card is
posted with the branch's full diff attached (``diff_file``); should Discord refuse the file,
the card is posted without it, saying so. The store keeps where the card is
(``ExecutionStore.set_card``), so a deleted card of a result still waiting is posted again
(``KnownCards``, registered in ``shared.reposting``) and a restart posts again any that went
missing. A card Discord refused is owed (``owed.OwedCards``) and posted when Discord answers
again. Buttons need no re-attaching: they are dynamic items.
"""

from __future__ import annotations

import logging
from pathlib import Path

import discord

from plancord.core.errors import PlancordError
from plancord.core.results import ResultSummary
from plancord.discord_bot.result_card.buttons import result_view
from plancord.discord_bot.result_card.diff_file import DiffAttachment, diff_attachment
from plancord.discord_bot.result_card.embed import render_result
from plancord.discord_bot.result_card.owed import POST_FAILURES, OwedCards
from plancord.discord_bot.shared.channel_io import tell_bound_channel
from plancord.discord_bot.shared.client import PlancordClient
from plancord.discord_bot.shared.embed_basics import jump_url
from plancord.discord_bot.shared.reposting import Reposted
from plancord.storage.executions import ExecutionStore

log = logging.getLogger(__name__)

NO_MENTIONS = discord.AllowedMentions.none()
FILE_REFUSED = (400, 413)
"""Discord's answers to a file it will not take (too large, or refused as a request); any
other failure is not the file's, and posting without it would not help."""


class ResultCards:
    """``core.results.ResultListener`` on Discord, and the completion card as a card the
    store knows."""

    def __init__(self, bot: PlancordClient) -> None:
        self.bot = bot
        self._notes: dict[str, str | None] = {}
        self.owed = OwedCards(lambda: self._store, self._serves, self.post)

    async def _serves(self, agent: str) -> bool:
        return await self.bot.app.serves(agent)

    @property
    def _store(self) -> ExecutionStore:
        return self.bot.app.executions

    async def result_ready(self, agent: str, plan_id: str) -> None:
        try:
            await self.post(plan_id)
        except POST_FAILURES as exc:
            log.warning("the completion card of %s was refused; trying again: %s", plan_id, exc)
            self.owed.refused(plan_id)

    async def result_changed(self, agent: str, plan_id: str) -> None:
        await self.redraw(plan_id)

    async def result_recovered(self, agent: str, plan_id: str, text: str) -> None:
        """Say in the agent's channel how an interrupted decision on its result ended."""
        await tell_bound_channel(self.bot, agent, text)

    async def attachment(self, plan_id: str, name: str) -> DiffAttachment | None:
        """The result's diff as an attachment; None when its branch is gone."""
        made: list[DiffAttachment] = []

        async def use(path: Path) -> None:
            made.append(await diff_attachment(path, name))

        if not await self.bot.app.results.write_diff(plan_id, use):
            return None
        return made[0]

    async def post(self, plan_id: str) -> discord.Message | None:
        """Post the card of ``plan_id``'s result with its diff; the message, or None when
        there is no such result or the agent has no channel."""
        app = self.bot.app
        summary = await app.results.summary(plan_id)
        if summary is None:
            return None
        record = summary.record
        agent = await app.store.get_agent(record.agent)
        if agent.channel_id is None:
            return None
        channel = self.bot.get_partial_messageable(agent.channel_id, guild_id=agent.guild_id)
        diff = await self.attachment(plan_id, f"{record.branch.replace('/', '-')}")
        note = diff.note if diff is not None else None
        self._notes[plan_id] = note
        view = self._view(summary)
        embed = render_result(summary, note)
        try:
            if diff is not None and diff.data:
                message = await channel.send(
                    embed=embed, view=view, file=diff.file(), allowed_mentions=NO_MENTIONS
                )
            else:
                message = await channel.send(embed=embed, view=view, allowed_mentions=NO_MENTIONS)
        except discord.HTTPException as exc:
            if diff is None or not diff.data or exc.status not in FILE_REFUSED:
                raise
            # Never lose the card for its file: post it without, saying why.
            log.warning("the completion card's diff was refused: %s", exc)
            note = f"The diff could not be attached ({exc.status}); `/plan diff result` shows it."
            self._notes[plan_id] = note
            embed = render_result(summary, note)
            message = await channel.send(embed=embed, view=view, allowed_mentions=NO_MENTIONS)
        await self._store.set_card(plan_id, message.channel.id, message.id)
        return message

    async def redraw(self, plan_id: str) -> None:
        """Show the result as it is now on its card (posted anew when it has none)."""
        app = self.bot.app
        summary = await app.results.summary(plan_id)
        if summary is None:
            return
        record = summary.record
        if record.card_channel is None or record.card_message is None:
            await self.result_ready(record.agent, plan_id)
            return
        note = self._notes.get(plan_id)
        message = self.bot.get_partial_messageable(record.card_channel).get_partial_message(
            record.card_message
        )
        try:
            await message.edit(embed=render_result(summary, note), view=self._view(summary))
        except discord.NotFound:
            if record.waiting:
                await self.post(plan_id)
        except discord.HTTPException:
            log.warning("could not redraw the completion card of %s", plan_id, exc_info=True)

    def _view(self, summary: ResultSummary) -> discord.ui.View:
        record = summary.record
        return result_view(
            record.plan_id,
            record.result_version,
            summary.steps,
            waiting=record.waiting,
            can_push=summary.push_remote is not None,
        )

    # -- a card the store knows ------------------------------------------------------------

    async def repost(self, channel_id: int, message_id: int) -> Reposted | None:
        record = await self._store.by_card(channel_id, message_id)
        if record is None or not record.waiting or not await self.bot.app.serves(record.agent):
            return None
        posted = await self.post(record.plan_id)
        if posted is None:
            return None
        guild_id = posted.guild.id if posted.guild is not None else None
        return Reposted(
            what=f"The completion card of **{record.agent}**'s plan v{record.revision}",
            agent=record.agent,
            url=jump_url(guild_id, posted.channel.id, posted.id),
        )

    async def restore(self) -> None:
        """After a (re)start: post again the card of every waiting result that has none or
        whose message is gone (only the agents this process serves)."""
        for record in await self._store.waiting_results():
            if not await self.bot.app.serves(record.agent):
                continue
            try:
                if record.card_channel is not None and record.card_message is not None:
                    channel = self.bot.get_partial_messageable(record.card_channel)
                    try:
                        await channel.fetch_message(record.card_message)
                        continue
                    except discord.NotFound:
                        pass
                await self.post(record.plan_id)
            except (*POST_FAILURES, PlancordError):
                log.warning("could not restore the completion card of %s", record.plan_id)
                self.owed.refused(record.plan_id)
