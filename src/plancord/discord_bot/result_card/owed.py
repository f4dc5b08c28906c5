"""Completion cards owed to a channel: posted when Discord answers again, without a restart.

Why this exists: a result waits for a human, so its card must arrive. A card Discord
refused for the moment (a 5xx, a 429, the network) is owed: ``OwedCards`` tries it again
after a wait that doubles each time (``FIRST_DELAY`` up to ``MAX_DELAY``). One refused for
what it holds (400, 413) was already rebuilt smaller by the poster, down to a plain line;
if even that is refused it is not tried again until the next start. Every
``SWEEP_SECONDS`` it looks for waiting results that have no card at all (one opened by
``plancord plan cancel`` in another process). What is owed is read from the store each time
(a waiting result with no card message), so nothing piles up: one entry per waiting result
at most, dropped once the card is posted or the result is decided, and a restart finds the
same debts (``ResultCards.restore``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import aiohttp
import discord

from plancord.core.errors import PlancordError, StorageError
from plancord.core.waking import Sleep, Waking
from plancord.discord_bot.shared.message_fit import refused_for_payload
from plancord.storage.executions import ExecutionStore

log = logging.getLogger(__name__)

FIRST_DELAY = 2.0
"""Seconds before the first new try of a refused card."""
MAX_DELAY = 300.0
"""The longest wait between two tries."""
SWEEP_SECONDS = 60.0
"""How often the store is read for waiting results that have no card."""

POST_FAILURES = (discord.HTTPException, aiohttp.ClientError, OSError, TimeoutError)
"""What a refused or lost post raises: Discord's answer or the network's."""


@dataclass(slots=True)
class _Debt:
    tries: int
    due: float


class OwedCards:
    """The completion cards still to post, tried again with backoff by one task."""

    def __init__(
        self,
        store: Callable[[], ExecutionStore],
        serves: Callable[[str], Awaitable[bool]],
        post: Callable[[str], Awaitable[object]],
    ) -> None:
        self._store = store
        self._serves = serves
        self._post = post
        self._debts: dict[str, _Debt] = {}
        self._given_up: set[str] = set()
        self._paying = asyncio.Lock()
        self._waking = Waking("plancord-owed-cards")

    def refused(self, plan_id: str, error: BaseException | None = None) -> None:
        """The card of ``plan_id`` could not be posted: try it again after a wait, unless
        Discord refused it for what it holds (``error`` a 400 or 413 after every smaller
        form was tried): the same payload would be refused again, so it is not retried
        until the next start."""
        if isinstance(error, discord.HTTPException) and refused_for_payload(error):
            log.error("Discord refuses every form of the card of %s: %s", plan_id, error)
            self._debts.pop(plan_id, None)
            self._given_up.add(plan_id)
            return
        debt = self._debts.get(plan_id)
        tries = debt.tries if debt is not None else 0
        self._debts[plan_id] = _Debt(tries + 1, _now() + _delay(tries))
        self.wake()

    def wake(self) -> None:
        """Look again now (a debt was added, or a result opened elsewhere)."""
        self._waking.wake()

    def owed(self) -> tuple[str, ...]:
        """The plan ids whose cards are owed now (tests, ``/plan status``)."""
        return tuple(self._debts)

    async def pay(self) -> None:
        """Post every owed card that is due, and note the results with no card at all."""
        async with self._paying:
            await self._pay()

    async def _pay(self) -> None:
        waiting = await self._store().waiting_results()
        without = {
            r.plan_id: r
            for r in waiting
            if r.card_message is None
            and r.plan_id not in self._given_up
            and await self._serves(r.agent)
        }
        for plan_id in list(self._debts):
            if plan_id not in without:
                del self._debts[plan_id]  # posted elsewhere, or decided
        for plan_id in without:
            debt = self._debts.get(plan_id)
            if debt is not None and debt.due > _now():
                continue
            try:
                await self._post(plan_id)
            except (*POST_FAILURES, StorageError) as exc:
                log.warning("the completion card of %s is still not posted: %s", plan_id, exc)
                self.refused(plan_id, exc)
                continue
            self._debts.pop(plan_id, None)

    async def run(self) -> None:
        """Loop until cancelled: pay what is due, then sleep until the next debt falls due
        (or the next sweep)."""
        while True:
            self._waking.woken = False
            try:
                await self.pay()
            except PlancordError as exc:
                log.warning("could not read the owed completion cards: %s", exc)
            if self._waking.woken:
                continue
            due = min((d.due for d in self._debts.values()), default=_now() + SWEEP_SECONDS)
            await self._waking.nap(min(max(due - _now(), 0.0), SWEEP_SECONDS))

    def start(self, sleep: Sleep = asyncio.sleep) -> None:
        """Run in the background; ``sleep`` waits between passes (a test's virtual time)."""
        self._waking.start(self.run, sleep)

    async def stop(self) -> None:
        await self._waking.stop()


def _delay(tries: int) -> float:
    return float(min(FIRST_DELAY * (2 ** min(tries, 16)), MAX_DELAY))


def _now() -> float:
    return asyncio.get_running_loop().time()
