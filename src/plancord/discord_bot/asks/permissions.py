"""Permission requests an agent puts to a human in its channel (a call the profile holds, a
drift, a network host, a 🔴 step's checkpoint), as cards: an embed with Allow / Deny buttons
(or a checkpoint's own two labels). The ask is the core's (``core.asks``: kept, waited on,
judged, audited, expired); this module posts its card, reports a click as an answer
(``AskService.answer``, which the authority judges), and marks the card with how the ask
ended. A card Discord would not show even after retries (``posting.py``) raises
``CardNotShown`` with the reason.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import discord

from plancord.core.asks.choices import labels_of, subject_of
from plancord.core.asks.records import CardRef, OpenAsk, StoredAsk
from plancord.core.asks.service import UNANSWERED, Answered, NotWaiting
from plancord.core.authority import ACTS, Answer, Decision
from plancord.core.errors import CardNotShown
from plancord.discord_bot.asks.live import (
    ClickWords,
    LiveAsks,
    edit_quietly,
    redraw_card,
    refuse,
)
from plancord.discord_bot.asks.permission_card import (
    permission_embed,
    permission_view,
    settled_fields,
    user_id_of,
)
from plancord.discord_bot.asks.posting import Card, card_name, plain_permission_text, post_card
from plancord.discord_bot.asks.remember import add_remember_buttons
from plancord.discord_bot.shared.channel_io import ChannelIO
from plancord.discord_bot.shared.client import PlancordClient
from plancord.discord_bot.shared.common import acknowledge, actor_at

log = logging.getLogger(__name__)

CLICK_WORDS = ClickWords(
    settled="This request was already decided: {outcome}",
    expired="This request expired: nobody can answer it any more, and nothing was run.",
)
EXPIRED = "Expired — plancord restarted before a decision. Nothing was run."


@dataclass
class Permissions:
    """The agent's permission requests as cards: posted, redrawn once decided, marked when
    nobody decided or a restart expired them."""

    bot: PlancordClient
    io: ChannelIO
    live: LiveAsks

    async def show(self, ask: OpenAsk) -> CardRef:
        """Post the request's card; ``CardNotShown`` when no try showed it."""
        destination = await self.io.destination(ask.agent)
        try:
            message = await post_card(destination, self.card(ask.id, ask.agent, ask.payload))
        except CardNotShown as exc:
            log.warning("could not post a %s card for %s: %s", exc.card, ask.agent, exc)
            raise
        return self.live.shown(ask, [message]).ref

    def card(self, ask_id: str, agent: str, payload: dict[str, Any]) -> Card:
        """The request's card as posted (and posted again when it is deleted)."""
        labels = labels_of(payload)
        user_id = user_id_of(payload.get("requested_by"))
        view = permission_view(ask_id, labels=labels)
        add_remember_buttons(view, ask_id, payload)
        return Card(
            name=card_name(labels),
            content=f"<@{user_id}>" if user_id else None,
            embed=permission_embed(agent, payload),
            view=view,
            allowed_mentions=discord.AllowedMentions(
                everyone=False,
                roles=False,
                users=[discord.Object(id=user_id)] if user_id else False,
            ),
            plain=plain_permission_text(agent, payload),
        )

    async def decide(
        self, interaction: discord.Interaction[discord.Client], ask_id: str, allow: bool
    ) -> None:
        """A click on Allow / Deny: answered at once (a deferred update: the policy reads the
        store and a refusal writes its audit row, which may take longer than Discord waits),
        then reported to the service, which judges it and settles the ask once. A click on
        an ask this process no longer waits on is told so at once, from memory."""
        ask = await self.live.clicked(interaction, ask_id, "permission", CLICK_WORDS)
        if ask is None:
            return
        await acknowledge(interaction)
        word = labels_of(ask.payload)[0 if allow else 1]
        outcome = (
            f"{'Allowed' if allow else 'Denied'} by {interaction.user.mention}"
            if (word in ("Allow", "Deny"))
            else f"{word} — chosen by {interaction.user.mention}"
        )
        act = ACTS[subject_of(ask.payload)][0 if allow else 1]
        result = await self.live.service.answer(
            ask_id, actor_at(interaction), act.value, outcome=outcome, redraw=False
        )
        if isinstance(result, NotWaiting):
            await refuse(interaction, CLICK_WORDS.taken(result.outcome))
            return
        if not isinstance(result, Answered):  # refused by the authority
            await refuse(interaction, result.text)
            return
        await redraw_card(self.bot, interaction, ask, **settled_fields(ask, outcome, allow))

    async def settled(self, ask: OpenAsk, outcome: str, value: Any) -> None:
        """Redraw the card of a request decided elsewhere (the operator's shell)."""
        card = self.live.card(ask.id)
        if card is None or not card.message_ids:
            return
        allow = isinstance(value, Decision) and value.answer is Answer.ALLOWED
        await edit_quietly(self.live.message_of(card), **settled_fields(card, outcome, allow))

    async def unanswered(self, ask: OpenAsk) -> None:
        """Nobody decided in time: the card says so, greyed."""
        card = self.live.card(ask.id)
        if card is not None and card.message_ids:
            message = self.live.message_of(card)
            await self._close(message, ask.id, ask.agent, ask.payload, UNANSWERED["permission"])

    async def _close(
        self,
        card: discord.Message | discord.PartialMessage,
        ask_id: str,
        agent: str,
        payload: dict[str, Any],
        outcome: str,
    ) -> None:
        """Mark the card of an ask nobody decided: its ``outcome``, greyed, buttons off."""
        await edit_quietly(
            card,
            embed=permission_embed(
                agent, payload, outcome=outcome, colour=discord.Colour.dark_grey()
            ),
            view=permission_view(ask_id, disabled=True, labels=labels_of(payload)),
        )

    async def expired(self, ask: StoredAsk) -> None:
        """A request left over from an earlier process (audited as expired by the service):
        its card says so with the buttons off."""
        if ask.card is not None:
            await self._close(
                self.live.message_at(ask.card), ask.id, ask.agent, ask.payload, EXPIRED
            )
