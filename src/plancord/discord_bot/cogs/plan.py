"""``/plan``: start, status, diff, cancel, and the plan decisions for phones and keyboards.

Each command finds the channel's agent, calls the runtime or ``PlanningService`` and renders
the answer; every rule (who may decide, which revision is current, what may happen in which
phase) is the service's, and its refusals come back as ephemeral replies. The decisions act
on the current revision exactly as the buttons on its message do.

Every command acknowledges (defers) before it touches the database, so Discord gets its
response within its 3 s limit however busy the store is.
"""

from __future__ import annotations

import io
from collections.abc import Awaitable, Callable

import discord
from discord import app_commands
from discord.ext import commands

from plancord.core.agents import AgentRecord
from plancord.core.errors import InvalidTransition, PlanValidationError
from plancord.core.instructions import Refused
from plancord.core.plan_comments import MAX_COMMENT_CHARS, PLAN_WIDE
from plancord.core.plan_diff import revision_changes
from plancord.core.plan_edits import form_problem
from plancord.core.plan_text import MAX_PLAN_FILE_BYTES, parse_plan_text
from plancord.core.planning import ApprovalMode, PlanEvent, PlanRevision, next_phase
from plancord.discord_bot.plan_card import buttons
from plancord.discord_bot.plan_card.buttons import FEEDBACK_LIMIT, REASON_LIMIT
from plancord.discord_bot.plan_card.status import render_status
from plancord.discord_bot.result_card.commands import add_result_status, result_diff
from plancord.discord_bot.shared.channel_io import ChannelIO
from plancord.discord_bot.shared.client import PlancordClient
from plancord.discord_bot.shared.common import (
    NO_AGENT,
    Reply,
    actor_at,
    agent_for,
    explained_refusals,
    reply_error,
    reply_privately,
)
from plancord.discord_bot.shared.embed_basics import CONTENT_LIMIT, clip, size
from plancord.discord_bot.shared.why import why_text

NO_MENTIONS = discord.AllowedMentions.none()
DIFF_MESSAGE_LIMIT = 1900
MODES = [
    app_commands.Choice(name="normal", value=ApprovalMode.NORMAL.value),
    app_commands.Choice(name="fresh context", value=ApprovalMode.FRESH_CONTEXT.value),
    app_commands.Choice(name="confirm each edit", value=ApprovalMode.CONFIRM_EACH_EDIT.value),
]


