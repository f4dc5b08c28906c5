"""``AskService``: the one place an ask is opened, waited on, answered, expired and
restored, whatever front end shows it.

Why this exists: a permission request or a question is a decision a human makes, and the
core owns those. A front end only renders an ask (``AskCards``) and reports an answer
(``answer``); the service judges it with the authority (place first, as every act), settles
the ask once, and wakes its waiter. Whoever settles an ask pops it first, so a double click
or a racing answer acts once.

An answer may come from another process (the operator's shell, ``plancord asks answer``):
it is kept in the ask's row, written only while the row has none, and the waiting process
reads it between slices of its wait (every ``poll_seconds``) or when told to
(``settled_elsewhere``, the hook a change feed calls), then redraws the card through
``AskCards.settled``. A restart leaves no waiter: ``restore`` marks each leftover ask of an
agent this process serves expired.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from plancord.core.ask_authority import AskAuthority
from plancord.core.asks.choices import Choice, decode, encode, for_model, read_choice, subject_of
from plancord.core.asks.records import (
    AskCards,
    AskKind,
    AskRows,
    AskSignals,
    CardRef,
    OpenAsk,
    StoredAsk,
)
from plancord.core.authority import Act, Decision, Refusal, Subject
from plancord.core.planning import Actor, AuditAction
from plancord.core.ports import Clock

log = logging.getLogger(__name__)

REMEMBERED_OUTCOMES = 256
POLL_SECONDS = 2.0
"""How often a waiter looks for an answer another process kept in the ask's row."""
UNANSWERED: Mapping[AskKind, str] = {
    "permission": "Timed out — denied. Nothing was run.",
    "question": "nobody answered in time",
}


def new_ask_id() -> str:
    return secrets.token_hex(8)


@dataclass(frozen=True, slots=True)
class Unanswered:
    """Nobody settled the ask in time: it is forgotten and its row deleted."""


@dataclass(frozen=True, slots=True)
class Answered:
    """The answer settled the ask: ``outcome`` in words; ``here`` when its waiter is in this
    process (else the waiting process reads it from the row)."""

    ask: OpenAsk
    choice: Choice
    outcome: str
    here: bool


@dataclass(frozen=True, slots=True)
class NotWaiting:
    """Nobody waits on the ask any more (settled, expired, unknown): ``outcome`` when it is
    known how it ended."""

    outcome: str | None


@dataclass(frozen=True, slots=True)
class WrongChoice:
    """The choice answers nothing this ask offers: ``text`` says what it takes."""

    text: str


AnswerResult = Answered | NotWaiting | WrongChoice | Refusal


class FutureSignals:
    """``AskSignals`` on plain futures: a waiter parks on its own."""

    def __init__(self) -> None:
        self._futures: dict[str, asyncio.Future[Any]] = {}

    async def wait(self, ask_id: str, seconds: float) -> Any:
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._futures[ask_id] = future
        try:
            return await asyncio.wait_for(future, seconds)
        finally:
            self._futures.pop(ask_id, None)

    def wake(self, ask_id: str, value: Any) -> None:
        future = self._futures.get(ask_id)
        if future is not None and not future.done():
            future.set_result(value)


