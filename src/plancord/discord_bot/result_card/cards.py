"""Completion cards in the agent's channel: posted when an execution ends, redrawn when the
result changes, posted again at once when deleted, and brought back after a restart.

Why this exists: the decision on an execution's result must never be lost. The card is
posted with the branch's full diff attached (``diff_file``) and, when the card shows less
than every step did or the plan's calls have decision records, the steps in full with what
decided each call (``details``). A card that does not fit, or that
Discord refuses for what it holds (a 400 is not a passing failure: the same payload would be
refused again), is posted in a smaller form: compact, then without the diff (saying so),
then as a plain line under the buttons, and at last as a line saying how to decide from the
host; it is never retried as it was. The store keeps where the card is
(``ExecutionStore.set_card``), so a deleted card of a result still waiting is posted again
(``KnownCards``, registered in ``shared.reposting``) and a restart posts again any that went
missing. A card Discord refused is owed (``owed.OwedCards``) and posted when Discord answers
again. Buttons need no re-attaching: they are dynamic items.

A card is posted under a claimed slot: the slot is claimed in the store first
(``ExecutionStore.claim_card``: a database that refuses writes refuses here, before anything
is posted), then the card is posted, then its message recorded. When that record fails, the
message is kept here and the card owed: the next try records and edits that message, never
posting a second one. A copy that is not the recorded card (a process died between posting
and recording, and the next start posted the card again) is closed at its first click
(``buttons``).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import discord

from plancord.core.call_records import CallRecord
from plancord.core.errors import PlancordError, StorageError
from plancord.core.results import ResultSummary
from plancord.discord_bot.result_card.buttons import result_view
from plancord.discord_bot.result_card.details import details_file, details_filename
from plancord.discord_bot.result_card.diff_file import DiffAttachment, diff_attachment
from plancord.discord_bot.result_card.embed import render_result
from plancord.discord_bot.result_card.owed import POST_FAILURES, OwedCards
from plancord.discord_bot.shared.channel_io import tell_bound_channel
from plancord.discord_bot.shared.client import PlancordClient
from plancord.discord_bot.shared.embed_basics import jump_url
from plancord.discord_bot.shared.message_fit import (
    file_problems,
    misfits,
    refused_for_payload,
)
from plancord.discord_bot.shared.reposting import Reposted
from plancord.storage.executions import ExecutionStore

log = logging.getLogger(__name__)

NO_MENTIONS = discord.AllowedMentions.none()


class ResultCards:
    """``core.results.ResultListener`` on Discord, and the completion card as a card the
    store knows."""

    def __init__(self, bot: PlancordClient) -> None:
        self.bot = bot
        self._notes: dict[str, str | None] = {}
        self._details: dict[str, bool] = {}
        """Per plan, whether its card carries the steps file."""
        self._unrecorded: dict[str, discord.Message] = {}
        """Per plan, the card posted whose message the store did not record yet."""
        self.owed = OwedCards(lambda: self._store, self._serves, self.post)

    async def _serves(self, agent: str) -> bool:
        return await self.bot.app.serves(agent)

    @property
    def _store(self) -> ExecutionStore:
        return self.bot.app.executions

    async def result_ready(self, agent: str, plan_id: str) -> None:
        try:
            await self.post(plan_id)
        except (*POST_FAILURES, StorageError) as exc:
            log.warning("the completion card of %s was refused; trying again: %s", plan_id, exc)
            self.owed.refused(plan_id, exc)

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

    async def calls(self, plan_id: str) -> list[CallRecord]:
        """The decision records of ``plan_id``'s tool calls, every one noted so far written
        first; none where records are not kept."""
        calls = self.bot.app.call_log
        if calls is None:
            return []
        await calls.flush()
        return await calls.store.of_plan(plan_id)

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
        posted = self._unrecorded.get(plan_id)
        if posted is not None:  # posted already: record that message, and show it as it is now
            await self._store.set_card(plan_id, posted.channel.id, posted.id)
            del self._unrecorded[plan_id]
            await self.redraw(plan_id)
            return posted
        channel = self.bot.get_partial_messageable(agent.channel_id, guild_id=agent.guild_id)
        await self._store.claim_card(plan_id, agent.channel_id)
        diff = await self.attachment(plan_id, f"{record.branch.replace('/', '-')}")
        message = await self._send(channel, summary, diff, await self.calls(plan_id))
        self._unrecorded[plan_id] = message
        await self._store.set_card(plan_id, message.channel.id, message.id)
        del self._unrecorded[plan_id]
        return message

    async def _send(
        self,
        channel: discord.PartialMessageable,
        summary: ResultSummary,
        diff: DiffAttachment | None,
        calls: list[CallRecord],
    ) -> discord.Message:
        """The card in the first form that fits and Discord takes: whole with its files,
        compact, compact without the diff, then a plain line with the buttons, and at last
        a plain line saying how to decide. A smaller form is tried only when the one before
        does not fit or Discord refused it for what it holds (400, 413); any other failure
        is raised (it is owed and tried again)."""
        plan_id = summary.record.plan_id
        view = self._view(summary)
        refusal = ""
        status: int | None = None
        compact = False
        with_diff = diff is not None and bool(diff.data)
        while True:
            note = diff.note if diff is not None else None
            if diff is not None and diff.data and not with_diff:
                note = f"The diff could not be attached{refusal}; `/plan diff result` shows it."
            rendered = render_result(summary, note, compact=compact)
            files = [diff.file()] if with_diff and diff is not None else []
            if rendered.shortened or calls:
                files.append(details_file(summary, calls))
            problems = misfits(embeds=[rendered.embed], view=view, files=files)
            try:
                if problems:
                    log.warning("the completion card of %s does not fit: %s", plan_id, problems)
                else:
                    message = await channel.send(
                        embed=rendered.embed, view=view, files=files, allowed_mentions=NO_MENTIONS
                    )
                    self._notes[plan_id] = note
                    self._details[plan_id] = rendered.shortened or bool(calls)
                    return message
            except discord.HTTPException as exc:
                if not refused_for_payload(exc):
                    raise
                log.warning("Discord refused the completion card of %s: %s", plan_id, exc)
                status, refusal = exc.status, f" (Discord answered {exc.status})"
            too_large = status == 413 or bool(file_problems(files))
            if with_diff and (too_large or compact):
                with_diff = False  # the file is what is too large, or all that is left
            elif not compact:
                compact = True
            else:
                break
        return await self._say_instead(channel, summary, view, refusal)

    async def _say_instead(
        self,
        channel: discord.PartialMessageable,
        summary: ResultSummary,
        view: discord.ui.View,
        refusal: str,
    ) -> discord.Message:
        """No form of the card was taken: a plain line with the buttons stands for it, or,
        refused too, a line saying how the result is decided without them."""
        record = summary.record
        self._notes[record.plan_id] = None
        self._details[record.plan_id] = False
        what = f"**{record.agent}**'s plan v{record.revision} on `{record.branch}`"
        try:
            return await channel.send(
                f"🏁 The result of {what} waits for Merge or Discard. Its card could not be "
                f"shown{refusal}; `/plan diff result` shows the change.",
                view=view,
                allowed_mentions=NO_MENTIONS,
            )
        except discord.HTTPException as exc:
            if not refused_for_payload(exc):
                raise
            log.warning("Discord refused the completion line of %s: %s", record.plan_id, exc)
        return await channel.send(
            f"⚠️ The completion card of {what} could not be posted{refusal}. The result waits "
            f"for a decision: `plancord plan merge --agent {record.agent}` or `plancord plan "
            f"discard --agent {record.agent}` on the bot's host; `/plan diff result` shows it.",
            allowed_mentions=NO_MENTIONS,
        )

    async def redraw(self, plan_id: str) -> None:
        """Show the result as it is now on its card (posted anew when it has none): whole
        when it fits, else compact; the steps file is added when the card now needs it."""
        app = self.bot.app
        summary = await app.results.summary(plan_id)
        if summary is None:
            return
        record = summary.record
        if record.card_channel is None or record.card_message is None:
            await self.result_ready(record.agent, plan_id)
            return
        note = self._notes.get(plan_id)
        channel = self.bot.get_partial_messageable(record.card_channel)
        message = channel.get_partial_message(record.card_message)
        view = self._view(summary)
        for compact in (False, True):
            rendered = render_result(summary, note, compact=compact)
            if misfits(embeds=[rendered.embed], view=view) and not compact:
                continue
            try:
                extra: dict[str, Any] = {}
                if rendered.shortened and not self._details.get(plan_id, False):
                    kept = (await channel.fetch_message(record.card_message)).attachments
                    if details_filename(summary) not in {a.filename for a in kept}:
                        calls = await self.calls(plan_id)
                        extra["attachments"] = [*kept, details_file(summary, calls)]
                await message.edit(embed=rendered.embed, view=view, **extra)
                self._details[plan_id] = self._details.get(plan_id, False) or rendered.shortened
                return
            except discord.NotFound:
                if record.waiting:
                    await self.post(plan_id)
                return
            except discord.HTTPException as exc:
                if compact or not refused_for_payload(exc):
                    log.warning("could not redraw the card of %s", plan_id, exc_info=True)
                    return

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
            except (*POST_FAILURES, PlancordError) as exc:
                log.warning("could not restore the completion card of %s", record.plan_id)
                self.owed.refused(record.plan_id, exc)
