"""The conversation side of an agent's channel: its replies, its tool activity, its typing.

Agent text is model output, so it is sent with every mention disabled and split to fit
Discord's 2000-character limit without breaking code blocks. Tool activity is one status
message per turn, edited in the background as lines arrive, so a busy agent neither floods
the channel nor waits on Discord's edit rate limit. While a turn runs the channel shows the
bot typing, except while the agent waits for a human.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import discord
from discord.ext import tasks

from plancord.core.errors import PlancordError
from plancord.discord_bot.shared.client import PlancordClient
from plancord.discord_bot.shared.why import why_view

log = logging.getLogger(__name__)

MESSAGE_LIMIT = 2000
MIN_LIMIT = 64
FENCE = "```"
STATUS_LINES = 5
STATUS_LINE_CHARS = 200
TYPING_REFRESH_SECONDS = 8.0
NO_MENTIONS = discord.AllowedMentions.none()

_LANGUAGE = re.compile(r"[A-Za-z0-9_+#.-]{1,20}")

Destination = discord.abc.Messageable


# -- splitting -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Chunk:
    """One message of a split text: ``body`` is a slice of the original text; ``prefix``
    reopens a code block the previous chunk had to close, ``suffix`` closes one left open."""

    body: str
    prefix: str = ""
    suffix: str = ""

    @property
    def text(self) -> str:
        return self.prefix + self.body + self.suffix


@dataclass(slots=True)
class FenceState:
    """Whether a code block is open after the lines seen so far, and its opening line's tag."""

    open: bool = False
    language: str = ""

    def feed(self, line: str) -> None:
        """Advance over one line (with or without its newline)."""
        stripped = line.strip()
        if self.open:
            if stripped.startswith(FENCE) and not stripped.strip("`"):
                self.open = False
                self.language = ""
            return
        if line.lstrip(" ").startswith(FENCE) and len(line) - len(line.lstrip(" ")) <= 3:
            info = stripped.lstrip("`")
            if FENCE in info:
                return
            self.open = True
            self.language = info.strip()

    def reopen(self, limit: int) -> str:
        language = self.language if _LANGUAGE.fullmatch(self.language) else ""
        prefix = f"{FENCE}{language}\n"
        return prefix if len(prefix) <= limit // 4 else f"{FENCE}\n"


def fences_balanced(text: str) -> bool:
    """True when no code block is left open at the end of ``text``."""
    state = FenceState()
    for line in text.split("\n"):
        state.feed(line)
    return not state.open


def _closing(body: str) -> str:
    return FENCE if body.endswith("\n") or not body else "\n" + FENCE


def _lines(text: str) -> list[str]:
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def split_parts(text: str, limit: int = MESSAGE_LIMIT) -> list[Chunk]:
    """Split ``text`` into chunks whose rendered text fits ``limit``.

    Splits fall on line boundaries; a line longer than a whole message is cut hard. A code
    block open at a split is closed at the end of the chunk and reopened, with its language
    tag, at the start of the next, so every chunk renders on its own. The bodies joined
    give back ``text`` exactly.
    """
    if limit < MIN_LIMIT:
        raise ValueError(f"limit must be at least {MIN_LIMIT}, not {limit}")
    chunks: list[Chunk] = []
    state = FenceState()
    prefix = ""
    body = ""

    def flush() -> None:
        nonlocal prefix, body
        chunks.append(Chunk(body, prefix, _closing(body) if state.open else ""))
        prefix = state.reopen(limit) if state.open else ""
        body = ""

    for line in _lines(text):
        after = FenceState(state.open, state.language)
        after.feed(line)
        candidate = body + line
        if len(prefix) + len(candidate) + (len(_closing(candidate)) if after.open else 0) <= limit:
            body = candidate
            state = after
            continue
        if body:
            flush()
            if len(prefix) + len(line) + (len(_closing(line)) if after.open else 0) <= limit:
                body = line
                state = after
                continue
        rest = line
        while rest:
            room = limit - len(prefix) - len(FENCE) - 1
            piece, rest = rest[:room], rest[room:]
            body = piece
            state.feed(piece)
            if rest:
                flush()
    if body:
        chunks.append(Chunk(body, prefix, _closing(body) if state.open else ""))
    return chunks