@app_commands.guild_only()
class PlanCog(commands.GroupCog, group_name="plan", group_description="Plan first, then act"):
    def __init__(self, bot: PlancordClient, io: ChannelIO) -> None:
        self.bot = bot
        self.io = io
        super().__init__()

    async def _agent(
        self, interaction: discord.Interaction, reply: Reply = reply_error
    ) -> AgentRecord | None:
        record = await agent_for(self.bot.app, interaction.channel)
        if record is None:
            await reply(interaction, NO_AGENT)
        return record

    async def _agent_privately(self, interaction: discord.Interaction) -> AgentRecord | None:
        """Acknowledge the command privately, then find the channel's agent (None, the member
        told, when there is none)."""
        await interaction.response.defer(ephemeral=True, thinking=True)
        return await self._agent(interaction)

    async def _decide(
        self,
        interaction: discord.Interaction,
        event: PlanEvent,
        decide: Callable[[PlanRevision], Awaitable[None]],
    ) -> None:
        """A decision (``event``) on the revision waiting in the channel, as its buttons take
        it; a refusal is explained privately."""
        record = await self._agent_privately(interaction)
        if record is None:
            return
        async with explained_refusals(interaction):
            await decide(await self._current(record.name, event))

    async def _current(self, agent: str, event: PlanEvent) -> PlanRevision:
        """The revision waiting for a decision, or the service's reason why there is none."""
        status = await self.bot.app.planning.status(agent)
        if status.revision is None:
            next_phase(status.state.phase, event)
            raise InvalidTransition(
                status.state.phase.value, event.value, "There is no plan to decide on yet."
            )
        return status.revision

    @app_commands.command(name="start", description="Put this channel's agent in plan mode")
    @app_commands.describe(task="What the agent should plan (it starts on it right away)")
    async def start(
        self,
        interaction: discord.Interaction,
        task: app_commands.Range[str, 1, 2000] | None = None,
    ) -> None:
        # Acknowledge before anything is read (a channel without an agent is a read too);
        # the deferral decides the eventual reply's visibility: public, for the announcement;
        # the other answers go privately.
        await interaction.response.defer(thinking=True)
        record = await self._agent(interaction, reply_privately)
        if record is None:
            return
        async with explained_refusals(interaction, reply_privately):
            actor = actor_at(interaction)
            verdict = await self.bot.app.instructions.judge(record, actor)
            if isinstance(verdict, Refused):
                await reply_privately(interaction, f"{verdict.refusal.text}; nothing changed.")
                return
            if not self.bot.app.runtime.is_busy(record.name) and isinstance(
                interaction.channel, discord.abc.Messageable
            ):
                self.io.note_origin(record.name, interaction.channel)
            if await self.bot.app.runtime.start_planning(record.name, task, actor):
                await interaction.followup.send(
                    start_announcement(actor.name, record.name, task), allowed_mentions=NO_MENTIONS
                )
                return
            status = await self.bot.app.planning.status(record.name)
            await reply_privately(
                interaction,
                f"**{record.name}** is already in plan mode; nothing changed.",
                embed=render_status(record.name, status),
            )

    @app_commands.command(name="status", description="Where this channel's agent is in plan mode")
    async def status(self, interaction: discord.Interaction) -> None:
        record = await self._agent_privately(interaction)
        if record is None:
            return
        async with explained_refusals(interaction):
            status = await self.bot.app.planning.status(record.name)
            embed = render_status(record.name, status)
            await add_result_status(self.bot.app, record.name, interaction.guild_id, embed)
            await interaction.followup.send(embed=embed, ephemeral=True)

    @app_commands.command(
        name="diff", description="What changed between two revisions, or in the result"
    )
    @app_commands.describe(
        first="The older revision (default: the one before the newest)",
        second="The newer revision (default: the newest)",
        result="Attach the newest executed plan's full diff instead",
    )
    async def diff(
        self,
        interaction: discord.Interaction,
        first: app_commands.Range[int, 1, 10_000] | None = None,
        second: app_commands.Range[int, 1, 10_000] | None = None,
        result: bool = False,
    ) -> None:
        record = await self._agent_privately(interaction)
        if record is None:
            return
        if result:
            text, file = await result_diff(self.bot.app, record.name)
            if file is None:
                await interaction.followup.send(text, ephemeral=True)
            else:
                await interaction.followup.send(text, file=file, ephemeral=True)
            return
        state = await self.bot.app.store.load_state(record.name)
        if state.plan_id is None or state.revision < 2:
            await interaction.followup.send(
                f"**{record.name}** has no plan with two revisions to compare.", ephemeral=True
            )
            return
        newer = second or state.revision
        older = first or newer - 1
        changes = await revision_changes(self.bot.app.store, state.plan_id, older, newer)
        if changes is None:
            await interaction.followup.send(
                f"Give two revisions, the older first, between v1 and v{state.revision}.",
                ephemeral=True,
            )
            return
        text = changes.to_discord(DIFF_MESSAGE_LIMIT)
        name = f"changes-v{older}-v{newer}.md"
        attachment = discord.File(io.BytesIO(changes.to_markdown().encode("utf-8")), filename=name)
        await interaction.followup.send(text, file=attachment, ephemeral=True)

    @app_commands.command(name="why", description="Why this agent's last tool calls ran or not")
    async def why(self, interaction: discord.Interaction) -> None:
        await interaction.response.defer(ephemeral=True, thinking=True)
        record = await agent_for(self.bot.app, interaction.channel)
        text = NO_AGENT if record is None else await why_text(self.bot.app, record.name)
        await interaction.followup.send(text, ephemeral=True, allowed_mentions=NO_MENTIONS)

    @app_commands.command(name="cancel", description="Leave plan mode; nothing is executed")
    async def cancel(self, interaction: discord.Interaction) -> None:
        record = await self._agent_privately(interaction)
        if record is None:
            return
        async with explained_refusals(interaction):
            await self.bot.app.planning.cancel(record.name, actor_at(interaction))
            await interaction.followup.send(
                f"Cancelled plan mode for **{record.name}**.", ephemeral=True
            )

    @app_commands.command(name="approve", description="Approve the plan waiting for a decision")
    @app_commands.describe(mode="How the agent carries it out (default: normal)")
    @app_commands.choices(mode=MODES)
    async def approve(self, interaction: discord.Interaction, mode: str | None = None) -> None:
        await self._decide(
            interaction,
            PlanEvent.APPROVE,
            lambda revision: buttons.approve(
                interaction, revision, ApprovalMode(mode or ApprovalMode.NORMAL)
            ),
        )

    @app_commands.command(
        name="edit", description="Send the plan back with what should change, or edit its file"
    )
    @app_commands.describe(
        feedback="What should change (the agent revises the plan)",
        step="Which step it is about",
        file="The plan's file, edited: it becomes the next revision as it is",
    )
    async def edit(
        self,
        interaction: discord.Interaction,
        feedback: app_commands.Range[str, 1, FEEDBACK_LIMIT] | None = None,
        step: app_commands.Range[int, 1, 50] | None = None,
        file: discord.Attachment | None = None,
    ) -> None:
        if file is not None:
            await self._decide(
                interaction,
                PlanEvent.REVISE,
                lambda revision: self._edit_file(interaction, revision, file),
            )
            return
        if feedback is None:
            await reply_error(
                interaction, "Say what should change (feedback), or attach the plan's edited file."
            )
            return
        await self._decide(
            interaction,
            PlanEvent.REQUEST_CHANGES,
            lambda revision: buttons.request_changes(interaction, revision, feedback, step),
        )

    async def _edit_file(
        self, interaction: discord.Interaction, revision: PlanRevision, file: discord.Attachment
    ) -> None:
        """The attached plan file as the next revision, authored by the member."""
        if file.size > MAX_PLAN_FILE_BYTES:
            await reply_error(interaction, f"The file is over {MAX_PLAN_FILE_BYTES:,} bytes.")
            return
        try:
            text = (await file.read()).decode("utf-8")
        except UnicodeDecodeError:
            await reply_error(interaction, "The file is not UTF-8 text; send the plan's .md file.")
            return
        try:
            edited = await self.bot.app.planning.edit(
                revision.exact_ref, parse_plan_text(text), actor_at(interaction)
            )
        except PlanValidationError as exc:
            await reply_error(
                interaction,
                f"❌ {form_problem(exc)}. Nothing changed; fix your file and send it again.",
            )
            return
        await interaction.followup.send(
            f"Edited plan v{revision.revision} into v{edited.revision} ({edited.sha8}) from "
            "your file; it waits for approval again.",
            ephemeral=True,
        )

    @app_commands.command(name="reject", description="Reject the plan; nothing is executed")
    @app_commands.describe(reason="Why (the agent and the channel see it)")
    async def reject(
        self,
        interaction: discord.Interaction,
        reason: app_commands.Range[str, 1, REASON_LIMIT] | None = None,
    ) -> None:
        await self._decide(
            interaction,
            PlanEvent.REJECT,
            lambda revision: buttons.reject(interaction, revision, reason),
        )

    @app_commands.command(name="comment", description="Comment on a step of the waiting plan")
    @app_commands.describe(text="The comment", step="The step it is about (none: the whole plan)")
    async def comment(
        self,
        interaction: discord.Interaction,
        text: app_commands.Range[str, 1, MAX_COMMENT_CHARS],
        step: app_commands.Range[int, 1, 50] | None = None,
    ) -> None:
        record = await self._agent_privately(interaction)
        if record is None:
            return
        async with explained_refusals(interaction):
            comments = self.bot.app.plan_comments
            kept = await comments.comment(
                record.name, actor_at(interaction), step or PLAN_WIDE, text
            )
            await self.bot.plan_questions.redraw(kept.plan_id, kept.revision)
            await interaction.followup.send(
                f"Comment #{kept.id} on {kept.where} of plan v{kept.revision} kept; "
                f"**{record.name}** reads it at its next turn.",
                ephemeral=True,
            )

    @app_commands.command(name="comments", description="Every comment on the current plan")
    async def comments(self, interaction: discord.Interaction) -> None:
        record = await self._agent_privately(interaction)
        if record is None:
            return
        state = await self.bot.app.store.load_state(record.name)
        found = await self.bot.app.plan_comments.for_plan(state.plan_id) if state.plan_id else []
        if not found:
            await interaction.followup.send(
                f"No comments on the plan of **{record.name}**.", ephemeral=True
            )
            return
        lines = [f"**Comments on the plan of {record.name}** ({len(found)})"]
        lines += [f"• {c.line(300)}" for c in found]
        text = clip("\n".join(lines), CONTENT_LIMIT)
        await interaction.followup.send(text, ephemeral=True)

    @app_commands.command(name="resolve", description="Resolve a comment on the plan")
    @app_commands.describe(comment="The comment's number, such as 3")
    async def resolve(
        self, interaction: discord.Interaction, comment: app_commands.Range[int, 1, 10**9]
    ) -> None:
        record = await self._agent_privately(interaction)
        if record is None:
            return
        async with explained_refusals(interaction):
            done = await self.bot.app.plan_comments.resolve(
                record.name, comment, actor_at(interaction)
            )
            current = await self.bot.app.store.load_state(record.name)
            await self.bot.plan_questions.redraw(done.plan_id, current.revision or done.revision)
            await interaction.followup.send(f"Resolved comment #{comment}.", ephemeral=True)


def start_announcement(who: str, agent: str, task: str | None) -> str:
    """What ``/plan start`` says in the channel, within Discord's 2000 characters: the task
    shortened when it must be (the agent has it whole)."""
    head = f"📝 {clip(who, 100)} put **{agent}** in plan mode"
    tail = "\nIt explores read-only and will post a plan here for approval."
    if not task:
        return head + tail
    room = CONTENT_LIMIT - size(head) - size(tail) - 2
    return f"{head}: {clip(task, room)}{tail}"
