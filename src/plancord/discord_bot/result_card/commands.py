"""What ``/plan status`` and ``/plan diff result`` say of an agent's result.

Why this exists: while a result waits for Merge or Discard, the agent cannot start another
plan, so ``/plan status`` must say so and link the card; and the result's diff must be
reachable from a command too (the card's file may be gone with a deleted message). The cog
only calls these.
"""

from __future__ import annotations

from pathlib import Path

import discord

from plancord.app import App
from plancord.discord_bot.result_card.diff_file import DiffAttachment, diff_attachment
from plancord.discord_bot.shared.embed_basics import jump_url


async def add_result_status(
    app: App, agent: str, guild_id: int | None, embed: discord.Embed
) -> None:
    """Add the waiting result, if any, to a ``/plan status`` embed."""
    record = await app.results.waiting(agent)
    if record is None:
        return
    where = ""
    if record.card_channel is not None and record.card_message is not None:
        url = jump_url(guild_id, record.card_channel, record.card_message)
        where = f" on its [completion card]({url})"
    embed.add_field(
        name="Result waiting for a decision",
        value=(
            f"Plan v{record.revision} ran on `{record.branch}`; Merge or Discard it{where}. "
            "No other plan can be approved until then."
        )[:1024],
        inline=False,
    )


async def result_diff(app: App, agent: str) -> tuple[str, discord.File | None]:
    """The text and file answering ``/plan diff result``: the newest result's full diff."""
    record = await app.results.latest(agent)
    if record is None:
        return f"**{agent}** has no executed plan whose result could be shown.", None
    made: list[DiffAttachment] = []

    async def use(path: Path) -> None:
        made.append(await diff_attachment(path, record.branch.replace("/", "-")))

    if not await app.results.write_diff(record.plan_id, use):
        return (
            f"The branch `{record.branch}` of plan v{record.revision} is gone "
            f"({record.outcome or 'discarded'}); there is no diff to show.",
            None,
        )
    diff = made[0]
    state = record.result.value if record.result else "waiting"
    text = f"The result of plan v{record.revision} on `{record.branch}` ({state})."
    if diff.note:
        text += f"\n{diff.note}"
    return text, diff.file() if diff.data else None
