"""Discord's limits and the small pieces every embed uses: sizes measured as Discord measures
them, clipping, risk and step marks, colours, timestamps and message links."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

import discord

from plancord.core.plan import Risk
from plancord.core.planning import (
    ApprovalMode,
    StepStatus,
)

TITLE_LIMIT = 256
DESCRIPTION_LIMIT = 4096
FIELDS_PER_EMBED = 25
FIELD_NAME_LIMIT = 256
FIELD_VALUE_LIMIT = 1024
FOOTER_LIMIT = 2048
EMBED_TOTAL_LIMIT = 6000
EMBEDS_PER_MESSAGE = 10
CONTENT_LIMIT = 2000

RISK_MARK = {Risk.LOW: "🟢", Risk.MEDIUM: "🟡", Risk.HIGH: "🔴"}
STEP_MARK = {
    StepStatus.DONE: "✅",
    StepStatus.IN_PROGRESS: "⏳",
    StepStatus.PENDING: "⬜",
    StepStatus.SKIPPED: "⏭",
}
MODE_WORDS = {
    ApprovalMode.NORMAL: "normal",
    ApprovalMode.FRESH_CONTEXT: "fresh context",
    ApprovalMode.CONFIRM_EACH_EDIT: "confirm each edit",
}

PENDING_COLOUR = discord.Colour.blurple()
APPROVED_COLOUR = discord.Colour.green()
CHANGES_COLOUR = discord.Colour.orange()
REJECTED_COLOUR = discord.Colour.red()
CLOSED_COLOUR = discord.Colour.dark_grey()

CHANGES_LIMIT = 1200
"""Characters of a revision's plan message given to what changed since the last revision."""
FOOTER_BUDGET = 400
"""Characters of a card's footer (revision, hash, who asked), well inside ``FOOTER_LIMIT``."""


def size(text: str) -> int:
    """Length in UTF-16 code units (an astral emoji counts 2)."""
    return len(text.encode("utf-16-le")) // 2


def clip(text: str, limit: int) -> str:
    """``text`` if it fits in ``limit`` units, else a prefix ending in "…" that does."""
    if size(text) <= limit:
        return text
    if limit <= 0:
        return ""
    out: list[str] = []
    used = 0
    for char in text:
        width = 2 if ord(char) > 0xFFFF else 1
        if used + width > limit - 1:
            break
        out.append(char)
        used += width
    return "".join(out).rstrip() + "…"


def embed_size(embed: discord.Embed) -> int:
    """What Discord counts of one embed against the 6000 total: title, description, every
    field's name and value, footer and author, each trimmed (as Discord trims them) and
    counted in UTF-16 units (never fewer than Discord's count)."""
    texts = [embed.title, embed.description, embed.footer.text, embed.author.name]
    for item in embed.fields:
        texts += [item.name, item.value]
    return sum(size((text or "").strip()) for text in texts)


def embeds_size(embeds: Iterable[discord.Embed]) -> int:
    """What Discord counts of a message's embeds together: the total ``EMBED_TOTAL_LIMIT``
    bounds (Discord adds every embed of one message)."""
    return sum(embed_size(embed) for embed in embeds)


def fit_fields(
    fields: list[tuple[str, str]], budget: int, floor: int
) -> tuple[list[tuple[str, str]], bool]:
    """Fields (name, value) within ``budget`` characters in all: every one whole if
    possible, the values shortened evenly (to no fewer than ``floor``) when needed, the first
    ones that fit otherwise. Returns the fields to show and whether anything was shortened
    or left out."""
    names = sum(size(n) for n, _ in fields)
    full = [size(v) for _, v in fields]
    if names + sum(min(s, FIELD_VALUE_LIMIT) for s in full) <= budget:
        shown = [(n, clip(v, FIELD_VALUE_LIMIT)) for n, v in fields]
        return shown, any(s > FIELD_VALUE_LIMIT for s in full)
    if names + sum(min(s, floor) for s in full) <= budget:
        low, high = floor, FIELD_VALUE_LIMIT
        while low < high:
            cap = (low + high + 1) // 2
            if names + sum(min(s, cap) for s in full) <= budget:
                low = cap
            else:
                high = cap - 1
        return [(n, clip(v, low)) for n, v in fields], True
    first: list[tuple[str, str]] = []
    used = 0
    for name, value in fields:
        item = clip(value, floor)
        cost = size(name) + size(item)
        if used + cost > budget:
            break
        first.append((name, item))
        used += cost
    return first, True


def when(at: datetime) -> str:
    """A moment as Discord shows it to each reader: relative, in their own time zone."""
    return discord.utils.format_dt(at, "R")


def utc(at: datetime) -> str:
    return at.strftime("%Y-%m-%d %H:%M UTC")


def jump_url(guild_id: int | None, channel_id: int, message_id: int) -> str:
    return f"https://discord.com/channels/{guild_id or '@me'}/{channel_id}/{message_id}"


# -- the plan message --------------------------------------------------------------------
