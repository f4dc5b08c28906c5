"""What questions and permission requests share: the live asks this process waits on
(``LiveAsks``), their rows in ``pending_asks``, the one wait for a resolution, the way a
click reaches the ask it names and is judged, and how a click is refused.

The waiting side parks on ``Client.wait_for`` for a resolution event, and whoever settles an
ask does it through ``LiveAsks.settle``, which pops the live ask before dispatching it, so a
double click or a racing answer acts once.

A settled ask's card must not go on showing live controls: when Discord refuses both the
click's edit and the card's own edit, marking the card is owed (``agent.owed``, kind
``mark-ask-card``) and done again, its controls removed, until Discord takes it.
"""

from __future__ import annotations

import contextlib
import logging
import secrets
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import discord

from plancord.core.authority import Act, Decision, Refusal, Subject
from plancord.discord_bot.shared.client import PlancordClient
from plancord.discord_bot.shared.common import actor_at, update_clicked
from plancord.storage.owed_duties import OwedDuty
from plancord.storage.pending_asks import AskKind, PendingAskStore, StoredAsk

log = logging.getLogger(__name__)

MARK_ASK_CARD = "mark-ask-card"
"""The owed duty of marking a settled ask's card (its subject: the ask id)."""
RESOLVED_EVENT = "plancord_ask_resolved"
REMEMBERED_DECISIONS = 256
NO_MENTIONS = discord.AllowedMentions.none()


ASK_ID = "[0-9a-f]{16}"
"""An ask id as the ask's controls carry it: what :func:`new_ask_id` makes."""


def new_ask_id() -> str:
    return secrets.token_hex(8)


@dataclass(slots=True)
class LiveAsk:
    """An ask a coroutine of this process is waiting on."""

    id: str
    agent: str
    kind: AskKind
    requested_by: str | None
    channel_id: int
    message_ids: list[int] = field(default_factory=list)
    payload: dict[str, Any] = field(default_factory=dict)
    content: str = ""
    """What the card (the last of its messages) says, to redraw it with its outcome."""

    @classmethod
    def posted(
        cls,
        stored: StoredAsk,
        requested_by: str | None,
        messages: Sequence[discord.Message],
    ) -> LiveAsk:
        """The ask whose row is ``stored``, shown as ``messages`` (its controls on the last)."""
        return cls(
            id=stored.id,
            agent=stored.agent,
            kind=stored.kind,
            requested_by=requested_by,
            channel_id=messages[-1].channel.id,
            message_ids=[m.id for m in messages],
            payload=stored.payload,
            content=messages[-1].content,
        )


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


@dataclass(frozen=True, slots=True)
class Unanswered:
    """Nobody settled the ask in time: it is forgotten and its row deleted; ``card`` is
    where its card is now, to be marked as such."""

    card: discord.Message | discord.PartialMessage


class LiveAsks:
    """The asks this process waits on, the outcomes of recent ones, and their stored rows.

    Whoever settles an ask pops it first (``pop``): only the caller that got it back acts, so
    a double click or a racing answer acts once."""

    def __init__(self, bot: PlancordClient) -> None:
        self.bot = bot
        self._live: dict[str, LiveAsk] = {}
        self._decided: dict[str, str] = {}

    @property
    def store(self) -> PendingAskStore:
        return self.bot.app.pending_asks

    def waiting(self, agent: str) -> bool:
        """True while the agent waits for a human's answer or decision."""
        return any(ask.agent == agent for ask in self._live.values())

    def ids(self) -> list[str]:
        """The ids of the asks waiting now, oldest first."""
        return list(self._live)

    def of_kind(self, kind: AskKind) -> list[LiveAsk]:
        return [ask for ask in self._live.values() if ask.kind == kind]

    def get(self, ask_id: str) -> LiveAsk | None:
        return self._live.get(ask_id)

    def add(self, ask: LiveAsk) -> None:
        self._live[ask.id] = ask

    def pop(self, ask_id: str) -> LiveAsk | None:
        """Take the ask out of the waiting ones; None when someone already did."""
        return self._live.pop(ask_id, None)

    def outcome(self, ask_id: str) -> str | None:
        """How a recently settled ask ended, for a late click; None when nobody remembers."""
        return self._decided.get(ask_id)

    async def record(
        self, ask_id: str, kind: AskKind, agent: str, payload: dict[str, Any], seconds: float
    ) -> StoredAsk:
        """Keep the new ask's row (a restart expires it); the row as kept."""
        now = self.bot.app.clock.now()
        stored = StoredAsk(
            id=ask_id,
            agent=agent,
            kind=kind,
            payload=payload,
            created_at=now,
            deadline=now + timedelta(seconds=seconds),
        )
        await self.store.add(stored)
        return stored

    async def wait(self, ask_id: str, seconds: float) -> Any:
        """The resolution dispatched for ``ask_id``; ``TimeoutError`` when none came in time."""
        _, value = await self.bot.wait_for(
            RESOLVED_EVENT, check=lambda resolved, _value: resolved == ask_id, timeout=seconds
        )
        return value

    async def wait_on(
        self, ask: LiveAsk, shown: discord.Message, seconds: float, *, unanswered: str
    ) -> Any:
        """Wait on ``ask``, whose card is ``shown``: the resolution dispatched for it, or
        :class:`Unanswered` when none came within ``seconds`` (a late click then hears
        ``unanswered``). Its row is deleted either way; a cancellation forgets the ask and
        goes on."""
        self.add(ask)
        try:
            await self.store.set_message(ask.id, shown.channel.id, shown.id)
            value = await self.wait(ask.id, seconds)
        except TimeoutError:
            current = self.pop(ask.id)
            self.remember(ask.id, unanswered)
            await self.store.delete(ask.id)
            return Unanswered(current_message(self.bot, shown, current))
        except BaseException:
            self.pop(ask.id)
            raise
        await self.store.delete(ask.id)
        return value

    def resolve(self, ask_id: str, value: Any) -> None:
        """Wake the coroutine waiting on ``ask_id`` with ``value``."""
        self.bot.dispatch(RESOLVED_EVENT, ask_id, value)

    def settle(self, ask_id: str, outcome: str, value: Any) -> bool:
        """Settle the ask once: take it out of the waiting ones, keep ``outcome`` for a late
        click and wake its waiter with ``value``. False, doing nothing, when someone settled
        it first."""
        if self.pop(ask_id) is None:
            return False
        self.remember(ask_id, outcome)
        self.resolve(ask_id, value)
        return True

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

    def remember(self, ask_id: str, outcome: str) -> None:
        """Keep recent outcomes so a late click hears who decided; old ones are dropped."""
        self._decided[ask_id] = outcome
        while len(self._decided) > REMEMBERED_DECISIONS:
            del self._decided[next(iter(self._decided))]


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


def current_message(
    bot: PlancordClient, posted: discord.Message, ask: LiveAsk | None
) -> discord.Message | discord.PartialMessage:
    """Where the ask's card is now: ``posted``, unless the card was deleted and posted again
    (``reposting.py``), in which case the newest message the live ask knows."""
    if ask is None or not ask.message_ids or ask.message_ids[-1] == posted.id:
        return posted
    return bot.get_partial_messageable(ask.channel_id).get_partial_message(ask.message_ids[-1])


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
