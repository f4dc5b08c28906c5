"""The sections of the config file: plan-mode overrides (global, per agent, per channel), the
agents and channels, Discord, the Anthropic API, the shell and the sandbox."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    field_validator,
    model_validator,
)

from plancord.config.fields import (
    _MODEL_CONFIG,
    AGENT_ROLES,
    ConfigPath,
    NonNegativeInt,
    PositiveInt,
    PositiveSeconds,
    Snowflake,
    _none_is_empty,
    _not_empty,
    _suggestion,
)
from plancord.config.mcp import McpServers
from plancord.config.plan_mode_layer import PlanModeOverrides
from plancord.config.read_only_rules import ReadOnlyRuleConfig
from plancord.config.shards import ShardShare
from plancord.core.cost import Price
from plancord.core.network import NetworkBound, host_pattern_problem, normal_host
from plancord.core.sandbox_policy import LayerChoice, Limits, SandboxSettings
from plancord.core.shell.readonly.operator_rules import OperatorRule
from plancord.core.shell.readonly.rule_examples import check_examples

Effort = Literal["low", "medium", "high", "xhigh", "max"]
"""``output_config.effort`` (sdk types/output_config_param.py). Whether a model takes the
value is the model table's to say (``llm/thinking.py`` maps it, ``plancord doctor`` reports
it): the config sits below ``llm`` and does not read that table."""


class NetworkAllow(BaseModel):
    """``network: {allow: [...]}``: the hosts any plan of the agent may name for a step;
    the network is then granted step by step through the proxy, and nothing else leaves."""

    model_config = _MODEL_CONFIG

    allow: list[str] = []

    @field_validator("allow")
    @classmethod
    def _hosts(cls, value: list[str]) -> list[str]:
        problems = [p for p in (host_pattern_problem(host) for host in value) if p is not None]
        if problems:
            raise ValueError("; ".join(problems))
        return list(dict.fromkeys(normal_host(host) for host in value))


class AgentConfig(BaseModel):
    """Per-agent defaults from the file; agents are also created at runtime through Discord."""

    model_config = _MODEL_CONFIG

    role: str | None = None
    model: str | None = None
    network: bool | NetworkAllow = False
    """``true``: the host's network while executing, anything; ``{allow: [...]}``: only
    hosts an approved plan's current step names, within that list; ``false``: none."""
    thinking: bool | None = None
    effort: Effort | None = None
    plan_mode: PlanModeOverrides = PlanModeOverrides()
    mcp_servers: McpServers = {}

    @field_validator("network", mode="before")
    @classmethod
    def _network_bool(cls, value: Any) -> Any:
        if not isinstance(value, bool | Mapping):
            raise ValueError("network is true, false or {allow: [host, ...]}")
        return value

    @property
    def network_bound(self) -> NetworkBound:
        """What plans of this agent may ask of the network."""
        if isinstance(self.network, NetworkAllow):
            return NetworkBound(allow=tuple(self.network.allow))
        return NetworkBound(anything=self.network)

    @field_validator("role", mode="before")
    @classmethod
    def _known_role(cls, value: Any) -> Any:
        if not isinstance(value, str):
            return value
        role = value.strip().lower()
        if role not in AGENT_ROLES:
            raise ValueError(
                f"{value!r} is not a role{_suggestion(role, AGENT_ROLES)}"
                f" (roles: {', '.join(AGENT_ROLES)}; leave it out for none)"
            )
        return role

    @field_validator("model", mode="before")
    @classmethod
    def _model_not_empty(cls, value: Any) -> Any:
        return _not_empty(value)

    @field_validator("plan_mode", mode="before")
    @classmethod
    def _plan_mode_none(cls, value: Any) -> Any:
        return _none_is_empty(value)


class ChannelConfig(BaseModel):
    """Overrides for one Discord channel; they win over every other layer."""

    model_config = _MODEL_CONFIG

    plan_mode: PlanModeOverrides = PlanModeOverrides()

    @field_validator("plan_mode", mode="before")
    @classmethod
    def _plan_mode_none(cls, value: Any) -> Any:
        return _none_is_empty(value)


