""" "Allow always" and "Deny always" on a permission card: answer this call and remember the
answer as a member's rule (``core.call_rules``) for the calls it covers.

A click on "Allow always…" decides nothing yet: it shows the clicker, privately, the scope
the rule would have (this agent, this tool, the argv prefix the filter's reader parsed or the
path inside the workspace), with a button to confirm it for good or for one day. The
confirming click answers the card as Allow (or Deny) would and keeps the rule, with who made
it and when. Both clicks are judged by the authority as an approver's act (the requester
alone may allow their own call, not remember it for every later one) and only from the
agent's own channel; the scope comes from the stored ask, never from the click.
"""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

import discord

from plancord.core.authority import ACTS, MISPLACED, Decision, Refusal, Subject
from plancord.core.call_rules import RuleScope
from plancord.core.kinds import Permission
from plancord.discord_bot.asks.live import (
    ASK_ID,
    NO_MENTIONS,
    ClickWords,
    LiveAsk,
    LiveAsks,
    edit_quietly,
    refuse,
)
from plancord.discord_bot.asks.permission_card import clip_field, settled_fields
from plancord.discord_bot.shared.client import PlancordClient, client_of
from plancord.discord_bot.shared.common import acknowledge, actor_at
from plancord.discord_bot.shared.dynamic_items import CustomId

OFFER_ID = CustomId("ask:always:{choice}:{ask_id}", choice="allow|deny", ask_id=ASK_ID)
CONFIRM_ID = CustomId(
    "ask:remember:{choice}:{lasts}:{ask_id}", choice="allow|deny", lasts="always|day", ask_id=ASK_ID
)
LASTS = {"always": None, "day": timedelta(days=1)}
WORDS = ClickWords(
    settled="This request was already decided: {outcome}",
    expired="This request expired: nothing was run and nothing was remembered.",
)
ELSEWHERE = "This request belongs to another channel's agent; a click here decides nothing."
APPROVERS_ONLY = (
    "Only members with an approver role or server administrators can remember a rule for "
    "this agent; Allow and Deny answer this one request."
)
NOT_REMEMBERED = (
    "This request cannot be remembered as a rule (a drift, a checkpoint, or a command "
    "that is more than one plain command): answer it with Allow or Deny."
)


def add_remember_buttons(view: discord.ui.View, ask_id: str, payload: dict[str, Any]) -> None:
    """ "Allow always…" and "Deny always…" beside Allow and Deny, when the ask can be
    remembered."""
    if payload.get("remember"):
        view.add_item(OfferButton("allow", ask_id))
        view.add_item(OfferButton("deny", ask_id))


