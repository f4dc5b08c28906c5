"""Creating, listing, describing and removing agents, and resolving their plan-mode settings.

An agent is a database row plus a git workspace at ``<data_dir>/agents/<name>/workspace``.
Removing an agent deletes its row, planning state and conversation but keeps the workspace on
disk and the audit log in the database: nobody loses work by removing a bot.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from plancord.agent.agent_settings import AgentOverrides
from plancord.agent.workspace import init_workspace
from plancord.config import Config, PlanModeOverrides
from plancord.core.agents import AgentRecord, check_agent_name
from plancord.core.errors import PlancordError
from plancord.core.permissions import PermissionProfile, Preset
from plancord.core.planning import Actor, AuditEntry, PlanningState
from plancord.core.ports import Clock
from plancord.core.settings import PlanModeSettings
from plancord.storage.store import SqliteStore

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
        store: SqliteStore,
        agents_dir: Path,
        default_model: str,
        clock: Clock,
        overrides: Mapping[str, AgentOverrides] | None = None,
    ) -> None:
        self.overrides = dict(overrides or {})
        self.store = store
        self.agents_dir = agents_dir
        self.default_model = default_model
        self.clock = clock

    def workspace_of(self, name: str) -> Path:
        return self.agents_dir / name / "workspace"

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
    ) -> AgentRecord:
        """Validate everything first, then write the row, then make the workspace."""
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
            action="agent-created",
            detail={"model": record.model, "channel_id": channel_id, "profile": permission.preset},
        )
        await self.store.create_agent(record, audit)
        await init_workspace(self.workspace_of(name), name)
        return record

    async def remove(self, name: str, *, actor: Actor) -> Path:
        """Delete the agent; returns the workspace path, which is kept."""
        await self.store.get_agent(name)
        audit = AuditEntry(
            at=self.clock.now(), agent=name, actor=actor.label, action="agent-removed"
        )
        await self.store.delete_agent(name, audit)
        return self.workspace_of(name)

    async def list(self) -> list[AgentRecord]:
        return await self.store.list_agents()

    async def describe(self, name: str, settings: PlanModeSettings) -> AgentDescription:
        record = await self.store.get_agent(name)
        state = await self.store.load_state(name)
        return AgentDescription(record, state, self.workspace_of(name), settings)

    async def by_channel(self, channel_id: int) -> AgentRecord | None:
        return await self.store.find_agent_by_channel(channel_id)


class StoredSettings:
    """``SettingsProvider`` over the config file and each agent's stored overrides."""

    def __init__(self, config: Config, store: SqliteStore) -> None:
        self.config = config
        self.store = store

    async def plan_mode_for(self, agent: str) -> PlanModeSettings:
        record = await self.store.get_agent(agent)
        overrides = PlanModeOverrides.model_validate(record.plan_mode_overrides)
        return self.config.plan_mode_for(agent, record.channel_id, overrides)


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
