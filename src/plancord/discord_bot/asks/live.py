"""What questions and permission requests share on Discord: where each ask's card is
(``LiveAsks``, over the core's ``AskService``, which owns the asks, their rows, the wait and
the settling), the way a click reaches the ask it names and is judged, and how a click is
refused.

The waiting side parks on ``Client.wait_for`` for a resolution event (``DiscordSignals``:
the wait SimCord and discord.py both see); whoever settles an ask does it through the
service, which pops the live ask before dispatching it, so a double click or a racing
answer acts once.

A settled ask's card must not go on showing live controls: when Discord refuses both the
click's edit and the card's own edit, marking the card is owed (``agent.owed``, kind
``mark-ask-card``) and done again, its controls removed, until Discord takes it.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import discord

from plancord.core.asks.records import AskKind, CardRef, OpenAsk
from plancord.core.asks.service import AskService
from plancord.core.authority import Act, Decision, Refusal, Subject
from plancord.discord_bot.shared.client import PlancordClient
from plancord.discord_bot.shared.common import actor_at, update_clicked
from plancord.storage.owed_duties import OwedDuty

log = logging.getLogger(__name__)

MARK_ASK_CARD = "mark-ask-card"
"""The owed duty of marking a settled ask's card (its subject: the ask id)."""
RESOLVED_EVENT = "plancord_ask_resolved"
REMEMBERED_CARDS = 256
NO_MENTIONS = discord.AllowedMentions.none()


ASK_ID = "[0-9a-f]{16}"
"""An ask id as the ask's controls carry it: what ``core.asks.service.new_ask_id`` makes."""


class DiscordSignals:
    """``AskSignals`` on the client's event dispatch."""

    def __init__(self, bot: PlancordClient) -> None:
        self.bot = bot

    async def wait(self, ask_id: str, seconds: float) -> Any:
        _, value = await self.bot.wait_for(
            RESOLVED_EVENT, check=lambda resolved, _value: resolved == ask_id, timeout=seconds
        )
        return value

    def wake(self, ask_id: str, value: Any) -> None:
        self.bot.dispatch(RESOLVED_EVENT, ask_id, value)


@dataclass(slots=True)
class LiveAsk:
    """An ask as its card shows it: the core's ask and where its messages are."""

    id: str
    agent: str
    kind: AskKind
    requested_by: str | None
    channel_id: int
    message_ids: list[int] = field(default_factory=list)
    payload: dict[str, Any] = field(default_factory=dict)
    content: str = ""
    """What the card (the last of its messages) says, to redraw it with its outcome."""
    seconds: float = 0.0

    @classmethod
    def shown(cls, ask: OpenAsk, messages: Sequence[discord.Message]) -> LiveAsk:
        """``ask`` shown as ``messages`` (its controls on the last)."""
        return cls(
            id=ask.id,
            agent=ask.agent,
            kind=ask.kind,
            requested_by=ask.requested_by,
            channel_id=messages[-1].channel.id,
            message_ids=[m.id for m in messages],
            payload=ask.payload,
            content=messages[-1].content,
            seconds=ask.seconds,
        )

    @property
    def ref(self) -> CardRef:
        return CardRef(self.channel_id, self.message_ids[-1])


@dataclass(frozen=True, slots=True)
class ClickWords:
    """How a click on an ask of one kind that no longer waits is answered: ``settled``
    (with ``{outcome}``, how it ended) when this process remembers it, else ``expired``."""

    settled: str
    expired: str

    def gone(self, outcome: str | None) -> str:
        """For a click on an ask no longer waiting: how it ended, or that it expired."""
        return self.taken(outcome) if outcome else self.expired

    def taken(self, outcome: str | None) -> str:
        """For a click that lost the race to settle the ask."""
        return self.settled.format(outcome=outcome or "")


