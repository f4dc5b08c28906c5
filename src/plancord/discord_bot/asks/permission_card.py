"""The permission request as Discord shows it: the card (what the agent wants to run, who
asked, who decides), and its Allow and Deny buttons, which survive restarts as dynamic items."""

from __future__ import annotations

import re
from typing import Any

import discord

from plancord.core.asks.choices import labels_of
from plancord.core.authority import describe_ask_deciders
from plancord.discord_bot.asks.live import ASK_ID, NO_MENTIONS, LiveAsk
from plancord.discord_bot.shared.client import client_of
from plancord.discord_bot.shared.dynamic_items import CustomId

ACTION_CHARS = 1500
DECISION_ID = CustomId("ask:{choice}:{ask_id}", choice="allow|deny", ask_id=ASK_ID)


def user_id_of(requested_by: str | None) -> int | None:
    return int(requested_by) if requested_by and requested_by.isdigit() else None


def duration_text(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:g} seconds"
    return f"{round(seconds / 60):g} minutes"


def code_block(text: str, limit: int = ACTION_CHARS) -> str:
    """``text`` in a code block it cannot break out of, cut to ``limit`` characters."""
    safe = text.replace("```", "`\u200b``")
    if len(safe) > limit:
        safe = safe[: limit - 1] + "…"
    return f"```\n{safe}\n```"


def permission_embed(
    agent: str,
    payload: dict[str, Any],
    *,
    outcome: str | None = None,
    colour: discord.Colour | None = None,
) -> discord.Embed:
    """The permission request as an embed; ``outcome`` marks it decided."""
    tool = payload.get("tool_name", "a tool")
    embed = discord.Embed(
        title="🔐 Permission needed" if outcome is None else "🔐 Permission request",
        description=f"**{agent}** wants to run `{tool}`:\n{code_block(payload['action'])}",
        colour=colour or discord.Colour.orange(),
    )
    outside = payload.get("outside_plan")
    if outside:
        embed.add_field(
            name="⚠️ Not in the approved plan", value=clip_field(str(outside)), inline=False
        )
    requester = user_id_of(payload.get("requested_by"))
    embed.add_field(
        name="Requested by", value=f"<@{requester}>" if requester else "unknown", inline=True
    )
    applies = payload.get("applies")
    if outcome is None and applies:
        embed.add_field(name="Rule that applies", value=clip_field(str(applies)), inline=False)
    if outcome is None:
        timeout = duration_text(float(payload.get("timeout_seconds", 0)))
        deciders = str(payload.get("deciders") or describe_ask_deciders(None))
        embed.add_field(
            name="Who decides", value=f"{deciders[0].upper()}{deciders[1:]}.", inline=True
        )
        embed.set_footer(text=f"No answer within {timeout} counts as Deny.")
    else:
        embed.add_field(name="Decision", value=outcome, inline=False)
    return embed


def clip_field(text: str, limit: int = 1024) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def permission_view(
    ask_id: str, *, disabled: bool = False, labels: tuple[str, str] = ("Allow", "Deny")
) -> discord.ui.View:
    view = discord.ui.View(timeout=None)
    view.add_item(PermissionButton("allow", ask_id, disabled=disabled, label=labels[0]))
    view.add_item(PermissionButton("deny", ask_id, disabled=disabled, label=labels[1]))
    return view


class PermissionButton(
    discord.ui.DynamicItem[discord.ui.Button[discord.ui.View]],
    template=DECISION_ID.template,
):
    """Allow or Deny on a permission request; the custom_id carries only the ask id."""

    def __init__(
        self, choice: str, ask_id: str, *, disabled: bool = False, label: str | None = None
    ) -> None:
        allow = choice == "allow"
        super().__init__(
            discord.ui.Button(
                label=label or ("Allow" if allow else "Deny"),
                style=discord.ButtonStyle.success if allow else discord.ButtonStyle.danger,
                custom_id=DECISION_ID(choice=choice, ask_id=ask_id),
                disabled=disabled,
            )
        )
        self.choice = choice
        self.ask_id = ask_id

    @classmethod
    async def from_custom_id(
        cls,
        interaction: discord.Interaction[discord.Client],
        item: discord.ui.Item[Any],
        match: re.Match[str],
        /,
    ) -> PermissionButton:
        return cls(match["choice"], match["ask_id"])

    async def callback(self, interaction: discord.Interaction[discord.Client]) -> None:
        await client_of(interaction).ask_controls.decide(
            interaction, self.ask_id, self.choice == "allow"
        )


ASK_BUTTONS = (PermissionButton,)


def settled_fields(ask: LiveAsk, outcome: str, allow: bool) -> dict[str, Any]:
    """How a decided request's card is redrawn: its ``outcome``, green or red, buttons off.
    The one place a settled card's look is made (a click, the shell, a remembered rule)."""
    colour = discord.Colour.green() if allow else discord.Colour.red()
    return {
        "embed": permission_embed(ask.agent, ask.payload, outcome=outcome, colour=colour),
        "view": permission_view(ask.id, disabled=True, labels=labels_of(ask.payload)),
        "allowed_mentions": NO_MENTIONS,
    }
