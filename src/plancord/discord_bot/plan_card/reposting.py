"""The plan message as a card the store knows (``shared.reposting``): a deleted message of a
revision still waiting for a decision is posted again at once, with its buttons, picked
answers and votes, and its record points at the new message. A revision already decided,
superseded or cancelled is not posted again: nothing waits on it."""

from __future__ import annotations

from plancord.core.planning import Phase
from plancord.discord_bot.plan_card.message import PlanCards
from plancord.discord_bot.shared.client import PlancordClient
from plancord.discord_bot.shared.reposting import Reposted
from plancord.storage.plan_messages import MessageStatus


class PlanReposts:
    def __init__(self, bot: PlancordClient, cards: PlanCards) -> None:
        self.bot = bot
        self.cards = cards

    async def repost(self, channel_id: int, message_id: int) -> Reposted | None:
        record = await self.cards.store.by_message(channel_id, message_id)
        if record is None or record.status is not MessageStatus.PENDING:
            return None
        app = self.bot.app
        if not await app.serves(record.agent):
            return None
        state = await app.store.load_state(record.agent)
        waiting = (
            state.phase is Phase.SUBMITTED
            and state.plan_id == record.plan_id
            and state.revision == record.revision
        )
        if not waiting:
            return None
        revision = await app.store.get_revision(record.plan_id, record.revision)
        if revision is None:
            return None
        posted = await self.cards.post_again(revision, state)
        if posted is None:
            return None
        # ``post`` draws a fresh card; the redraw brings back what was on the old one since
        # (the approvals so far).
        await self.cards.redraw(posted, revision=revision)
        return Reposted(
            what=f"The plan v{record.revision} of **{record.agent}**",
            agent=record.agent,
            url=self.cards.url_of(posted),
        )
