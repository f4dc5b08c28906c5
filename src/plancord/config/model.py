"""``Config``, the whole validated file with its layered plan-mode settings, and ``Secrets``,
which come from the environment (or ``*_FILE`` files) and never from the file."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import urlsplit

from pydantic import (
    BaseModel,
    Field,
    SecretStr,
    ValidationInfo,
    WrapValidator,
    field_validator,
    model_validator,
)

from plancord.config.call_rules import RulesConfig
from plancord.config.database_url import POSTGRES_SCHEMES, redact
from plancord.config.explore import ExploreConfig
from plancord.config.fields import (
    _ENV_FIELDS,
    _MODEL_CONFIG,
    LOG_LEVELS,
    AgentName,
    ConfigError,
    ConfigPath,
    Snowflake,
    _none_is_empty,
    _one_of,
)
from plancord.config.mcp import McpServerConfig, McpServers
from plancord.config.metrics import MetricsConfig
from plancord.config.plan_mode_layer import PlanModeOverrides, global_plan_mode
from plancord.config.schedules import SchedulesConfig
from plancord.config.sections import (
    AgentConfig,
    AnthropicConfig,
    ChannelConfig,
    DiscordConfig,
    SandboxConfig,
    ShellConfig,
)
from plancord.core.network import NetworkBound
from plancord.core.process_names import process_tag
from plancord.core.sandbox_policy import SandboxSettings
from plancord.core.settings import (
    PlanModeSettings,
)


class Config(BaseModel):
    """The whole file, validated; relative paths are already resolved against its folder."""

    model_config = _MODEL_CONFIG

    data_dir: ConfigPath = Field(default=Path("data"), validate_default=True)
    database: Path | str | None = None
    workspace_roots: list[ConfigPath] = []
    log_level: str = "INFO"
    discord: DiscordConfig = Field(default_factory=DiscordConfig)
    anthropic: AnthropicConfig = Field(default_factory=AnthropicConfig)
    shell: ShellConfig = Field(default_factory=ShellConfig)
    sandbox: SandboxConfig = Field(default_factory=SandboxConfig)
    plan_mode: Annotated[PlanModeSettings, WrapValidator(global_plan_mode)] = Field(
        default_factory=PlanModeSettings
    )
    agents: dict[AgentName, AgentConfig] = {}
    channels: dict[Snowflake, ChannelConfig] = {}
    mcp_servers: McpServers = {}
    explore: ExploreConfig = Field(default_factory=ExploreConfig)
    metrics: MetricsConfig = Field(default_factory=MetricsConfig)
    schedules: SchedulesConfig = Field(default_factory=SchedulesConfig)
    rules: RulesConfig = Field(default_factory=RulesConfig)

    @field_validator(
        "discord",
        "anthropic",
        "shell",
        "sandbox",
        "plan_mode",
        "agents",
        "channels",
        "mcp_servers",
        "explore",
        "rules",
        mode="before",
    )
    @classmethod
    def _section_none(cls, value: Any) -> Any:
        return _none_is_empty(value)

    @field_validator("agents", "channels", mode="before")
    @classmethod
    def _entry_none(cls, value: Any) -> Any:
        if isinstance(value, Mapping):
            return {key: _none_is_empty(entry) for key, entry in value.items()}
        return value

    @field_validator("workspace_roots")
    @classmethod
    def _resolve_roots(cls, value: list[Path], info: ValidationInfo) -> list[Path]:
        base_dir = info.context.get("base_dir") if isinstance(info.context, dict) else None
        if base_dir is None:
            return [v.expanduser() for v in value]
        return [Path(base_dir) / v.expanduser() for v in value]

    @field_validator("database", mode="before")
    @classmethod
    def _database(cls, value: Any) -> Any:
        """A ``postgresql://`` URL stays text; anything else is a SQLite file's path."""
        if isinstance(value, str) and value.strip().startswith(POSTGRES_SCHEMES):
            url = value.strip()
            if not urlsplit(url).hostname and "host=" not in url:
                raise ValueError(f"{redact(url)} names no host; use postgresql://USER@HOST/DB")
            return url
        if value is None or isinstance(value, Path):
            return value
        if not isinstance(value, str) or not value.strip():
            raise ValueError("must be a file path or a postgresql:// URL")
        return Path(value)

    @field_validator("data_dir", "database")
    @classmethod
    def _resolve(cls, value: Path | str | None, info: ValidationInfo) -> Path | str | None:
        if value is None or isinstance(value, str):
            return value
        base_dir = info.context.get("base_dir") if isinstance(info.context, dict) else None
        return value.expanduser() if base_dir is None else Path(base_dir) / value.expanduser()

    @model_validator(mode="after")
    def _shards_share_postgres(self) -> Config:
        """Processes that split the shards share one store; a SQLite file cannot be that."""
        if not self.discord.share().everything and not isinstance(self.database, str):
            raise ValueError(
                "discord.shard_ids gives this process only some shards; the processes must "
                "share a PostgreSQL database (database: postgresql://…)"
            )
        return self

    @model_validator(mode="after")
    def _required_reviews_have_an_approver(self) -> Config:
        """``review.require_review`` asks that no plan runs unreviewed; with
        ``require_approval: false`` nobody approves, so nothing is reviewed and the setting
        would be ignored without a word. Each layer the file can combine is checked."""
        places: list[tuple[str, str | None, int | None]] = [("plan_mode", None, None)]
        places += [(f"agents.{name}", name, None) for name in self.agents]
        places += [(f"channels.{cid}", None, cid) for cid in self.channels]
        places += [
            (f"agents.{name} in channels.{cid}", name, cid)
            for name in self.agents
            for cid in self.channels
        ]
        for where, agent, channel in places:
            settings = self.plan_mode_for(agent, channel)
            review = settings.review
            if review is not None and review.require_review and not settings.require_approval:
                raise ValueError(
                    f"{where}: review.require_review is true but require_approval is false: "
                    "nobody approves, so no plan is reviewed and the required review would "
                    "be ignored; set require_approval: true or remove require_review"
                )
        return self

    @model_validator(mode="after")
    def _shared_paths_hide_the_host(self) -> Config:
        """A shared directory is shown to every agent's sandbox; one that holds the data
        directory, the database file or a workspace root (or lies inside one) would show
        the database, the host's private folders and other agents' workspaces."""
        private = [("data_dir", self.data_dir)]
        if self.database_path is not None:
            private.append(("database", self.database_path))
        private += [("workspace_roots", root) for root in self.workspace_roots]
        for shared in self.sandbox.shared_paths:
            seen = shared.resolve()
            for setting, path in private:
                place = path.resolve()
                if seen == place or seen in place.parents or place in seen.parents:
                    raise ValueError(
                        f"sandbox.shared_paths: {str(shared)!r} overlaps {setting} "
                        f"({str(path)!r}); every agent would see the host's private files "
                        "or other agents' workspaces. Share a directory apart from them"
                    )
        return self

    @field_validator("log_level", mode="before")
    @classmethod
    def _known_level(cls, value: Any) -> Any:
        if not isinstance(value, str):
            return value
        level = value.strip().upper()
        if level not in LOG_LEVELS:
            raise ValueError(f"{value!r} is not a log level; use {_one_of(LOG_LEVELS)}")
        return level

    @property
    def agents_dir(self) -> Path:
        """The agents folder: each agent's home (its workspace and the host's private
        folders beside it), under the data directory."""
        return self.data_dir / "agents"

    @property
    def database_target(self) -> Path | str:
        """A PostgreSQL URL, or the SQLite file: ``database``, else ``data_dir/plancord.db``."""
        return self.database if self.database is not None else self.data_dir / "plancord.db"

    @property
    def database_path(self) -> Path | None:
        """The SQLite file, or None when the database is PostgreSQL."""
        target = self.database_target
        return target if isinstance(target, Path) else None

    @property
    def database_label(self) -> str:
        """The database for messages: the file, or the URL without its password."""
        target = self.database_target
        return str(target) if isinstance(target, Path) else redact(target)

    def plan_mode_for(
        self,
        agent: str | None = None,
        channel_id: int | None = None,
        agent_overrides: PlanModeOverrides | None = None,
    ) -> PlanModeSettings:
        """The settings for one agent in one channel, later layers winning field by field.

        Layers: global < the file's ``agents[agent]`` < ``agent_overrides`` (stored per agent
        in the database at runtime) < the file's ``channels[channel_id]``.
        """
        layers: list[PlanModeOverrides] = []
        if agent is not None and agent in self.agents:
            layers.append(self.agents[agent].plan_mode)
        if agent_overrides is not None:
            layers.append(agent_overrides)
        if channel_id is not None and channel_id in self.channels:
            layers.append(self.channels[channel_id].plan_mode)
        settings = self.plan_mode
        for layer in layers:
            settings = layer.apply_to(settings)
        return settings

    @property
    def sandbox_settings(self) -> SandboxSettings:
        """The sandbox settings, with the agents the file allows the network (executing only)."""
        bounds = {name: agent.network_bound for name, agent in self.agents.items()}
        return self.sandbox.settings(
            frozenset(name for name, bound in bounds.items() if bound.anything),
            plan_network=frozenset(name for name, bound in bounds.items() if bound.by_plan),
            proxy_dir=self.data_dir / "network" / process_tag(),
        )

    def network_bound(self, agent: str) -> NetworkBound:
        """What ``agent``'s plans may ask of the network (none for an agent not in the file)."""
        entry = self.agents.get(agent)
        return entry.network_bound if entry is not None else NetworkBound()

    def mcp_servers_for(self, agent: str) -> dict[str, McpServerConfig]:
        """The MCP servers ``agent`` uses: the global ones, with the agent's own (which win
        by name) added."""
        entry = self.agents.get(agent)
        return {**self.mcp_servers, **(entry.mcp_servers if entry is not None else {})}

    def agent_role(self, agent: str) -> str | None:
        """The role the file gives ``agent``, or ``None`` when it gives none."""
        entry = self.agents.get(agent)
        return entry.role if entry is not None else None