class DiscordConfig(BaseModel):
    """The Discord side. ``shard_count`` and ``shard_ids`` split one application over several
    processes: each serves its shards' guilds and runs their agents (``config.shards``)."""

    model_config = _MODEL_CONFIG

    dev_guild_id: Snowflake | None = None
    admin_role_ids: list[Snowflake] = []
    shard_count: PositiveInt | None = None
    shard_ids: list[NonNegativeInt] | None = None

    @model_validator(mode="after")
    def _shards(self) -> DiscordConfig:
        if self.shard_ids is not None:
            if self.shard_count is None:
                raise ValueError("shard_ids needs shard_count (the application's total)")
            if not self.shard_ids:
                raise ValueError("shard_ids must name at least one shard")
            if len(set(self.shard_ids)) != len(self.shard_ids):
                raise ValueError("shard_ids lists a shard twice")
            outside = [i for i in self.shard_ids if i >= self.shard_count]
            if outside:
                raise ValueError(
                    f"shard id {outside[0]} is outside 0..{self.shard_count - 1} "
                    f"(shard_count is {self.shard_count})"
                )
        return self

    @property
    def sharded(self) -> bool:
        return self.shard_count is not None

    def share(self) -> ShardShare:
        """The shards this process serves: every one unless ``shard_ids`` says otherwise."""
        count = self.shard_count or 1
        ids = self.shard_ids if self.shard_ids is not None else range(count)
        return ShardShare(count, frozenset(ids))


class AnthropicConfig(BaseModel):
    model_config = _MODEL_CONFIG

    base_url: str | None = None
    model: str = "claude-sonnet-5-5"
    max_tokens: PositiveInt = 8192
    max_iterations: PositiveInt = 50
    max_retries: NonNegativeInt = 2
    timeout_seconds: PositiveSeconds = 600
    max_concurrent_requests: PositiveInt = 16
    context_window_tokens: PositiveInt = 200_000
    thinking: bool | None = None
    """Unset: the model's default (5.x models think); see ``agent/agent_settings.py``."""
    thinking_budget_tokens: PositiveInt = 4096
    effort: Effort | None = None
    """``output_config.effort``; unset: the model's default."""
    prices: dict[str, Price] = {}

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("http://", "https://")):
            raise ValueError(f"{value!r} is not a URL; it starts with http:// or https://")
        return value

    @field_validator("model", mode="before")
    @classmethod
    def _model_not_empty(cls, value: Any) -> Any:
        return _not_empty(value)


class ShellConfig(BaseModel):
    model_config = _MODEL_CONFIG

    timeout_seconds: PositiveSeconds = 60
    max_output_bytes: PositiveInt = 100_000
    read_only_rules: list[ReadOnlyRuleConfig] = []

    @model_validator(mode="after")
    def _rules_keep_their_examples(self) -> ShellConfig:
        failure = check_examples(self.operator_rules)
        if failure is not None:
            raise ValueError(f"read_only_rules: {failure}")
        return self

    @property
    def operator_rules(self) -> tuple[OperatorRule, ...]:
        return tuple(rule.rule() for rule in self.read_only_rules)


_MIB = 1024 * 1024


class SandboxConfig(BaseModel):
    """Where agent processes run: the layer, and the limits of each command.

    ``layer: auto`` uses bubblewrap, or the Landlock fallback where bubblewrap cannot start;
    naming a layer requires it; ``off`` runs agent commands without a sandbox (the operator
    accepts that an agent can then reach everything the bot can).
    """

    model_config = _MODEL_CONFIG

    layer: LayerChoice = LayerChoice.AUTO
    memory_mb: PositiveInt = 2048
    processes: PositiveInt = 256
    file_size_mb: PositiveInt = 1024
    cpu_seconds: PositiveInt = 600
    tmp_mb: PositiveInt = 512
    shared_paths: list[ConfigPath] = []

    @field_validator("shared_paths")
    @classmethod
    def _absolute(cls, value: list[Path]) -> list[Path]:
        for path in value:
            if not path.expanduser().is_absolute():
                raise ValueError(f"{str(path)!r} is not an absolute path")
        return [path.expanduser() for path in value]

    def settings(
        self,
        network_agents: frozenset[str],
        *,
        plan_network: frozenset[str] = frozenset(),
        proxy_dir: Path | None = None,
    ) -> SandboxSettings:
        limits = Limits(
            memory_bytes=self.memory_mb * _MIB,
            processes=self.processes,
            file_size_bytes=self.file_size_mb * _MIB,
            cpu_seconds=self.cpu_seconds,
            tmp_bytes=self.tmp_mb * _MIB,
        )
        return SandboxSettings(
            layer=self.layer,
            limits=limits,
            network_agents=network_agents,
            plan_network=plan_network,
            proxy_dir=proxy_dir,
            shared=tuple(path.resolve() for path in self.shared_paths),
        )