class AskService:
    """The asks this process waits on, the outcomes of recent ones, and their rows."""

    def __init__(
        self,
        rows: AskRows,
        authority: AskAuthority,
        clock: Clock,
        *,
        poll_seconds: float = POLL_SECONDS,
    ) -> None:
        self.rows = rows
        self.authority = authority
        self.clock = clock
        self.poll_seconds = poll_seconds
        self.signals: AskSignals = FutureSignals()
        self.cards: AskCards | None = None
        self._live: dict[str, OpenAsk] = {}
        self._values: dict[str, Any] = {}
        self._decided: dict[str, str] = {}

    def attach(self, cards: AskCards, signals: AskSignals | None = None) -> None:
        """The front end that shows the asks (and, when it has one, its own wake-up)."""
        self.cards = cards
        if signals is not None:
            self.signals = signals

    # -- what waits -----------------------------------------------------------------------

    def waiting(self, agent: str) -> bool:
        """True while the agent waits for a human's answer or decision."""
        return any(ask.agent == agent for ask in self._live.values())

    def ids(self) -> list[str]:
        """The ids of the asks waiting in this process, oldest first."""
        return list(self._live)

    def get(self, ask_id: str) -> OpenAsk | None:
        return self._live.get(ask_id)

    def of_kind(self, kind: AskKind) -> list[OpenAsk]:
        return [ask for ask in self._live.values() if ask.kind == kind]

    def outcome(self, ask_id: str) -> str | None:
        """How a recently settled ask ended, for a late answer; None when nobody remembers."""
        return self._decided.get(ask_id)

    async def pending(self, agent: str | None = None) -> list[StoredAsk]:
        """Every ask some process waits on (``agent``'s only, when given), oldest first."""
        return [
            ask
            for ask in await self.rows.all()
            if ask.answer is None and (agent is None or ask.agent == agent)
        ]

    # -- the waiter's side ----------------------------------------------------------------

    async def open(
        self,
        kind: AskKind,
        agent: str,
        requested_by: str | None,
        payload: dict[str, Any],
        seconds: float,
    ) -> OpenAsk:
        """A new ask, kept (a restart expires it) and waiting in this process."""
        now = self.clock.now()
        ask = OpenAsk(new_ask_id(), agent, kind, requested_by, payload, seconds)
        row = StoredAsk(ask.id, agent, kind, payload, now, now + timedelta(seconds=seconds))
        await self.rows.add(row)
        self._live[ask.id] = ask
        return ask

    async def show(self, ask: OpenAsk) -> CardRef:
        """Show ``ask`` through the front end and keep where its card is; ``CardNotShown``
        (the ask forgotten) when it cannot be shown."""
        if self.cards is None:
            from plancord.core.errors import CardNotShown

            await self.forget(ask.id)
            raise CardNotShown(ask.kind, "no front end shows asks here")
        try:
            card = await self.cards.show(ask)
        except BaseException:
            await self.forget(ask.id)
            raise
        await self.moved(ask.id, card)
        return card

    async def moved(self, ask_id: str, card: CardRef) -> None:
        """The ask's card is now ``card`` (shown, or posted again after a delete)."""
        await self.rows.set_message(ask_id, card.channel_id, card.message_id)

    async def forget(self, ask_id: str) -> None:
        """The ask never reached anyone: nobody waits on it, its row is gone."""
        self._live.pop(ask_id, None)
        await self.rows.delete(ask_id)

    async def wait(self, ask_id: str, seconds: float) -> Any:
        """The value the ask was settled with, or :class:`Unanswered` when nobody settled it
        within ``seconds``. Its row is deleted either way; a cancellation forgets the ask
        (its row stays for the restart to expire) and goes on."""
        left = seconds
        try:
            while ask_id not in self._values:
                step = min(self.poll_seconds, left)
                try:
                    await self.signals.wait(ask_id, step)
                except TimeoutError:
                    left -= step
                    answered = ask_id in self._values or await self._read_answer(ask_id)
                    if not answered and left <= 0:
                        break
        except BaseException:
            self._live.pop(ask_id, None)
            self._values.pop(ask_id, None)
            raise
        if ask_id not in self._values:
            ask = self._live.pop(ask_id, None)
            self._remember(ask_id, UNANSWERED[ask.kind if ask else "question"])
            await self.rows.delete(ask_id)
            if ask is not None and self.cards is not None:
                await self.cards.unanswered(ask)
            return Unanswered()
        await self.rows.delete(ask_id)
        return self._values.pop(ask_id)

    # -- answers --------------------------------------------------------------------------

    def settle(self, ask_id: str, outcome: str, value: Any) -> bool:
        """Settle the ask once: take it out of the waiting ones, keep ``outcome`` for a late
        answer and wake its waiter with ``value``. False, doing nothing, when someone settled
        it first."""
        if self._live.pop(ask_id, None) is None:
            return False
        self._remember(ask_id, outcome)
        self._values[ask_id] = value
        self.signals.wake(ask_id, value)
        return True

    async def judge(
        self, actor: Actor, ask: OpenAsk, act: Act, detail: Mapping[str, Any] | None = None
    ) -> Decision | Refusal:
        """The authority's verdict on ``actor`` doing ``act`` to ``ask`` (a refusal audited)."""
        subject = Subject.QUESTION if ask.kind == "question" else subject_of(ask.payload)
        if detail is None:
            detail = {"ask_id": ask.id}
            if ask.kind == "permission":
                detail = {**detail, "action": ask.payload.get("action")}
        return await self.authority.judge(actor, subject, act, ask.agent, ask.requested_by, detail)

    async def answer(
        self,
        ask_id: str,
        actor: Actor,
        choice: str,
        *,
        outcome: str | None = None,
        redraw: bool = True,
    ) -> AnswerResult:
        """``actor`` answers ``ask_id`` with ``choice`` (allow, deny, continue, stop, or a
        question's answer): judged by the authority, then the ask settled once. An ask that
        waits in another process gets the answer in its row. ``outcome`` replaces the
        outcome's words (a front end naming the actor its way); ``redraw`` is False when the
        front end redraws the card itself (the answer came from the card)."""
        ask = self._live.get(ask_id)
        here = ask is not None
        if ask is None:
            stored = await self.rows.get(ask_id)
            if stored is None or stored.answer is not None:
                kept = stored.answer if stored is not None else None
                return NotWaiting(self.outcome(ask_id) or (kept or {}).get("outcome"))
            ask = OpenAsk(
                stored.id, stored.agent, stored.kind, _requester(stored.payload), stored.payload
            )
        read = read_choice(ask, choice)
        if isinstance(read, str):
            return WrongChoice(read)
        verdict = await self.judge(actor, ask, read.act)
        if isinstance(verdict, Refusal):
            return verdict
        words = outcome or read.outcome(ask, actor.name)
        value: Any = verdict
        if read.subject is Subject.QUESTION:
            value = for_model(read.verb, read.text, actor.name, self.clock.now())
        if here:
            if not self.settle(ask_id, words, value):
                return NotWaiting(self.outcome(ask_id))
            if redraw and self.cards is not None:
                await self.cards.settled(ask, words, value)
        elif not await self.rows.set_answer(ask_id, {"outcome": words, **encode(value)}):
            return NotWaiting(None)
        return Answered(ask, read, words, here)

    async def settled_elsewhere(self, ask_id: str) -> bool:
        """The hook for a change feed: another process may have answered ``ask_id``; when
        its row says so, the waiter is woken and the card redrawn. True when it was."""
        return await self._read_answer(ask_id)

    async def _read_answer(self, ask_id: str) -> bool:
        if ask_id not in self._live:
            return False
        stored = await self.rows.get(ask_id)
        kept = stored.answer if stored is not None else None
        if kept is None:
            return False
        ask = self._live[ask_id]
        outcome = str(kept.get("outcome", ""))
        value = decode(kept)
        if not self.settle(ask_id, outcome, value):
            return False
        if self.cards is not None:
            await self.cards.settled(ask, outcome, value)
        return True

    # -- after a restart ------------------------------------------------------------------

    async def restore(self, serves: Callable[[str], Awaitable[bool]]) -> None:
        """Mark every ask left over from an earlier process expired: its waiter is gone. A
        permission's expiry is audited. Asks of agents another process serves are that
        process's."""
        for ask in await self.rows.all():
            if ask.id in self._live or not await serves(ask.agent):
                continue
            if ask.kind == "permission":
                await self.authority.record(
                    AuditAction.PERMISSION_EXPIRED,
                    Actor.policy("restart"),
                    ask.agent,
                    {"ask_id": ask.id, "action": ask.payload.get("action")},
                    subject=subject_of(ask.payload),
                )
            if self.cards is not None:
                try:
                    await self.cards.expired(ask)
                except Exception:
                    log.warning("could not mark the expired ask %s", ask.id, exc_info=True)
            await self.rows.delete(ask.id)

    def _remember(self, ask_id: str, outcome: str) -> None:
        self._decided[ask_id] = outcome
        while len(self._decided) > REMEMBERED_OUTCOMES:
            del self._decided[next(iter(self._decided))]


def _requester(payload: dict[str, Any]) -> str | None:
    value = payload.get("requested_by")
    return value if isinstance(value, str) else None