def split_message(text: str, limit: int = MESSAGE_LIMIT) -> list[str]:
    """``text`` as messages of at most ``limit`` characters with balanced code blocks."""
    return [chunk.text for chunk in split_parts(text, limit)]


# -- the channel ---------------------------------------------------------------------------


#: How the agent loop joins the calls of one step into its activity line.
CALLS_JOINED = " · "


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


@dataclass(slots=True)
class _Status:
    """The tool-activity message of one turn and what it should show next."""

    destination: Destination
    agent: str = ""
    lines: list[str] = field(default_factory=list)
    steps: int = 0
    calls: int = 0
    done: bool = False
    message: discord.Message | None = None
    shown: str = ""
    writer: asyncio.Task[None] | None = None

    def render(self) -> str:
        # A step is one answer of the model, which may make several calls (its line).
        header = f"🔧 {'done' if self.done else 'working'} · {_count(self.calls, 'call')}"
        header += f" in {_count(self.steps, 'step')}" if self.steps != self.calls else ""
        hidden = len(self.lines) - STATUS_LINES
        shown = self.lines[-STATUS_LINES:]
        body = [f"› {line}" for line in shown]
        if hidden > 0:
            body.insert(0, f"… {hidden} earlier")
        text = "\n".join([header, *body])
        return text[:MESSAGE_LIMIT]


