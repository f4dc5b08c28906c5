"""``/agent create | list | info | remove``: agents and the channels they live in.

The cog parses, calls ``AgentManager`` and renders; validation and storage live in the
manager. Creating and removing agents needs Manage Channels: the command carries it as its
default permission, and the handler checks it again because Discord ignores default
permissions on subcommands and server admins can change them.
"""

from __future__ import annotations

import io
import logging
from typing import TYPE_CHECKING, Literal

import discord
from discord import app_commands
from discord.ext import commands

from plancord.agent.manager import AgentManager
from plancord.core.access import describe_access
from plancord.core.agents import AgentRecord, check_agent_name
from plancord.core.errors import AgentNotFound, PlancordError
from plancord.core.permissions import PermissionProfile
from plancord.discord_bot.cogs.rules import agent_rules
from plancord.discord_bot.shared.channel_io import ChannelIO, split_message
from plancord.discord_bot.shared.client import PlancordClient
from plancord.discord_bot.shared.common import (
    NO_AGENT,
    actor_at,
    agent_for,
    reply_error,
    reply_privately,
)
from plancord.discord_bot.shared.confirm import ConfirmView
from plancord.discord_bot.shared.embed_basics import FIELD_VALUE_LIMIT, clip

if TYPE_CHECKING:
    from plancord.app import App

log = logging.getLogger(__name__)

NO_MENTIONS = discord.AllowedMentions.none()
NEEDS_MANAGE_CHANNELS = (
    "You need the server-wide **Manage Channels** permission (or an admin role) to {action} agents."
)
NOT_HERE = "No agent named **{name}** in this server."
CONFIRM_TIMEOUT_SECONDS = 120.0

Profile = Literal["open", "standard", "locked"]


def profile_of(record: AgentRecord) -> str:
    return PermissionProfile.from_stored(record.permission_profile).preset.value


def channel_mention(record: AgentRecord) -> str:
    return f"<#{record.channel_id}>" if record.channel_id is not None else "no channel"


async def agent_choices(
    manager: AgentManager, current: str, guild_id: int | None
) -> list[app_commands.Choice[str]]:
    names = [a.name for a in await manager.list() if in_guild(a, guild_id)]
    matching = [n for n in names if current.lower() in n.lower()]
    return [app_commands.Choice(name=n, value=n) for n in matching[:25]]


def refusal_text(exc: PlancordError) -> str:
    """``exc`` as the member sees it; an unknown agent's says where the names are."""
    if isinstance(exc, AgentNotFound):
        return f"{exc} `/agent list` names the agents."
    return str(exc)


def may_manage_agents(
    interaction: discord.Interaction[discord.Client], admin_roles: list[int]
) -> bool:
    """Managing agents takes Manage Channels for the whole server (a permission overwrite on
    one channel is not enough), administrator, or one of ``discord.admin_role_ids``."""
    member = interaction.user
    if not isinstance(member, discord.Member):
        return False
    permissions = member.guild_permissions
    if permissions.administrator or permissions.manage_channels:
        return True
    return any(role.id in admin_roles for role in member.roles)


async def may_manage_channels(
    interaction: discord.Interaction[discord.Client], action: str, admin_roles: list[int]
) -> bool:
    """True when the member may manage agents in this server; otherwise refuse ephemerally."""
    if may_manage_agents(interaction, admin_roles):
        return True
    await reply_error(interaction, NEEDS_MANAGE_CHANNELS.format(action=action))
    return False


def in_guild(record: AgentRecord, guild_id: int | None) -> bool:
    """Whether ``record`` belongs to the server a command came from."""
    return record.guild_id is None or record.guild_id == guild_id


