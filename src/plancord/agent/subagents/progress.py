"""One sub-agent's line in the channel: what it was asked and how far it got.

Why this exists: several sub-agents may run at once for one agent, each for a while, and a
human watching the channel should see each one working, then how it ended, in one line
that changes rather than a message per step. The front end owns the message and how often
it is redrawn (``Notifier.progress_line``); this keeps the figures and words it shows, and
never lets a front end's failure reach the sub-agent.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from datetime import datetime

from plancord.core.ports import Clock, Notifier

QUESTION_CHARS = 80


def _tokens(count: int) -> str:
    return f"{count / 1000:.0f}k" if count >= 1000 else str(count)


def _cut(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


@dataclass(slots=True)
class Progress:
    notifier: Notifier
    clock: Clock
    agent: str
    number: int
    question: str
    calls: int = 0
    """Tool calls the sub-agent made."""
    tokens: int = 0
    started: datetime | None = field(default=None)
    ended: bool = False

    @property
    def key(self) -> str:
        return f"explore-{self.number}"

    def head(self) -> str:
        return f"explore #{self.number}: {_cut(self.question, QUESTION_CHARS)}"

    def figures(self) -> str:
        calls = f"{self.calls} call" + ("" if self.calls == 1 else "s")
        seconds = 0.0
        if self.started is not None:
            seconds = (self.clock.now() - self.started).total_seconds()
        return f"{calls} · {_tokens(self.tokens)} tokens · {seconds:.0f} s"

    async def waiting(self, running: int) -> None:
        await self._show(f"⏳ {self.head()} — waiting for a free slot ({running} running)")

    async def running(self) -> None:
        if self.started is None:
            self.started = self.clock.now()
        await self._show(f"🔎 {self.head()} — {self.figures()}")

    async def answered(self) -> None:
        await self._show(f"✅ {self.head()} — done · {self.figures()}", final=True)

    async def stopped(self, reason: str) -> None:
        await self._show(f"⛔ {self.head()} — stopped: {reason} · {self.figures()}", final=True)

    async def _show(self, line: str, *, final: bool = False) -> None:
        if self.ended:
            return
        self.ended = final
        with contextlib.suppress(Exception):
            await self.notifier.progress_line(self.agent, self.key, line, final=final)