class ChannelIO:
    def __init__(self, bot: PlancordClient) -> None:
        self.bot = bot
        self.question_waiting: Callable[[str], bool] = lambda agent: False
        """Whether the agent waits for an answer (no typing then); set by the notifier."""
        self._origins: dict[str, Destination] = {}
        self._statuses: dict[str, _Status] = {}
        self._watchers: dict[str, asyncio.Task[None]] = {}

    # -- where an agent speaks -------------------------------------------------------------

    def note_origin(self, agent: str, channel: Destination) -> None:
        """Answer the agent's next turn where it was addressed (its channel or a thread)."""
        self._origins[agent] = channel

    def origin_of(self, agent: str) -> Destination | None:
        """Where the agent's current turn was asked, if it was asked somewhere particular."""
        return self._origins.get(agent)

    def forget(self, agent: str) -> None:
        self._origins.pop(agent, None)
        self._statuses.pop(agent, None)

    async def destination(self, agent: str) -> Destination | None:
        """Where the agent's output goes: the channel or thread it was last addressed in,
        else its bound channel; None for an agent bound to no channel."""
        origin = self._origins.get(agent)
        if origin is not None:
            return origin
        try:
            record = await self.bot.app.store.get_agent(agent)
        except PlancordError:
            return None
        if record.channel_id is None:
            return None
        channel = self.bot.get_channel(record.channel_id)
        if isinstance(channel, discord.abc.Messageable):
            return channel
        return self.bot.get_partial_messageable(record.channel_id, guild_id=record.guild_id)

    # -- replies ---------------------------------------------------------------------------

    async def say(self, agent: str, text: str) -> None:
        destination = await self.destination(agent)
        if destination is None:
            log.warning("agent %s has no channel; dropped a message", agent)
            return
        await send_chunks(destination, text)

    # -- tool activity ---------------------------------------------------------------------

    async def activity(self, agent: str, line: str) -> None:
        """Add a line to this turn's status message; the edit happens in the background."""
        status = self._statuses.get(agent)
        if status is None or status.done:
            destination = await self.destination(agent)
            if destination is None:
                return
            status = self._statuses[agent] = _Status(destination, agent)
        text = " ".join(line.split())
        if len(text) > STATUS_LINE_CHARS:
            text = text[: STATUS_LINE_CHARS - 1] + "…"
        status.lines.append(text)
        status.steps += 1
        status.calls += line.count(CALLS_JOINED) + 1
        self._write(status)
        self.watch_turn(agent)

    def _write(self, status: _Status) -> None:
        if status.writer is None or status.writer.done():
            status.writer = asyncio.create_task(self._flush(status))

    async def _flush(self, status: _Status) -> None:
        """Bring the status message up to date; later lines coalesce into one edit."""
        while (text := status.render()) != status.shown:
            try:
                if status.message is None:
                    status.message = await status.destination.send(
                        text, allowed_mentions=NO_MENTIONS, view=why_view(status.agent)
                    )
                else:
                    await status.message.edit(content=text, allowed_mentions=NO_MENTIONS)
            except discord.HTTPException as exc:
                log.warning("could not update the tool activity message: %s", exc)
                return
            status.shown = text

    async def _finish_status(self, agent: str) -> None:
        status = self._statuses.pop(agent, None)
        if status is None:
            return
        if status.writer is not None:
            await status.writer
        status.done = True
        await self._flush(status)

    # -- the turn --------------------------------------------------------------------------

    def watch_turn(self, agent: str) -> None:
        """Show typing while the agent's turn runs and close its status when it ends."""
        watcher = self._watchers.get(agent)
        if watcher is not None and not watcher.done():
            return
        if not self.bot.app.runtime.is_busy(agent):
            return
        self._watchers[agent] = asyncio.create_task(
            self._watch(agent), name=f"plancord-turn-{agent}"
        )

    async def _watch(self, agent: str) -> None:
        """Close each turn's status when the turn ends, typing meanwhile.

        The typing refresh is a ``discord.ext.tasks`` loop of its own, not a timeout on this
        wait: a turn that waits for a human has no timer running here at all, so nothing
        wakes every few seconds for an agent that is only waiting."""
        runtime = self.bot.app.runtime
        typing = tasks.loop(seconds=TYPING_REFRESH_SECONDS, name=f"plancord-typing-{agent}")(
            self._typing_unless_waiting
        )
        typing.start(agent)
        try:
            while True:
                task = runtime.session(agent).task
                if task is None or task.done():
                    await self._finish_status(agent)
                    task = runtime.session(agent).task
                    if task is None or task.done():
                        return
                    continue
                await asyncio.wait({task})
        finally:
            typing.cancel()

    async def _typing_unless_waiting(self, agent: str) -> None:
        if not self.question_waiting(agent):
            await self._typing(agent)

    async def _typing(self, agent: str) -> None:
        destination = await self.destination(agent)
        if destination is None:
            return
        try:
            await destination.typing()
        except discord.HTTPException as exc:
            log.warning("could not show typing for agent %s: %s", agent, exc)


async def send_chunks(
    destination: Destination,
    text: str,
    *,
    allowed_mentions: discord.AllowedMentions = NO_MENTIONS,
    view: discord.ui.View | None = None,
) -> list[discord.Message]:
    """Send ``text`` split into messages, ``view`` on the last; a chunk that fails is logged
    and skipped."""
    sent: list[discord.Message] = []
    chunks = [chunk for chunk in split_message(text) if chunk.strip()]
    for number, chunk in enumerate(chunks, start=1):
        extra: dict[str, Any] = {"view": view} if view is not None and number == len(chunks) else {}
        try:
            sent.append(await destination.send(chunk, allowed_mentions=allowed_mentions, **extra))
        except discord.HTTPException as exc:
            log.warning("could not send a message: %s", exc)
    return sent


async def tell_bound_channel(bot: PlancordClient, agent: str, text: str) -> None:
    """Say ``text`` in ``agent``'s bound channel (never a thread it was last addressed in),
    mentions off: what the host reports about the agent's plan or result. A channel
    Discord refuses is logged, not raised; an agent bound to none is told nothing."""
    record = await bot.app.store.get_agent(agent)
    if record.channel_id is None:
        return
    channel = bot.get_partial_messageable(record.channel_id, guild_id=record.guild_id)
    try:
        await channel.send(text, allowed_mentions=NO_MENTIONS)
    except discord.HTTPException:
        log.warning("could not tell %s's channel: %s", agent, text, exc_info=True)