@app_commands.guild_only()
class AgentCog(commands.GroupCog, group_name="agent", group_description="Manage plancord agents"):
    def __init__(self, bot: PlancordClient, io: ChannelIO) -> None:
        self.bot = bot
        self.io = io
        super().__init__()

    @property
    def app(self) -> App:
        return self.bot.app

    @property
    def _admin_roles(self) -> list[int]:
        return list(self.bot.config.discord.admin_role_ids)

    @property
    def manager(self) -> AgentManager:
        return self.app.manager

    # -- create ----------------------------------------------------------------------------

    @app_commands.command(name="create", description="Create an agent and a channel for it")
    @app_commands.describe(
        name="1 to 32 letters, digits, '-' or '_'",
        system_prompt="Standing instructions for the agent",
        model="Anthropic model (default: the configured one)",
        profile="What the agent may do outside plan mode without asking",
        bind_here="Bind this channel instead of creating a new one",
        path="An existing folder or repository on the bot's host to work in (allowed roots only)",
    )
    @app_commands.default_permissions(manage_channels=True)
    async def create(
        self,
        interaction: discord.Interaction[discord.Client],
        name: app_commands.Range[str, 1, 32],
        system_prompt: str | None = None,
        model: str | None = None,
        profile: Profile | None = None,
        bind_here: bool = False,
        path: str | None = None,
    ) -> None:
        if not await may_manage_channels(interaction, "create", self._admin_roles):
            return
        await interaction.response.defer(ephemeral=True, thinking=True)
        problem = await self._create_problem(interaction, name, bind_here)
        if problem is not None:
            await reply_error(interaction, problem)
            return
        created: discord.TextChannel | None = None
        if bind_here:
            channel = interaction.channel
        else:
            try:
                channel = created = await self._create_channel(interaction, name)
            except discord.HTTPException as exc:
                log.warning("could not create a channel for agent %s: %s", name, exc)
                await reply_error(interaction, f"Discord refused to create the channel: {exc.text}")
                return
        if not isinstance(channel, discord.TextChannel):
            await reply_error(interaction, "Agents can only live in text channels.")
            return
        try:
            record = await self.manager.create(
                name,
                actor=actor_at(interaction),
                model=model,
                system_prompt=system_prompt or "",
                profile=profile,
                channel_id=channel.id,
                guild_id=channel.guild.id,
                existing_workspace=path,
            )
        except PlancordError as exc:
            if created is not None:
                await _delete_quietly(created)
            await reply_error(interaction, str(exc))
            return
        self.io.forget(name)
        workspace = self.manager.workspace_of(name)
        access = (await self.app.settings.plan_mode_for(record.name)).access
        who = describe_access(record, access)
        await _send_quietly(
            channel,
            f"👋 Agent **{record.name}** lives here (model `{clip(record.model, 200)}`, profile "
            f"`{profile_of(record)}`). It takes instructions from {who}: write in this "
            "channel to talk to it.",
        )
        await interaction.followup.send(
            f"Created agent **{record.name}** in {channel.mention}. Workspace: `{workspace}`\n"
            f"Who may instruct it: {who} (`plan_mode.access` in the config widens this).",
            ephemeral=True,
            allowed_mentions=NO_MENTIONS,
        )

    async def _create_problem(
        self, interaction: discord.Interaction[discord.Client], name: str, bind_here: bool
    ) -> str | None:
        """What stops this create before anything is made, in words for the member."""
        try:
            check_agent_name(name)
        except ValueError as exc:
            return str(exc)
        if any(agent.name == name for agent in await self.manager.list()):
            return f"An agent named {name!r} already exists."
        if bind_here:
            channel = interaction.channel
            if isinstance(channel, discord.Thread):
                return "Run `/agent create … bind_here:True` in a text channel, not a thread."
            if not isinstance(channel, discord.TextChannel):
                return "Agents can only live in text channels."
            bound = await self.app.store.find_agent_by_channel(channel.id)
            if bound is not None:
                return f"This channel is already bound to agent **{bound.name}**."
        return None

    async def _create_channel(
        self, interaction: discord.Interaction[discord.Client], name: str
    ) -> discord.TextChannel:
        guild = interaction.guild
        if guild is None:
            raise discord.ClientException("agents live in servers")
        here = interaction.channel
        if isinstance(here, discord.Thread):
            here = here.parent
        category = here.category if isinstance(here, discord.TextChannel) else None
        return await guild.create_text_channel(
            name.lower(),
            category=category,
            topic=f"plancord agent {name}",
            reason=f"/agent create by {interaction.user}",
        )

    # -- list and info ---------------------------------------------------------------------

    @app_commands.command(name="list", description="List the agents")
    async def list_agents(self, interaction: discord.Interaction[discord.Client]) -> None:
        await interaction.response.defer(ephemeral=True, thinking=True)
        agents = [a for a in await self.manager.list() if in_guild(a, interaction.guild_id)]
        if not agents:
            await interaction.followup.send(
                "No agents yet. Create one with `/agent create`.", ephemeral=True
            )
            return
        phases = {state.agent: state.phase.value for state in await self.app.store.list_states()}
        lines = [
            f"**{a.name}** · {channel_mention(a)} · `{a.model}` · {phases.get(a.name, '?')} · "
            f"{profile_of(a)}"
            for a in agents
        ]
        for chunk in split_message("\n".join(lines)):
            await interaction.followup.send(chunk, ephemeral=True, allowed_mentions=NO_MENTIONS)

    @app_commands.command(name="info", description="Show an agent (default: this channel's)")
    @app_commands.describe(name="The agent; leave empty for this channel's agent")
    async def info(
        self, interaction: discord.Interaction[discord.Client], name: str | None = None
    ) -> None:
        await interaction.response.defer(ephemeral=True, thinking=True)
        if name is None:
            record = await agent_for(self.app, interaction.channel)
            if record is None:
                await reply_error(interaction, NO_AGENT)
                return
            name = record.name
        try:
            settings = await self.app.settings.plan_mode_for(name)
            description = await self.manager.describe(name, settings)
        except PlancordError as exc:
            await reply_error(interaction, refusal_text(exc))
            return
        record = description.record
        if not in_guild(record, interaction.guild_id):
            await reply_error(interaction, NOT_HERE.format(name=name))
            return
        manager = may_manage_agents(interaction, self._admin_roles)
        card = _InfoCard(f"Agent {record.name}")
        card.add("Channel", channel_mention(record))
        card.add("Model", record.model, code=True)
        card.add("Profile", profile_of(record))
        card.add("Role", record.role or "none")
        card.add("Phase", description.state.phase.value)
        created = discord.utils.format_dt(record.created_at, "f")
        card.add("Created", f"{created} by {record.created_by or 'unknown'}")
        if manager:
            card.add("Workspace", str(description.workspace), code=True, inline=False)
        if record.system_prompt and not manager:
            card.add("System prompt", "Shown to those who may manage agents.", inline=False)
        elif record.system_prompt:
            card.add("System prompt", record.system_prompt, inline=False)
        files = [card.file(f"agent-{record.name}.md")] if card.shortened else []
        await interaction.followup.send(embed=card.embed, files=files, ephemeral=True)

    @info.autocomplete("name")
    async def _agent_names(
        self, interaction: discord.Interaction[discord.Client], current: str
    ) -> list[app_commands.Choice[str]]:
        return await agent_choices(self.manager, current, interaction.guild_id)

    # -- remove ----------------------------------------------------------------------------

    @app_commands.command(name="rules", description="List or revoke this agent's remembered rules")
    @app_commands.describe(revoke="A rule's id to revoke (leave empty to list them)")
    async def rules(
        self, interaction: discord.Interaction[discord.Client], revoke: str | None = None
    ) -> None:
        await agent_rules(self.bot, interaction, revoke)

    @app_commands.command(name="remove", description="Remove an agent (its workspace is kept)")
    @app_commands.describe(name="The agent to remove")
    @app_commands.default_permissions(manage_channels=True)
    async def remove(self, interaction: discord.Interaction[discord.Client], name: str) -> None:
        if not await may_manage_channels(interaction, "remove", self._admin_roles):
            return
        # Acknowledge before the agent is read; publicly, as the prompt is public.
        await interaction.response.defer(thinking=True)
        try:
            record = await self.app.store.get_agent(name)
        except PlancordError as exc:
            await reply_privately(interaction, refusal_text(exc))
            return
        if not in_guild(record, interaction.guild_id):
            await reply_privately(interaction, NOT_HERE.format(name=name))
            return
        workspace = self.manager.workspace_of(name)
        prompt = (
            f"Remove agent **{record.name}** ({channel_mention(record)})? Its conversation and "
            f"planning state are deleted. The workspace is kept at `{workspace}`."
        )
        view = ConfirmView(
            author_id=interaction.user.id, timeout=CONFIRM_TIMEOUT_SECONDS, confirm_label="Remove"
        )
        view.message = await interaction.edit_original_response(
            content=prompt, view=view, allowed_mentions=NO_MENTIONS
        )
        await view.wait()
        if view.value is None:
            outcome = "Timed out: nothing was removed."
        elif not view.value:
            outcome = "Cancelled: nothing was removed."
        else:
            outcome = await self._remove(interaction, record)
        try:
            await interaction.edit_original_response(
                content=f"{prompt}\n{outcome}", view=view, allowed_mentions=NO_MENTIONS
            )
        except discord.HTTPException as exc:
            log.warning("could not report the removal of %s: %s", name, exc)

    @remove.autocomplete("name")
    async def _removable_names(
        self, interaction: discord.Interaction[discord.Client], current: str
    ) -> list[app_commands.Choice[str]]:
        return await agent_choices(self.manager, current, interaction.guild_id)

    async def _remove(
        self, interaction: discord.Interaction[discord.Client], record: AgentRecord
    ) -> str:
        await self.app.runtime.stop(record.name)
        try:
            workspace = await self.manager.remove(record.name, actor=actor_at(interaction))
        except PlancordError as exc:
            return f"Not removed: {exc}"
        self.io.forget(record.name)
        kept = f"The workspace is kept at `{workspace}`."
        if record.channel_id is not None:
            kept += f" The channel {channel_mention(record)} is kept too; delete it if unused."
        return f"Removed agent **{record.name}**. {kept}"


