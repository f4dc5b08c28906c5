"""``/schedule``: create, list, pause, resume, delete and run now the plans this channel's
agent makes on its own at set times.

The cog finds the channel's agent, calls the app's ``ScheduleBook`` (who may create or
change a schedule is the authority's answer, audited there) or its runner, and renders the
answer: the changes publicly, so the channel sees who scheduled what, and the refusals
privately. Every command acknowledges before it reads the store.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

import discord
from discord import app_commands
from discord.ext import commands

from plancord.core.planning import Actor
from plancord.core.schedules import Schedule, ScheduleState, WhenBusy
from plancord.discord_bot.shared.client import PlancordClient
from plancord.discord_bot.shared.common import (
    NO_AGENT,
    actor_at,
    agent_for,
    explained_refusals,
    reply_privately,
)
from plancord.discord_bot.shared.embed_basics import CONTENT_LIMIT, clip, size

NO_MENTIONS = discord.AllowedMentions.none()
WHEN_BUSY = [
    app_commands.Choice(name="skip the run", value=WhenBusy.SKIP.value),
    app_commands.Choice(name="queue it until the agent is free", value=WhenBusy.QUEUE.value),
]
_ID = "The schedule's id (from /schedule list)"


@app_commands.guild_only()
class ScheduleCog(
    commands.GroupCog, group_name="schedule", group_description="Plans the agent makes on a timer"
):
    def __init__(self, bot: PlancordClient) -> None:
        self.bot = bot
        super().__init__()

    async def _agent(self, interaction: discord.Interaction) -> str | None:
        await interaction.response.defer(thinking=True)
        record = await agent_for(self.bot.app, interaction.channel)
        if record is None:
            await reply_privately(interaction, NO_AGENT)
            return None
        return record.name

    @app_commands.command(name="create", description="Plan a task at set times, for approval")
    @app_commands.describe(
        task="What the agent should plan at each run",
        cron="A cron expression, five fields: `0 9 * * 1` is Mondays at 09:00",
        every="Or an interval: `6h`, `90m`, `1d` (at least 15 minutes)",
        timezone="The time zone the times are read in, e.g. Europe/Berlin (default UTC)",
        note="A short note shown with the schedule",
        when_busy="When the agent is busy at a run's time (default: skip the run)",
        runs_per_day="At most this many runs a day (default 4)",
    )
    @app_commands.choices(when_busy=WHEN_BUSY)
    async def create(
        self,
        interaction: discord.Interaction,
        task: app_commands.Range[str, 1, 2000],
        cron: app_commands.Range[str, 1, 100] | None = None,
        every: app_commands.Range[str, 1, 20] | None = None,
        timezone: app_commands.Range[str, 1, 64] = "UTC",
        note: app_commands.Range[str, 1, 200] | None = None,
        when_busy: app_commands.Choice[str] | None = None,
        runs_per_day: app_commands.Range[int, 1, 96] = 4,
    ) -> None:
        agent = await self._agent(interaction)
        if agent is None:
            return
        async with explained_refusals(interaction, reply_privately):
            actor = actor_at(interaction)
            schedule = await self.bot.app.schedules.create(
                agent,
                actor,
                task=task,
                cron=cron,
                every=every,
                tz=timezone,
                note=note or "",
                when_busy=WhenBusy(when_busy.value) if when_busy else WhenBusy.SKIP,
                max_runs_per_day=runs_per_day,
            )
            await interaction.followup.send(
                created_text(actor.name, schedule), allowed_mentions=NO_MENTIONS
            )

    @app_commands.command(name="list", description="This channel's agent's schedules")
    async def list(self, interaction: discord.Interaction) -> None:
        await interaction.response.defer(ephemeral=True, thinking=True)
        record = await agent_for(self.bot.app, interaction.channel)
        if record is None:
            await interaction.followup.send(NO_AGENT, ephemeral=True)
            return
        schedules = await self.bot.app.schedules.list(record.name)
        await interaction.followup.send(list_text(record.name, schedules), ephemeral=True)

    async def _change(
        self,
        interaction: discord.Interaction,
        schedule_id: str,
        change: Callable[[str, Actor, str], Awaitable[Schedule]],
        line: Callable[[str, Schedule], str],
    ) -> Schedule | None:
        """One change of a schedule of the channel's agent, as the book allows it: said in
        the channel by ``line``, or refused privately."""
        agent = await self._agent(interaction)
        if agent is None:
            return None
        async with explained_refusals(interaction, reply_privately):
            actor = actor_at(interaction)
            changed = await change(schedule_id, actor, agent)
            await interaction.followup.send(
                clip(line(clip(actor.name, 100), changed), CONTENT_LIMIT),
                allowed_mentions=NO_MENTIONS,
            )
            return changed
        return None

    @app_commands.command(name="pause", description="Stop a schedule's runs until resumed")
    @app_commands.describe(schedule=_ID)
    async def pause(self, interaction: discord.Interaction, schedule: str) -> None:
        await self._change(
            interaction,
            schedule,
            self.bot.app.schedules.pause,
            lambda who, paused: f"⏸️ {who} paused schedule {paused.label}.",
        )

    @app_commands.command(name="resume", description="Run a paused schedule again")
    @app_commands.describe(schedule=_ID)
    async def resume(self, interaction: discord.Interaction, schedule: str) -> None:
        await self._change(
            interaction,
            schedule,
            self.bot.app.schedules.resume,
            lambda who, resumed: (
                f"▶️ {who} resumed schedule {resumed.label} ({resumed.words}).\n"
                f"Next runs: {', '.join(resumed.upcoming())}."
            ),
        )

    @app_commands.command(name="delete", description="Delete a schedule (its runs stay audited)")
    @app_commands.describe(schedule=_ID)
    async def delete(self, interaction: discord.Interaction, schedule: str) -> None:
        await self._change(
            interaction,
            schedule,
            self.bot.app.schedules.delete,
            lambda who, gone: f"🗑️ {who} deleted schedule {gone.label}.",
        )

    @app_commands.command(name="run-now", description="Run a schedule once, now")
    @app_commands.describe(schedule=_ID)
    async def run_now(self, interaction: discord.Interaction, schedule: str) -> None:
        found = await self._change(
            interaction,
            schedule,
            self.bot.app.schedules.for_change,
            lambda who, due: f"⏰ {who} runs schedule {due.label} now.",
        )
        if found is not None:
            async with explained_refusals(interaction, reply_privately):
                await self.bot.app.schedule_runs.run_now(found)


def created_text(who: str, schedule: Schedule) -> str:
    """The channel's line for a new schedule: the task, its times in words, what a busy
    agent does, and its next runs."""
    busy = "queued" if schedule.when_busy is WhenBusy.QUEUE else "skipped"
    head = f"⏰ {clip(who, 100)} scheduled **{schedule.agent}** ({schedule.label}): "
    tail = (
        f"\nWhen: {schedule.words}. A run while the agent is busy is {busy}; at most "
        f"{schedule.max_runs_per_day} a day.\nNext runs: {', '.join(schedule.upcoming())}.\n"
        "Each run explores and posts a plan here for approval; the schedule never approves."
    )
    room = CONTENT_LIMIT - size(head) - size(tail)
    return head + clip(schedule.task, room) + tail


def list_text(agent: str, found: Sequence[Schedule]) -> str:
    """Each schedule on a line of its own, within one message."""
    if not found:
        return f"**{agent}** has no schedules. Make one with `/schedule create`."
    lines = [f"**{agent}**'s schedules:"]
    for schedule in found:
        state = (
            "paused"
            if schedule.state is ScheduleState.PAUSED
            else "next " + (schedule.upcoming(1)[0])
        )
        lines.append(
            f"• {schedule.label} {schedule.words} ({state}), by {schedule.created_by_name}: "
            f"{clip(schedule.task, 120)}"
        )
    return clip("\n".join(lines), 1900)
