"""After a (re)start: settle plan messages whose decision was made while the bot was down,
and re-post the message of a plan still waiting or executing when it was lost."""

from __future__ import annotations

import logging

import discord

from plancord.core.errors import PlancordError
from plancord.core.planning import (
    Actor,
    Phase,
    PlanningState,
)
from plancord.discord_bot.plan_card.message import PlanCards, audit_reason
from plancord.discord_bot.plan_card.status import render_progress
from plancord.discord_bot.shared.client import PlancordClient
from plancord.storage.plan_messages import PlanMessageRecord

log = logging.getLogger(__name__)

NO_MENTIONS = discord.AllowedMentions.none()


class PlanRestore:
    """Brings the plan messages back in line with the planning state after a (re)start."""

    def __init__(self, bot: PlancordClient, cards: PlanCards) -> None:
        self.bot = bot
        self.cards = cards

    async def restore(self) -> None:
        """After a (re)start: settle the plan messages whose decision was made while nothing
        could update them, then post again every waiting plan (and running progress) message
        that was deleted or never made it to Discord. Buttons need no re-attaching: they are
        dynamic items and reload everything from the store when clicked. Only the agents of
        the guilds this process serves are touched (``discord.shard_ids``)."""
        serves = self.bot.app.serves
        for record in await self.cards.store.pending():
            if not await serves(record.agent):
                continue
            try:
                await self._settle(record)
            except (discord.HTTPException, PlancordError):
                log.warning(
                    "could not settle the message of plan v%s of %s",
                    record.revision,
                    record.agent,
                    exc_info=True,
                )
        for state in await self.bot.app.store.list_states():
            if state.plan_id is None or state.revision == 0 or not await serves(state.agent):
                continue
            try:
                if state.phase is Phase.SUBMITTED:
                    await self._restore_plan_message(state, state.plan_id)
                elif state.phase is Phase.EXECUTING:
                    await self._restore_progress_message(state)
            except discord.HTTPException:
                log.warning("could not restore the plan message of %s", state.agent, exc_info=True)

    async def _settle(self, record: PlanMessageRecord) -> None:
        """A message still offering a decision on a revision the audit log says was decided,
        timed out or cancelled (the process stopped between the commit and the edit, or the
        operator decided from the command line): record the outcome and turn its buttons off.
        """
        decision = await self.bot.app.store.find_decision(record.plan_id, record.revision)
        if decision is None:
            return
        await self.cards.mark_outcome(
            record,
            decision.action,
            Actor.from_label(decision.actor),
            decision.at,
            audit_reason(decision.detail),
        )
        log.info("settled plan v%s of %s: %s", record.revision, record.agent, decision.action)

    async def _restore_plan_message(self, state: PlanningState, plan_id: str) -> None:
        record = await self.cards.store.get(plan_id, state.revision)
        if record is not None and await self._exists(record, record.message_id):
            return
        revision = await self.bot.app.store.get_revision(plan_id, state.revision)
        if revision is None:
            return
        reposted = await self.cards.post_again(revision, state)
        if reposted is not None:
            log.info("re-posted plan v%s of %s", revision.revision, revision.agent)

    async def _restore_progress_message(self, state: PlanningState) -> None:
        record, revision = await self.cards.progress_of(state)
        if record is None or revision is None:
            return
        if record.progress_message_id is not None and await self._exists(
            record, record.progress_message_id
        ):
            return
        embed = render_progress(
            revision, state.steps, approved_by=state.approved_by_name, mode=state.approval_mode
        )
        message = await self.cards.channel_of(record).send(
            embed=embed, allowed_mentions=NO_MENTIONS
        )
        await self.cards.store.put(record.model_copy(update={"progress_message_id": message.id}))

    async def _exists(self, record: PlanMessageRecord, message_id: int) -> bool:
        try:
            await self.cards.channel_of(record).fetch_message(message_id)
        except discord.NotFound:
            return False
        return True
