"""``ask_user`` in the agent's channel: the question message, and the three ways it is
answered — the asker's next message (or a reply to the question), a tap on one of the
agent's choices, or "Other…" and a form.

The answer goes back to the model with who gave it and when. A typed answer counts only from
the member the agent asked (the channel's other chatter is not an answer); a tap or the form
is open to anyone who may instruct the agent, and refused for everyone else (the authority
judges it: ``core.ask_authority``). After a restart
the question's row is expired like any ask (``Asks.restore``).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import discord

from plancord.core.asks.choices import choices_of, for_model
from plancord.core.asks.records import CardRef, OpenAsk, StoredAsk
from plancord.core.authority import Act, Subject
from plancord.core.errors import CardNotShown
from plancord.discord_bot.asks.live import (
    NO_MENTIONS,
    ClickWords,
    LiveAsk,
    LiveAsks,
    edit_quietly,
    redraw_card,
    refuse,
)
from plancord.discord_bot.asks.permission_card import duration_text, user_id_of
from plancord.discord_bot.asks.question_card import (
    OtherAnswer,
    question_text,
    question_view,
    with_note,
)
from plancord.discord_bot.shared.channel_io import ChannelIO, send_chunks
from plancord.discord_bot.shared.client import PlancordClient
from plancord.discord_bot.shared.common import acknowledge

log = logging.getLogger(__name__)

CLICK_WORDS = ClickWords(
    settled="This question was already settled: {outcome}.",
    expired="This question expired: the agent is no longer waiting for it. "
    "Send your answer as a normal message.",
)


@dataclass
class Questions:
    """The agent's questions as messages: put to the channel, redrawn once answered, marked
    when nobody answered or a restart expired them."""

    bot: PlancordClient
    io: ChannelIO
    live: LiveAsks

    async def show(self, ask: OpenAsk) -> CardRef:
        """Put the question to the agent's channel; ``CardNotShown`` when it cannot be (a
        question with choices is not shown without its controls)."""
        destination = await self.io.destination(ask.agent)
        if destination is None:
            raise CardNotShown("question", "the agent is bound to no channel the bot can reach")
        choices = list(choices_of(ask.payload))
        user_id = user_id_of(ask.requested_by)
        mention = f"<@{user_id}>" if user_id else ""
        allowed = discord.AllowedMentions(
            everyone=False,
            roles=False,
            replied_user=False,
            users=[discord.Object(id=user_id)] if user_id else False,
        )
        text = str(ask.payload.get("text", ""))
        content = question_text(ask.agent, text, mention, choices=bool(choices))
        view = question_view(ask.id, choices) if choices else None
        messages = await send_chunks(destination, content, allowed_mentions=allowed, view=view)
        if not messages or (view is not None and not messages[-1].components):
            # Without its controls a question with choices cannot be answered as offered.
            raise CardNotShown("question", "Discord did not show the question with its controls")
        return self.live.shown(ask, messages).ref

    async def unanswered(self, ask: OpenAsk) -> None:
        """Nobody answered in time: the question says so, its controls off."""
        card = self.live.card(ask.id)
        if card is None or not card.message_ids:
            return
        note = (
            f"-# ⌛ No answer within {duration_text(ask.seconds)}; the agent went on without one."
        )
        await self._close(self.live.message_of(card), card.id, card.payload, card.content, note)

    async def settled(self, ask: OpenAsk, outcome: str, value: object) -> None:
        """Redraw a question answered elsewhere (the operator's shell)."""
        card = self.live.card(ask.id)
        if card is None or not card.message_ids:
            return
        when = self.bot.app.clock.now()
        note = f"-# ✅ {outcome[:300]} · <t:{int(when.timestamp())}:t>"
        choices = choices_of(card.payload)
        await edit_quietly(
            self.live.message_of(card),
            content=with_note(card.content, note),
            view=question_view(card.id, choices, disabled=True) if choices else None,
        )

    def take_answer(self, message: discord.Message) -> bool:
        """Hand ``message`` to the question it answers; True when it was taken as an answer.

        An answer is a reply to the question, or any message in the question's channel, from
        the member the agent asked (anyone, when the agent could not say who that is).
        """
        reference = message.reference.message_id if message.reference else None
        for ask in self.live.of_kind("question"):
            if ask.requested_by is not None and str(message.author.id) != ask.requested_by:
                continue
            if reference in ask.message_ids or message.channel.id == ask.channel_id:
                who = message.author.display_name
                now = self.bot.app.clock.now()
                answer = for_model("answered", message.clean_content, who, now)
                self.live.settle(ask.id, f"{who} answered in the channel", answer)
                return True
        return False

    # -- taps and the form -----------------------------------------------------------------

    async def answer(
        self, interaction: discord.Interaction[discord.Client], ask_id: str, index: int | None
    ) -> None:
        """A tap on a choice (``index``) or on "Other…" (``None``, which opens the form).

        The first answer comes before the store is read, since the authority's judgement
        reads it (and a refusal writes its audit row): a tap is acknowledged at once with a
        deferred update, then judged; "Other…" opens its form at once, with what the click
        carries and the question this process holds in memory, and the form's submission is
        judged like a tap (``answer_text``): a member who may not answer learns it then. A
        click on a question this process no longer waits on is told so at once."""
        ask = await self.live.clicked(interaction, ask_id, "question", CLICK_WORDS)
        if ask is None:
            return
        if index is None:
            try:
                await interaction.response.send_modal(
                    OtherAnswer(ask_id, str(ask.payload.get("text", "")))
                )
            except discord.HTTPException as exc:
                log.warning("could not open the answer form for %s: %s", ask_id, exc)
            return
        await acknowledge(interaction)
        if not await self._judged(interaction, ask):
            return
        choices = choices_of(ask.payload)
        if not 0 <= index < len(choices):
            await refuse(interaction, "That choice is not one this question offers.")
            return
        await self._settle(interaction, ask, "chose", choices[index], index)

    async def answer_text(
        self, interaction: discord.Interaction[discord.Client], ask_id: str, text: str
    ) -> None:
        """The "Other…" form, submitted: acknowledged at once, then judged."""
        await acknowledge(interaction)
        ask = await self.live.clicked(interaction, ask_id, "question", CLICK_WORDS)
        if ask is None or not await self._judged(interaction, ask):
            return
        if not text.strip():
            await refuse(interaction, "An empty answer answers nothing; the question is open.")
            return
        await self._settle(interaction, ask, "answered", text.strip(), None)

    async def _judged(self, interaction: discord.Interaction[discord.Client], ask: LiveAsk) -> bool:
        """Whether the authority lets the clicker answer ``ask``; a refusal is told."""
        verdict = await self.live.judged(
            interaction, ask, Subject.QUESTION, Act.ANSWER, {"ask_id": ask.id}
        )
        return verdict is not None

    async def _settle(
        self,
        interaction: discord.Interaction[discord.Client],
        ask: LiveAsk,
        verb: str,
        answer: str,
        index: int | None,
    ) -> None:
        user = interaction.user
        settled = self.live.settle(
            ask.id,
            f"{user.display_name} {verb} {answer[:100]}",
            for_model(verb, answer, user.display_name, self.bot.app.clock.now()),
        )
        if not settled:
            await refuse(interaction, CLICK_WORDS.taken(self.live.outcome(ask.id)))
            return
        when = self.bot.app.clock.now()
        shown = f"**{answer}**" if index is not None else f"“{answer[:300]}”"
        note = f"-# ✅ {user.mention} {verb} {shown} · <t:{int(when.timestamp())}:t>"
        content = with_note(ask.content, note)
        view = question_view(ask.id, choices_of(ask.payload), disabled=True, chosen=index)
        await redraw_card(
            self.bot, interaction, ask, content=content, view=view, allowed_mentions=NO_MENTIONS
        )

    async def expired(self, ask: StoredAsk) -> None:
        """A question left over from an earlier process: it says so, its controls off."""
        if ask.card is None:
            return
        message = self.live.message_at(ask.card)
        note = (
            "-# ⌛ This question expired: plancord restarted before an answer. "
            "Send your answer as a normal message."
        )
        try:
            content = (await message.fetch()).content
        except discord.HTTPException:
            content = question_text(ask.agent, str(ask.payload.get("text", "")), "")
        await self._close(message, ask.id, ask.payload, content, note)

    async def _close(
        self,
        card: discord.Message | discord.PartialMessage,
        ask_id: str,
        payload: dict[str, Any],
        content: str,
        note: str,
    ) -> None:
        """Mark the question nobody answered: ``content`` with ``note``, its controls off."""
        choices = choices_of(payload)
        await edit_quietly(
            card,
            content=with_note(content, note),
            view=question_view(ask_id, choices, disabled=True) if choices else None,
        )