class Remembering:
    """The two clicks: the offer (the scope shown privately) and its confirmation."""

    def __init__(self, bot: PlancordClient, live: LiveAsks) -> None:
        self.bot = bot
        self.live = live

    async def offer(
        self, interaction: discord.Interaction[discord.Client], ask_id: str, allow: bool
    ) -> None:
        judged = await self._judged(interaction, ask_id, allow)
        if judged is None:
            return
        ask, scope, _ = judged
        verb = "Allow" if allow else "Deny"
        text = (
            f"**{verb} always** answers this request with {verb} and remembers a rule: "
            f"{'allow' if allow else 'deny'} {scope.describe()}, for agent **{ask.agent}**.\n"
            "It applies only outside plan mode, never widens what the sandbox lets the call "
            "do, and ranks below the operator's rules. List or revoke it with `/agent rules`."
        )
        view = discord.ui.View(timeout=None)
        choice = "allow" if allow else "deny"
        for lasts in LASTS:
            view.add_item(ConfirmButton(choice, lasts, ask_id))
        await interaction.response.send_message(
            clip_field(text, 2000), view=view, ephemeral=True, allowed_mentions=NO_MENTIONS
        )

    async def confirm(
        self,
        interaction: discord.Interaction[discord.Client],
        ask_id: str,
        allow: bool,
        lasts: timedelta | None,
    ) -> None:
        judged = await self._judged(interaction, ask_id, allow)
        if judged is None:
            return
        ask, scope, verdict = judged
        await acknowledge(interaction)
        rules = self.bot.app.call_rules
        if rules is None:
            await refuse(interaction, "Remembered rules are not available here.")
            return
        decision = Permission.ALLOW if allow else Permission.DENY
        rule = await rules.remember(ask.agent, scope, decision, verdict.actor.label, lasts)
        word = "Allowed" if allow else "Denied"
        span = "for 1 day" if lasts is not None else "always"
        outcome = f"{word} {span} by {interaction.user.mention} (rule `{rule.id}`)"
        if not self.live.settle(ask_id, outcome, verdict):
            await rules.revoke(rule.id, verdict.actor.label)
            await refuse(interaction, WORDS.taken(self.live.outcome(ask_id)))
            return
        await edit_quietly(self.live.message_of(ask), **settled_fields(ask, outcome, allow))
        await interaction.followup.send(
            f"Remembered as rule `{rule.id}`: {rule.describe()}.",
            ephemeral=True,
            allowed_mentions=NO_MENTIONS,
        )

    async def _judged(
        self, interaction: discord.Interaction[discord.Client], ask_id: str, allow: bool
    ) -> tuple[LiveAsk, RuleScope, Decision] | None:
        """The ask, the scope it would remember and the authority's yes; None (the click
        told why) when the ask is gone, is not this channel's, cannot be remembered, or the
        clicker may not remember it."""
        ask = await self.live.clicked(interaction, ask_id, "permission", WORDS)
        if ask is None:
            return None
        stored = ask.payload.get("remember")
        if not isinstance(stored, dict) or ask.payload.get("subject", "permission") != (
            "permission"
        ):
            await refuse(interaction, NOT_REMEMBERED)
            return None
        scope = RuleScope.from_json(stored)
        act = ACTS[Subject.PERMISSION][0 if allow else 1]
        detail = {"ask_id": ask_id, "action": ask.payload.get("action"), "remember": stored}
        verdict = await self.bot.app.asks.judge(
            actor_at(interaction), Subject.PERMISSION, act, ask.agent, None, detail
        )
        if isinstance(verdict, Refusal):
            # A click from outside the agent's home is refused by the authority, place first.
            await refuse(interaction, ELSEWHERE if verdict.rule == MISPLACED else APPROVERS_ONLY)
            return None
        return ask, scope, verdict


class OfferButton(
    discord.ui.DynamicItem[discord.ui.Button[discord.ui.View]], template=OFFER_ID.template
):
    """ "Allow always…" / "Deny always…" on a permission card; carries only the ask id."""

    def __init__(self, choice: str, ask_id: str) -> None:
        allow = choice == "allow"
        super().__init__(
            discord.ui.Button(
                label="Allow always…" if allow else "Deny always…",
                style=discord.ButtonStyle.secondary,
                custom_id=OFFER_ID(choice=choice, ask_id=ask_id),
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
    ) -> OfferButton:
        return cls(match["choice"], match["ask_id"])

    async def callback(self, interaction: discord.Interaction[discord.Client]) -> None:
        await client_of(interaction).ask_controls.remember(
            interaction, self.ask_id, self.choice == "allow", None, confirmed=False
        )


class ConfirmButton(
    discord.ui.DynamicItem[discord.ui.Button[discord.ui.View]], template=CONFIRM_ID.template
):
    """The private confirmation's button: remember for good or for one day."""

    def __init__(self, choice: str, lasts: str, ask_id: str) -> None:
        allow = choice == "allow"
        verb = "Allow" if allow else "Deny"
        super().__init__(
            discord.ui.Button(
                label=f"{verb} always" if lasts == "always" else f"{verb} for 1 day",
                style=discord.ButtonStyle.success if allow else discord.ButtonStyle.danger,
                custom_id=CONFIRM_ID(choice=choice, lasts=lasts, ask_id=ask_id),
            )
        )
        self.choice, self.lasts, self.ask_id = choice, lasts, ask_id

    @classmethod
    async def from_custom_id(
        cls,
        interaction: discord.Interaction[discord.Client],
        item: discord.ui.Item[Any],
        match: re.Match[str],
        /,
    ) -> ConfirmButton:
        return cls(match["choice"], match["lasts"], match["ask_id"])

    async def callback(self, interaction: discord.Interaction[discord.Client]) -> None:
        await client_of(interaction).ask_controls.remember(
            interaction, self.ask_id, self.choice == "allow", LASTS[self.lasts], confirmed=True
        )


REMEMBER_BUTTONS = (OfferButton, ConfirmButton)