class LiveAsks:
    """The cards of the asks this process shows; the asks themselves are the service's.

    ``get`` and ``of_kind`` name only asks still waiting; ``card`` finds the card of a
    recent ask however it ended (to mark it)."""

    def __init__(self, bot: PlancordClient) -> None:
        self.bot = bot
        self._cards: dict[str, LiveAsk] = {}

    @property
    def service(self) -> AskService:
        return self.bot.app.ask_service

    def waiting(self, agent: str) -> bool:
        """True while the agent waits for a human's answer or decision."""
        return self.service.waiting(agent)

    def ids(self) -> list[str]:
        """The ids of the asks waiting now, oldest first."""
        return self.service.ids()

    def of_kind(self, kind: AskKind) -> list[LiveAsk]:
        return [self._cards[a.id] for a in self.service.of_kind(kind) if a.id in self._cards]

    def get(self, ask_id: str) -> LiveAsk | None:
        return self._cards.get(ask_id) if self.service.get(ask_id) is not None else None

    def card(self, ask_id: str) -> LiveAsk | None:
        return self._cards.get(ask_id)

    def shown(self, ask: OpenAsk, messages: Sequence[discord.Message]) -> LiveAsk:
        """Keep where ``ask``'s card is; cards of long-settled asks are dropped."""
        card = LiveAsk.shown(ask, messages)
        self._cards[ask.id] = card
        while len(self._cards) > REMEMBERED_CARDS:
            oldest = next(iter(self._cards))
            if self.service.get(oldest) is not None:
                break
            del self._cards[oldest]
        return card

    def outcome(self, ask_id: str) -> str | None:
        """How a recently settled ask ended, for a late click; None when nobody remembers."""
        return self.service.outcome(ask_id)

    def settle(self, ask_id: str, outcome: str, value: Any) -> bool:
        """Settle the ask once (``AskService.settle``); False when someone settled it first."""
        return self.service.settle(ask_id, outcome, value)

    async def clicked(
        self,
        interaction: discord.Interaction[discord.Client],
        ask_id: str,
        kind: AskKind,
        words: ClickWords,
    ) -> LiveAsk | None:
        """The waiting ask of ``kind`` a click names; else None, the click told why."""
        ask = self.get(ask_id)
        if ask is None or ask.kind != kind:
            await refuse(interaction, words.gone(self.outcome(ask_id)))
            return None
        return ask

    async def judged(
        self,
        interaction: discord.Interaction[discord.Client],
        ask: LiveAsk,
        subject: Subject,
        act: Act,
        detail: dict[str, Any],
    ) -> Decision | None:
        """The authority's decision on the clicker doing ``act`` to ``ask``; None when it
        refused, the click told why."""
        verdict = await self.bot.app.asks.judge(
            actor_at(interaction), subject, act, ask.agent, ask.requested_by, detail
        )
        if isinstance(verdict, Refusal):
            await refuse(interaction, verdict.text)
            return None
        return verdict

    def message_of(self, ask: LiveAsk) -> discord.PartialMessage:
        """The card's message: the newest of the ask's (a card deleted and posted again,
        ``reposting.py``, is the new one)."""
        return self.message_at(ask.ref)

    def message_at(self, card: CardRef) -> discord.PartialMessage:
        channel = self.bot.get_partial_messageable(card.channel_id)
        return channel.get_partial_message(card.message_id)


async def redraw_card(
    bot: PlancordClient,
    interaction: discord.Interaction[discord.Client],
    ask: LiveAsk,
    **fields: Any,
) -> None:
    """Redraw ``ask``'s own card after a click decided it: through the click's response when
    the click came from that card, else by editing the card itself. The clicked message is
    never edited unless it is the card (a copy of the controls elsewhere stays as it is)."""
    clicked = interaction.message
    on_card = clicked is not None and ask.message_ids[-1:] == [clicked.id]
    if on_card and await update_clicked(interaction, **fields):
        return
    if not ask.message_ids:
        return
    card = bot.get_partial_messageable(ask.channel_id).get_partial_message(ask.message_ids[-1])
    try:
        await card.edit(**fields)
    except discord.HTTPException as exc:
        owed = bot.app.owed
        if owed is None:
            log.warning("could not mark the card of ask %s: %s", ask.id, exc)
            return
        embed = fields.get("embed")
        detail = {
            "channel": ask.channel_id,
            "message": card.id,
            "content": fields.get("content"),
            "embed": embed.to_dict() if isinstance(embed, discord.Embed) else None,
        }
        owed.owe(MARK_ASK_CARD, ask.id, detail, exc)


def mark_owed_card(bot: PlancordClient) -> Callable[[OwedDuty], Awaitable[None]]:
    """The owed marking of a settled ask's card, done again: its outcome shown and its
    controls removed (nothing when the card is gone)."""

    async def mark(duty: OwedDuty) -> None:
        detail = duty.detail
        channel = bot.get_partial_messageable(int(detail["channel"]))
        card = channel.get_partial_message(int(detail["message"]))
        fields: dict[str, Any] = {"view": None, "allowed_mentions": NO_MENTIONS}
        if detail.get("content") is not None:
            fields["content"] = str(detail["content"])
        if detail.get("embed"):
            fields["embed"] = discord.Embed.from_dict(detail["embed"])
        with contextlib.suppress(discord.NotFound):
            await card.edit(**fields)

    return mark


async def edit_quietly(
    message: discord.Message | discord.PartialMessage,
    *,
    content: str | None = None,
    embed: discord.Embed | None = None,
    view: discord.ui.View | None = None,
    allowed_mentions: discord.AllowedMentions = NO_MENTIONS,
) -> None:
    kwargs: dict[str, Any] = {"allowed_mentions": allowed_mentions}
    if content is not None:
        kwargs["content"] = content
    if embed is not None:
        kwargs["embed"] = embed
    if view is not None:
        kwargs["view"] = view
    try:
        await message.edit(**kwargs)
    except discord.HTTPException as exc:
        log.warning("could not edit message %s: %s", message.id, exc)


async def refuse(interaction: discord.Interaction[discord.Client], text: str) -> None:
    try:
        if interaction.response.is_done():
            await interaction.followup.send(text, ephemeral=True)
        else:
            await interaction.response.send_message(text, ephemeral=True)
    except discord.HTTPException as exc:
        log.warning("could not answer an interaction: %s", exc)
