"""Posting a card a human must answer (a checkpoint, a permission request), so that Discord
refusing it is never taken for a human's silence.

A refused send is tried again: a failure that passes (a 5xx, a rate limit, the network) after
a wait that sleeps without holding the event loop, a payload Discord rejects (a 4xx) at once
in the card's plain-text form under the same buttons. When no attempt shows the card,
``CardNotShown`` names the card and Discord's last reason, so the audit and the model are
told what happened instead of "nobody answered in time". A card that nobody can see is
never waited on.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import aiohttp
import discord

from plancord.core.asks.choices import labels_of
from plancord.core.errors import CardNotShown
from plancord.discord_bot.asks.permission_card import code_block
from plancord.discord_bot.shared.channel_io import MESSAGE_LIMIT

log = logging.getLogger(__name__)

RETRY_DELAYS: Sequence[float] = (1.0, 3.0, 9.0)
"""Seconds to wait before each new try after a failure that may pass: at most four tries,
about thirteen seconds in all, well inside any ask's timeout."""

CHECKPOINT = "checkpoint"
PERMISSION = "permission"


def card_name(labels: Sequence[str]) -> str:
    """What the card is called to a human and the model: a checkpoint asks Continue / Stop."""
    return PERMISSION if tuple(labels) == ("Allow", "Deny") else CHECKPOINT


@dataclass(frozen=True, slots=True)
class Card:
    """One card to post: its content, embed and buttons, and its plain-text form."""

    name: str
    content: str | None
    embed: discord.Embed
    view: discord.ui.View
    allowed_mentions: discord.AllowedMentions
    plain: str

    def payload(self, *, plain: bool) -> dict[str, Any]:
        if plain:
            text = f"{self.content}\n{self.plain}" if self.content else self.plain
            return {
                "content": text[:MESSAGE_LIMIT],
                "view": self.view,
                "allowed_mentions": self.allowed_mentions,
            }
        return {
            "content": self.content,
            "embed": self.embed,
            "view": self.view,
            "allowed_mentions": self.allowed_mentions,
        }


def plain_permission_text(agent: str, payload: dict[str, Any]) -> str:
    """A permission request or checkpoint without its embed: what is asked, and how long."""
    allow, deny = labels_of(payload)
    outside = payload.get("outside_plan")
    lines = [
        f"🔐 **{agent}** asks to run `{payload.get('tool_name', 'a tool')}`:",
        code_block(str(payload.get("action", "")), 900),
    ]
    if outside:
        lines.append(f"⚠️ Not in the approved plan: {str(outside)[:400]}")
    lines.append(f"-# {allow} or {deny}; no answer in time counts as {deny}.")
    return "\n".join(lines)


async def post_card(destination: discord.abc.Messageable | None, card: Card) -> discord.Message:
    """The posted card; ``CardNotShown`` when no try showed it."""
    if destination is None:
        raise CardNotShown(card.name, "the agent is bound to no channel the bot can reach")
    delays = list(RETRY_DELAYS)
    plain = False
    while True:
        try:
            return await destination.send(**card.payload(plain=plain))
        except (discord.Forbidden, discord.NotFound) as exc:
            raise CardNotShown(card.name, _reason(exc)) from exc
        except discord.HTTPException as exc:
            reason = _reason(exc)
            rejected = 400 <= exc.status < 500 and exc.status != 429
            if rejected and not plain:
                log.warning("Discord refused a %s card; posting it as text: %s", card.name, reason)
                plain = True
                continue
            if rejected or not delays:
                raise CardNotShown(card.name, reason) from exc
        except (aiohttp.ClientError, OSError, TimeoutError) as exc:
            reason = f"{type(exc).__name__}: {exc}"
            if not delays:
                raise CardNotShown(card.name, reason) from exc
        delay = delays.pop(0)
        log.warning("could not post a %s card (%s); trying again in %gs", card.name, reason, delay)
        await asyncio.sleep(delay)


def _reason(exc: discord.HTTPException) -> str:
    text = exc.text or (exc.response.reason if exc.response is not None else "") or ""
    return f"Discord answered {exc.status}{f' ({text})' if text else ''}"
