"""The asks as cards the store knows (``shared.reposting``): a deleted question, permission
request or checkpoint card this process still waits on is posted again at once with the
same buttons (the ask id is the same, so its controls still reach it), and its row and live
ask point at the new message. A settled or expired ask is not posted again.

A permission or checkpoint card that cannot be posted again settles its ask as not shown
(``CardNotShown``): nobody could decide it, so nothing runs and the waiter says why.
"""

from __future__ import annotations

import logging

from plancord.core.asks.choices import choices_of
from plancord.core.errors import CardNotShown
from plancord.discord_bot.asks.live import LiveAsk, LiveAsks
from plancord.discord_bot.asks.permissions import Permissions
from plancord.discord_bot.asks.posting import post_card
from plancord.discord_bot.asks.question_card import question_text, question_view
from plancord.discord_bot.shared.channel_io import send_chunks
from plancord.discord_bot.shared.client import PlancordClient
from plancord.discord_bot.shared.reposting import Reposted

log = logging.getLogger(__name__)


class AskReposts:
    def __init__(self, bot: PlancordClient, live: LiveAsks, permissions: Permissions) -> None:
        self.bot = bot
        self.live = live
        self.permissions = permissions

    async def repost(self, channel_id: int, message_id: int) -> Reposted | None:
        ask = next(
            (
                ask
                for ask in self.live.of_kind("question") + self.live.of_kind("permission")
                if ask.channel_id == channel_id and ask.message_ids[-1:] == [message_id]
            ),
            None,
        )
        if ask is None:
            return None
        if ask.kind == "permission":
            posted = await self._permission(ask)
            what = f"The {posted} card of **{ask.agent}**" if posted else None
        else:
            what = f"The question of **{ask.agent}**" if await self._question(ask) else None
        if what is None or self.live.get(ask.id) is None:
            return None
        await self.live.service.moved(ask.id, ask.ref)
        channel = self.bot.get_partial_messageable(ask.channel_id)
        return Reposted(
            what=what,
            agent=ask.agent,
            url=channel.get_partial_message(ask.message_ids[-1]).jump_url,
        )

    async def _permission(self, ask: LiveAsk) -> str | None:
        """The card's name once posted again; None when it could not be (the ask is then
        settled as not shown)."""
        card = self.permissions.card(ask.id, ask.agent, ask.payload)
        channel = self.bot.get_partial_messageable(ask.channel_id)
        try:
            message = await post_card(channel, card)
        except CardNotShown as exc:
            self.live.settle(ask.id, f"not shown: {exc}", exc)
            return None
        ask.message_ids.append(message.id)
        return card.name

    async def _question(self, ask: LiveAsk) -> bool:
        choices = list(choices_of(ask.payload))
        content = question_text(
            ask.agent, str(ask.payload.get("text", "")), "", choices=bool(choices)
        )
        view = question_view(ask.id, choices) if choices else None
        channel = self.bot.get_partial_messageable(ask.channel_id)
        messages = await send_chunks(channel, content, view=view)
        if not messages or (view is not None and not messages[-1].components):
            log.warning("could not post the question %s of %s again", ask.id, ask.agent)
            return False
        ask.message_ids.extend(m.id for m in messages)
        ask.content = messages[-1].content
        return True