async def _send_quietly(channel: discord.abc.Messageable, text: str) -> None:
    try:
        await channel.send(text, allowed_mentions=NO_MENTIONS)
    except discord.HTTPException as exc:
        log.warning("could not post to a new agent channel: %s", exc)


async def _delete_quietly(channel: discord.TextChannel) -> None:
    try:
        await channel.delete(reason="plancord could not create the agent")
    except discord.HTTPException as exc:
        log.warning("could not delete channel %s after a failed create: %s", channel.id, exc)


class _InfoCard:
    """``/agent info``'s embed, each field within Discord's 1024 characters; what had to be
    shortened is whole in the attached file, which the embed names."""

    def __init__(self, title: str) -> None:
        self.embed = discord.Embed(title=title, colour=discord.Colour.blurple())
        self._whole: list[tuple[str, str]] = []

    @property
    def shortened(self) -> bool:
        return bool(self._whole)

    def add(self, name: str, text: str, *, code: bool = False, inline: bool = True) -> None:
        limit = FIELD_VALUE_LIMIT - (2 if code else 0)
        source = text.replace("`", "'") if code else text
        shown = clip(source, limit)
        if shown != source:
            self._whole.append((name, text))
        self.embed.add_field(name=name, value=f"`{shown}`" if code else shown, inline=inline)

    def file(self, filename: str) -> discord.File:
        self.embed.set_footer(text=f"Shortened here; whole in the attached {filename}.")
        text = "\n\n".join(f"## {name}\n{value}" for name, value in self._whole) + "\n"
        return discord.File(io.BytesIO(text.encode("utf-8")), filename=filename)
