"""``/agent rules``: the remembered rules of this channel's agent, listed, and one revoked.

Who may: the approvers (as for remembering a rule on a card: the authority judges an
approver's Allow on the agent's permission asks, never the requester's), so a rule a member
may not make is one they may not unmake either. The listing and the revoke are the same
code as ``plancord rules`` (``agent.remembered_rules``); a revoke is read at the agent's next
call in every process.
"""

from __future__ import annotations

import io

import discord

from plancord.agent.remembered_rules import rules_lines
from plancord.core.authority import Act, Refusal, Subject
from plancord.discord_bot.shared.client import PlancordClient
from plancord.discord_bot.shared.common import NO_AGENT, actor_at, agent_for

NO_MENTIONS = discord.AllowedMentions.none()
APPROVERS_ONLY = (
    "Only members with an approver role or server administrators can list or revoke this "
    "agent's rules."
)
LISTING_CHARS = 1900


async def agent_rules(
    bot: PlancordClient, interaction: discord.Interaction, revoke: str | None
) -> None:
    """List the rules of the channel's agent, or revoke ``revoke``; answered privately."""
    await interaction.response.defer(ephemeral=True, thinking=True)
    app = bot.app
    record = await agent_for(app, interaction.channel)
    if record is None:
        await _say(interaction, NO_AGENT)
        return
    actor = actor_at(interaction)
    detail = {"rules": "revoke" if revoke else "list", "rule": revoke}
    verdict = await app.asks.judge(actor, Subject.PERMISSION, Act.ALLOW, record.name, None, detail)
    rules = app.call_rules
    if isinstance(verdict, Refusal) or rules is None:
        await _say(interaction, APPROVERS_ONLY if rules else "Rules are not kept here.")
        return
    if revoke is not None:
        revoked = await rules.revoke(revoke.strip(), actor.label, agent=record.name)
        if revoked is None:
            text = (
                f"No member's rule `{revoke.strip()[:40]}` is in force for **{record.name}**; "
                "`/agent rules` lists them (the operator's are changed in the config)."
            )
        else:
            text = f"Revoked `{revoked.rule.id}`: {revoked.rule.describe()}. The next call sees it."
        await _say(interaction, text)
        return
    lines = await rules_lines(rules, record.name)
    if not lines:
        await _say(interaction, f"**{record.name}** has no rules.")
        return
    text = f"Rules of **{record.name}** (operator's first; they rank over members'):\n" + "\n".join(
        f"- {line}" for line in lines
    )
    if len(text) <= LISTING_CHARS:
        await _say(interaction, text)
        return
    listing = discord.File(io.BytesIO("\n".join(lines).encode()), filename="rules.txt")
    await interaction.followup.send(
        f"**{record.name}** has {len(lines)} rules; they are in the attached file.",
        file=listing,
        ephemeral=True,
        allowed_mentions=NO_MENTIONS,
    )


async def _say(interaction: discord.Interaction, text: str) -> None:
    await interaction.followup.send(text, ephemeral=True, allowed_mentions=NO_MENTIONS)
