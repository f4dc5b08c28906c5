"""Whether a message fits Discord before it is sent: its text, its embeds together, its rows
of controls and its files, counted as Discord counts them.

Why this exists: Discord refuses a whole message (400, 50035 Invalid Form Body) for one
limit passed, and a card that is refused is a decision nobody sees. A card measures itself
with :func:`misfits` and, when anything is past a limit, posts its smaller form instead
(what did not fit goes into an attached file, and the card says so). The limits, as
Discord's API documentation gives them: content 2000 (Create Message), ≤ 10 embeds and 6000
characters over all of them (Embed Limits), ≤ 5 action rows and ≤ 40 components counting
the rows, each row 1–5 buttons or one select (Component Reference), ≤ 10 files (error
30015) of at most 10 MiB each (Uploading Files) and 25 MiB in all (Create Message).

A refusal Discord gives for the payload itself is :func:`refused_for_payload` (400, or 413
for a body too large): sending the same payload again can only be refused again, so the
caller rebuilds it smaller or says so; anything else (5xx, 429, the network) is transient.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Sequence
from typing import Any

import discord

from plancord.discord_bot.shared.embed_basics import (
    CONTENT_LIMIT,
    EMBED_TOTAL_LIMIT,
    EMBEDS_PER_MESSAGE,
    embeds_size,
    size,
)

ACTION_ROWS = 5
COMPONENTS_PER_MESSAGE = 40
"""Counting the action rows themselves, as Discord does."""
BUTTONS_PER_ROW = 5
FILES_PER_MESSAGE = 10
FILE_BYTES = 10 * 1024 * 1024
"""What any server takes in one file (boosts and Nitro allow more; plancord assumes none)."""
REQUEST_BYTES = 25 * 1024 * 1024
PAYLOAD_REFUSALS = frozenset({400, 413})
"""Discord's answers to a payload it will not take as it is (Invalid Form Body, Request
entity too large)."""


def refused_for_payload(exc: discord.HTTPException) -> bool:
    """Discord refused what was sent (a 400 or 413), not the moment: the same payload would
    be refused again."""
    return exc.status in PAYLOAD_REFUSALS


def rows_of(view: discord.ui.View | None) -> list[list[dict[str, Any]]]:
    """The action rows ``view`` sends, each as the components it holds."""
    if view is None:
        return []
    return [list(row.get("components", [])) for row in view.to_components()]


def layout_problems(view: discord.ui.View | None) -> list[str]:
    """What breaks Discord's rules for rows of controls (C1–C3) in ``view``."""
    rows = rows_of(view)
    problems = []
    if len(rows) > ACTION_ROWS:
        problems.append(f"{len(rows)} rows of controls (Discord allows {ACTION_ROWS})")
    count = len(rows) + sum(len(row) for row in rows)
    if count > COMPONENTS_PER_MESSAGE:
        problems.append(f"{count} components (Discord allows {COMPONENTS_PER_MESSAGE})")
    for number, row in enumerate(rows, start=1):
        selects = [item for item in row if item.get("type") != discord.ComponentType.button.value]
        if not row or len(row) > BUTTONS_PER_ROW or (selects and len(row) != 1):
            problems.append(f"row {number} holds {len(row)} controls ({len(selects)} menus)")
    return problems


def file_size(file: discord.File) -> int:
    """The bytes ``file`` uploads, read without moving it."""
    stream = file.fp
    if isinstance(stream, io.BytesIO):
        return len(stream.getbuffer())
    here = stream.tell()
    end = stream.seek(0, io.SEEK_END)
    stream.seek(here)
    return end - here


def misfits(
    *,
    content: str = "",
    embeds: Sequence[discord.Embed] = (),
    view: discord.ui.View | None = None,
    files: Iterable[discord.File] = (),
) -> list[str]:
    """Every Discord limit the message would pass, in words for a log line; empty when it
    fits."""
    problems = []
    if size(content) > CONTENT_LIMIT:
        problems.append(f"the text is {size(content)} characters (at most {CONTENT_LIMIT})")
    if len(embeds) > EMBEDS_PER_MESSAGE:
        problems.append(f"{len(embeds)} embeds (at most {EMBEDS_PER_MESSAGE})")
    total = embeds_size(embeds)
    if total > EMBED_TOTAL_LIMIT:
        problems.append(f"the embeds hold {total} characters (at most {EMBED_TOTAL_LIMIT})")
    return problems + layout_problems(view) + file_problems(files)


def file_problems(files: Iterable[discord.File]) -> list[str]:
    """What breaks Discord's rules for a message's files (F1–F3)."""
    problems = []
    sizes = [file_size(file) for file in files]
    if len(sizes) > FILES_PER_MESSAGE:
        problems.append(f"{len(sizes)} files (at most {FILES_PER_MESSAGE})")
    if any(one > FILE_BYTES for one in sizes):
        problems.append(f"a file of {max(sizes)} bytes (at most {FILE_BYTES})")
    if sum(sizes) > REQUEST_BYTES:
        problems.append(f"{sum(sizes)} bytes of files (at most {REQUEST_BYTES})")
    return problems
