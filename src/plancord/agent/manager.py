"""Creating, listing, describing and removing agents, and resolving their plan-mode settings.

An agent is a database row plus a git workspace at ``<data_dir>/agents/<name>/workspace``.
Removing an agent deletes its row, planning state and conversation but keeps the workspace on
disk and the audit log in the database: nobody loses work by removing a bot.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import timedelta
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from plancord.agent.agent_settings import AgentOverrides
from plancord.agent.home import AgentHomes
from plancord.agent.workspace import init_workspace
from plancord.config import Config, PlanModeOverrides
from plancord.core.agents import AgentRecord, check_agent_name
from plancord.core.errors import PlancordError
from plancord.core.network import NetworkBound
from plancord.core.permissions import PermissionProfile, Preset
from plancord.core.planning import Actor, AuditAction, AuditEntry, PlanningState
from plancord.core.ports import Clock
from plancord.core.roles import RoleNames, role_names_in
from plancord.core.settings import PlanModeSettings
from plancord.sandbox import LayerChoice
from plancord.sandbox.layers import network_by_plan_problem
from plancord.storage.store import SqlStore

log = logging.getLogger(__name__)

AGENT_ROLES = ("coordinator", "worker", "proactive")


class InvalidAgent(PlancordError):
    pass


@dataclass(frozen=True, slots=True)
class AgentDescription:
    record: AgentRecord
    state: PlanningState
    workspace: Path
    settings: PlanModeSettings


class AgentManager:
    def __init__(
        self,
        store: SqlStore,
        agents_dir: Path,
        default_model: str,
        clock: Clock,
        overrides: Mapping[str, AgentOverrides] | None = None,
        workspace_roots: Sequence[Path] = (),
        sandbox_layer: LayerChoice = LayerChoice.AUTO,
    ) -> None:
        self.overrides = dict(overrides or {})
        self.workspace_roots = [Path(root) for root in workspace_roots]
        self.store = store
        self.sandbox_layer = sandbox_layer
        self.agents_dir = agents_dir
        self._homes = AgentHomes(agents_dir)
        self.default_model = default_model
        self.clock = clock
        self._on_removed: list[Callable[[str], Awaitable[None]]] = []

    def on_removed(self, listener: Callable[[str], Awaitable[None]]) -> None:
        """Call ``listener`` with each removed agent's name (what runs for the agent, such
        as its MCP servers, stops then); a listener's failure is logged, never raised."""
        self._on_removed.append(listener)

    def workspace_of(self, name: str) -> Path:
        return self._homes.of(name).workspace

    async def create(
        self,
        name: str,
        *,
        actor: Actor,
        model: str | None = None,
        system_prompt: str = "",
        profile: str | dict[str, Any] | None = None,
        channel_id: int | None = None,
        guild_id: int | None = None,
        role: str | None = None,
        plan_mode_overrides: dict[str, Any] | None = None,
        existing_workspace: str | None = None,
    ) -> AgentRecord:
        """Validate everything first, then write the row, then make the workspace.

        ``existing_workspace`` names a directory (a git repository or not) under one of the
        configured ``workspace_roots`` to use instead of a new empty workspace; the agent's
        workspace path then links to it."""
        try:
            check_agent_name(name)
        except ValueError as exc:
            raise InvalidAgent(str(exc)) from None
        configured = self.overrides.get(name)
        if configured is not None:
            model = model or configured.model
            role = role or configured.role
        if role is not None and role not in AGENT_ROLES:
            raise InvalidAgent(f"role must be one of {', '.join(AGENT_ROLES)}, not {role!r}")
        permission = _profile(profile)
        overrides = _overrides(plan_mode_overrides)
        existing = None
        if existing_workspace is not None:
            existing = await asyncio.to_thread(self._existing_workspace, name, existing_workspace)
        now = self.clock.now()
        record = AgentRecord(
            name=name,
            model=(model or self.default_model).strip(),
            channel_id=channel_id,
            guild_id=guild_id,
            system_prompt=system_prompt.strip(),
            permission_profile=permission.model_dump(mode="json"),
            plan_mode_overrides=overrides,
            role=role,
            created_at=now,
            created_by=actor.label,
        )
        audit = AuditEntry(
            at=now,
            agent=name,
            actor=actor.label,
            action=AuditAction.AGENT_CREATED,
            detail={"model": record.model, "channel_id": channel_id, "profile": permission.preset},
        )
        await self.store.create_agent(record, audit)
        if existing is not None:
            await asyncio.to_thread(self._link_workspace, name, existing)
        await init_workspace(self.workspace_of(name), name, self.sandbox_layer)
        return record

    def _link_workspace(self, name: str, target: Path) -> None:
        link = self.workspace_of(name)
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(target, target_is_directory=True)

    def _existing_workspace(self, name: str, text: str) -> Path:
        """The resolved directory ``text`` names, refused unless it lies under a configured
        workspace root and outside plancord's own agents folder."""
        if not self.workspace_roots:
            raise InvalidAgent(
                "this bot takes no existing folders as workspaces; the operator lists the "
                "allowed folders under workspace_roots in the config"
            )
        path = Path(text.strip()).expanduser()
        if not path.is_absolute():
            raise InvalidAgent(f"give an absolute path, not {text!r}")
        resolved = path.resolve()
        roots = [root.resolve() for root in self.workspace_roots]
        if not any(resolved == root or resolved.is_relative_to(root) for root in roots):
            allowed = ", ".join(f"`{root}`" for root in roots)
            raise InvalidAgent(f"{resolved} is not under an allowed workspace root ({allowed})")
        agents = self.agents_dir.resolve()
        if resolved == agents or resolved.is_relative_to(agents) or agents.is_relative_to(resolved):
            raise InvalidAgent(f"{resolved} overlaps plancord's own agents folder")
        if not resolved.is_dir():
            raise InvalidAgent(f"{resolved} is not an existing directory")
        if os.path.lexists(self.workspace_of(name)):
            raise InvalidAgent(f"{self.workspace_of(name)} already exists; remove it first")
        return resolved

    async def remove(self, name: str, *, actor: Actor) -> Path:
        """Delete the agent; returns the workspace path, which is kept."""
        await self.store.get_agent(name)
        audit = AuditEntry(
            at=self.clock.now(), agent=name, actor=actor.label, action=AuditAction.AGENT_REMOVED
        )
        await self.store.delete_agent(name, audit)
        for listener in self._on_removed:
            try:
                await listener(name)
            except Exception:
                log.exception(
                    "agent %s was removed, but what ran for it may not have stopped", name
                )
        return self.workspace_of(name)

    async def list(self) -> list[AgentRecord]:
        return await self.store.list_agents()

    async def describe(self, name: str, settings: PlanModeSettings) -> AgentDescription:
        record = await self.store.get_agent(name)
        state = await self.store.load_state(name)
        return AgentDescription(record, state, self.workspace_of(name), settings)


