"""The sub-agent slots of the process, shared fairly between agents.

Why this exists: ``explore.concurrency`` bounds the sub-agents running at once in the whole
process. Handed out first come, first served, one agent's eight questions hold every slot
while another agent's one question waits for minutes. So each agent that wants slots (one
holding or waiting) may hold at most its share, ``concurrency`` divided by the number of
such agents (at least one), and a freed slot goes to the waiting agent holding the fewest,
the longest waiting first among equals. An agent alone gets every slot; when a second one
asks, the first takes no more until it is down to its share, and the next free slot is the
newcomer's.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections import Counter
from collections.abc import AsyncIterator


class FairSlots:
    def __init__(self, total: int) -> None:
        self.total = total
        self._holding: Counter[str] = Counter()
        self._waiting: dict[str, list[int]] = {}
        """Each agent's waiters, by ticket (lower came first)."""
        self._tickets = itertools.count()
        self._changed = asyncio.Condition()

    @property
    def running(self) -> int:
        return sum(self._holding.values())

    def would_wait(self, agent: str) -> bool:
        """Whether a slot asked for now by ``agent`` would not be given at once."""
        return not self._may_take(agent, None)

    def _share(self, agent: str) -> int:
        wanting = {a for a, n in self._holding.items() if n} | set(self._waiting) | {agent}
        return max(1, self.total // len(wanting))

    def _may_take(self, agent: str, ticket: int | None) -> bool:
        if self.running >= self.total or self._holding[agent] >= self._share(agent):
            return False
        mine = (self._holding[agent], ticket if ticket is not None else -1)
        for other, tickets in self._waiting.items():
            if other == agent or not tickets or self._holding[other] >= self._share(other):
                continue
            if (self._holding[other], tickets[0]) < mine:
                return False
        return True

    @contextlib.asynccontextmanager
    async def slot(self, agent: str) -> AsyncIterator[None]:
        """Hold one of ``agent``'s slots for the block."""
        ticket = next(self._tickets)
        async with self._changed:
            self._waiting.setdefault(agent, []).append(ticket)
            try:
                await self._changed.wait_for(lambda: self._may_take(agent, ticket))
            finally:
                waiting = self._waiting[agent]
                waiting.remove(ticket)
                if not waiting:
                    del self._waiting[agent]
            self._holding[agent] += 1
            self._changed.notify_all()
        try:
            yield
        finally:
            async with self._changed:
                self._holding[agent] -= 1
                self._changed.notify_all()