class Secrets(BaseModel):
    """Tokens from the environment; their values never appear in repr, str or dumps."""

    model_config = _MODEL_CONFIG

    discord_token: SecretStr | None = None
    anthropic_api_key: SecretStr | None = None

    @classmethod
    def from_env(cls, environ: Mapping[str, str] = os.environ) -> Secrets:
        """Read ``DISCORD_TOKEN`` and ``ANTHROPIC_API_KEY``; blank values count as unset.

        ``NAME_FILE`` (the Docker secrets convention) names a file holding the value
        instead; setting both is a ConfigError, and so is a file that cannot be read or is
        empty.
        """
        values: dict[str, str | None] = {}
        for env_name, field in _ENV_FIELDS.items():
            raw = environ.get(env_name, "").strip()
            file_name = environ.get(f"{env_name}_FILE", "").strip()
            if raw and file_name:
                raise ConfigError(
                    f"both {env_name} and {env_name}_FILE are set; keep one", key=env_name
                )
            if file_name:
                try:
                    raw = Path(file_name).read_text(encoding="utf-8").strip()
                except (OSError, UnicodeDecodeError) as exc:
                    problem = getattr(exc, "strerror", None) or str(exc)
                    raise ConfigError(
                        f"{env_name}_FILE: cannot read {file_name}: {problem}",
                        key=f"{env_name}_FILE",
                    ) from None
                if not raw:
                    raise ConfigError(
                        f"{env_name}_FILE: {file_name} is empty; put the secret in it",
                        key=f"{env_name}_FILE",
                    )
            values[field] = raw or None
        return cls.model_validate(values)

    @staticmethod
    def environment_names() -> list[str]:
        """Every variable a secret may come from, ``_FILE`` forms included."""
        return [name for env in _ENV_FIELDS for name in (env, f"{env}_FILE")]

    def require(self, *names: str) -> None:
        """Raise one ``ConfigError`` naming every one of ``names`` (default: all) that is unset
        or blank, so a newcomer exports them all at once.

        Names are the environment variables: ``DISCORD_TOKEN``, ``ANTHROPIC_API_KEY``.
        """
        missing: list[str] = []
        for name in names or tuple(_ENV_FIELDS):
            field = _ENV_FIELDS.get(name.upper())
            if field is None:
                raise ValueError(f"unknown secret {name!r}; known: {', '.join(_ENV_FIELDS)}")
            secret: SecretStr | None = getattr(self, field)
            if secret is None or not secret.get_secret_value().strip():
                missing.append(name.upper())
        if len(missing) == 1:
            raise ConfigError(f"{missing[0]} is not set; export it and run again", key=missing[0])
        if missing:
            raise ConfigError(
                f"{', '.join(missing[:-1])} and {missing[-1]} are not set; export them and run "
                "again",
                key=missing[0],
            )


_KeyPath = tuple[str, ...]