RESOLVED_KEPT = 4096
"""How many resolved settings ``StoredSettings`` keeps before it starts over."""


class StoredSettings:
    """``SettingsProvider`` over the config file and each agent's stored overrides.

    The agent's row is read every time (its overrides and channel change at runtime); the
    settings resolved from it are kept, keyed by the rest of what they are made of (the
    agent, its channel, its stored overrides), because resolving them validates several
    pydantic models and is asked many times per model request. The config does not change
    while the bot runs; role ids resolved anew drop every kept setting."""

    def __init__(self, config: Config, store: SqlStore) -> None:
        self.config = config
        self.store = store
        self.role_names = RoleNames({})
        """Role names of the config resolved to ids (``resolve_roles``); until then a name
        grants nothing."""
        self._resolved: dict[tuple[str, int | None, str], PlanModeSettings] = {}

    async def plan_mode_for(self, agent: str) -> PlanModeSettings:
        record = await self.store.get_agent(agent)
        stored = json.dumps(record.plan_mode_overrides, sort_keys=True, default=str)
        key = (agent, record.channel_id, stored)
        settings = self._resolved.get(key)
        if settings is None:
            overrides = PlanModeOverrides.model_validate(record.plan_mode_overrides)
            resolved = self.config.plan_mode_for(agent, record.channel_id, overrides)
            settings = self.role_names.apply(resolved)
            if len(self._resolved) >= RESOLVED_KEPT:
                self._resolved.clear()
            self._resolved[key] = settings
        return settings

    def network_bound_for(self, agent: str) -> NetworkBound:
        bound = self.config.network_bound(agent)
        if not bound.by_plan:
            return bound
        return replace(bound, unavailable=network_by_plan_problem(self.config.sandbox.layer))

    async def role_names_used(self) -> set[str]:
        """Every role name (not id) the config and the stored overrides mention."""
        layers = [self.config.plan_mode_for()]
        for record in await self.store.list_agents():
            overrides = PlanModeOverrides.model_validate(record.plan_mode_overrides)
            layers.append(self.config.plan_mode_for(record.name, record.channel_id, overrides))
        return role_names_in(layers)

    def resolve_roles(self, names: RoleNames) -> None:
        self.role_names = names
        self._resolved.clear()


def _profile(profile: str | dict[str, Any] | None) -> PermissionProfile:
    if profile is None:
        return PermissionProfile()
    if isinstance(profile, str):
        try:
            return PermissionProfile(preset=Preset(profile))
        except ValueError:
            names = ", ".join(p.value for p in Preset if p is not Preset.CUSTOM)
            raise InvalidAgent(f"profile must be one of {names}, not {profile!r}") from None
    try:
        return PermissionProfile.model_validate(profile)
    except ValidationError as exc:
        raise InvalidAgent(f"invalid permission profile: {exc.errors()[0]['msg']}") from None


def _overrides(data: dict[str, Any] | None) -> dict[str, Any]:
    if not data:
        return {}
    try:
        parsed = PlanModeOverrides.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise InvalidAgent(f"invalid plan_mode override {where}: {first['msg']}") from None
    stored: dict[str, Any] = {}
    for key, value in parsed.model_dump(exclude_none=True).items():
        if isinstance(value, timedelta):
            value = value.total_seconds()
        elif isinstance(value, tuple):
            value = list(value)
        elif isinstance(value, dict):
            value = {k: str(v) for k, v in value.items()}
        stored[key] = value
    return stored
