"""Lines that live in a message of their own and are edited as they change: each sub-agent's
progress.

Why this exists: a sub-agent works for seconds or minutes, and the channel should show what
it does without a message per step. So its line is posted once and then edited. A busy
sub-agent changes its line many times a second while Discord limits edits, so the edits of
one message are spaced at least ``min_interval`` apart and a newer text replaces one still
waiting: only the latest is ever sent, and the final one is always the last shown. The
caller never waits on Discord (``show`` records the text and wakes the message's writer),
and an edit Discord refuses is logged, never raised: the next text tries again, and a final
text is tried a few times.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import discord

log = logging.getLogger(__name__)

EDIT_INTERVAL_SECONDS = 2.0
LINE_CHARS = 300
FINAL_ATTEMPTS = 3
NO_MENTIONS = discord.AllowedMentions.none()

Destination = discord.abc.Messageable


@dataclass(slots=True)
class _Line:
    destination: Destination
    text: str
    final: bool = False
    message: discord.Message | None = None
    shown: str = ""
    last_write: float | None = None
    failures: int = 0
    writer: asyncio.Task[None] | None = None


def one_line(text: str) -> str:
    """``text`` on one line of at most ``LINE_CHARS`` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= LINE_CHARS else flat[: LINE_CHARS - 1] + "…"


class LiveLines:
    def __init__(
        self,
        destination_of: Callable[[str], Awaitable[Destination | None]],
        *,
        min_interval: float = EDIT_INTERVAL_SECONDS,
    ) -> None:
        self._destination_of = destination_of
        self.min_interval = min_interval
        """The least time between two writes of one message, in seconds."""
        self._lines: dict[tuple[str, str], _Line] = {}

    async def show(self, agent: str, key: str, text: str, *, final: bool = False) -> None:
        """Make ``key``'s message of ``agent`` show ``text``, soon; after a final text the
        line takes no more."""
        text = one_line(text)
        line = self._lines.get((agent, key))
        if line is None:
            destination = await self._destination_of(agent)
            if destination is None:
                return
            line = self._lines[(agent, key)] = _Line(destination, text, final)
        elif line.final:
            return
        else:
            line.text, line.final = text, final
        if line.writer is None or line.writer.done():
            line.writer = asyncio.create_task(
                self._write((agent, key), line), name=f"plancord-line-{agent}-{key}"
            )

    async def settle(self, seconds: float) -> None:
        """Wait, at most ``seconds``, for every line to show its latest text (at
        shutdown, so a sub-agent's last words reach the channel before the bot leaves)."""
        writers = [
            line.writer
            for line in self._lines.values()
            if line.writer is not None and not line.writer.done()
        ]
        if writers:
            await asyncio.wait(writers, timeout=seconds)

    async def _write(self, key: tuple[str, str], line: _Line) -> None:
        loop = asyncio.get_running_loop()
        try:
            while line.text != line.shown:
                if line.last_write is not None:
                    wait = line.last_write + self.min_interval - loop.time()
                    if wait > 0:
                        await asyncio.sleep(wait)
                text = line.text
                line.last_write = loop.time()
                try:
                    if line.message is None:
                        line.message = await line.destination.send(
                            text, allowed_mentions=NO_MENTIONS
                        )
                    else:
                        await line.message.edit(content=text, allowed_mentions=NO_MENTIONS)
                except discord.HTTPException as exc:
                    line.failures += 1
                    log.warning("could not update a progress line (%s): %s", key[1], exc)
                    if not line.final or line.failures >= FINAL_ATTEMPTS:
                        return
                    continue
                line.shown = text
                line.failures = 0
        finally:
            if line.final and (line.shown == line.text or line.failures >= FINAL_ATTEMPTS):
                with contextlib.suppress(KeyError):
                    if self._lines[key] is line:
                        del self._lines[key]
