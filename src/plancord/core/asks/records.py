"""An ask as it is kept, and the ports around it: the store that keeps it (``AskRows``),
the front end that shows it (``AskCards``) and the wake-up a waiter parks on
(``AskSignals``).

The card's location is the front end's: ``CardRef`` is two opaque ids it hands back when
it shows the ask (on Discord a channel and a message), kept so that a restart can find the
card again and mark it expired.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, Protocol

AskKind = Literal["permission", "question"]
"""A permission request (a held call, a drift, a network host, a checkpoint) or a question."""


@dataclass(frozen=True, slots=True)
class CardRef:
    """Where a front end shows an ask: opaque ids it defines (on Discord, a channel's and
    its message's)."""

    channel_id: int
    message_id: int


@dataclass(frozen=True, slots=True)
class StoredAsk:
    """A row of ``pending_asks``: an ask some process waits on. ``answer`` is how another
    process settled it (``AskService.answer``), for the waiter to read."""

    id: str
    agent: str
    kind: AskKind
    payload: dict[str, Any]
    created_at: datetime
    deadline: datetime
    channel_id: int | None = None
    message_id: int | None = None
    answer: dict[str, Any] | None = None

    @property
    def card(self) -> CardRef | None:
        if self.channel_id is None or self.message_id is None:
            return None
        return CardRef(self.channel_id, self.message_id)


@dataclass(slots=True)
class OpenAsk:
    """An ask a coroutine of this process is waiting on."""

    id: str
    agent: str
    kind: AskKind
    requested_by: str | None
    payload: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0
    """How long the ask waits for an answer."""


class AskRows(Protocol):
    """The ``pending_asks`` table as the asks use it."""

    async def add(self, ask: StoredAsk) -> None: ...

    async def set_message(self, ask_id: str, channel_id: int, message_id: int) -> None: ...

    async def delete(self, ask_id: str) -> None: ...

    async def get(self, ask_id: str) -> StoredAsk | None: ...

    async def all(self) -> list[StoredAsk]: ...

    async def set_answer(self, ask_id: str, answer: dict[str, Any]) -> bool:
        """Keep ``answer`` unless the ask has one or is gone; True when this one was kept."""
        ...


class AskSignals(Protocol):
    """How a waiter parks until its ask is settled in this process (a front end may supply
    its own, e.g. its event dispatch)."""

    async def wait(self, ask_id: str, seconds: float) -> Any:
        """The value ``wake`` gave for ``ask_id``; ``TimeoutError`` after ``seconds``."""
        ...

    def wake(self, ask_id: str, value: Any) -> None: ...


class AskCards(Protocol):
    """What a front end does with an ask: it renders, the core decides.

    ``show`` posts the ask's card and says where it is (raising ``CardNotShown`` when nobody
    can see it); ``settled`` redraws a card an answer from elsewhere settled (the operator's
    shell, another process); ``unanswered`` marks a card nobody answered in time; ``expired``
    marks the card of an ask a restart left without a waiter."""

    async def show(self, ask: OpenAsk) -> CardRef: ...

    async def settled(self, ask: OpenAsk, outcome: str, value: Any) -> None: ...

    async def unanswered(self, ask: OpenAsk) -> None: ...

    async def expired(self, ask: StoredAsk) -> None: ...
