"""The agent runtime's settings: a frozen value built once from the config (``app``), read by
every part of the runtime and never changed while it runs."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from plancord.agent.agent_settings import AgentOverrides, ThinkingSettings
from plancord.agent.tools.base import ShellSettings
from plancord.core.agents import AgentRecord
from plancord.core.cost import Price
from plancord.core.sandbox_policy import SandboxSettings
from plancord.core.serving import AgentShare, EveryAgent


@dataclass(frozen=True, slots=True)
class RuntimeSettings:
    max_tokens: int = 8192
    max_iterations: int = 50
    context_window_tokens: int = 200_000
    compact_at_fraction: float = 0.6
    keep_recent_fraction: float = 0.2
    shell: ShellSettings = field(default_factory=ShellSettings)
    sandbox: SandboxSettings = field(default_factory=SandboxSettings)
    ask_timeout_seconds: float = 600.0
    permission_timeout_seconds: float = 600.0
    default_model: str = "claude-sonnet-5-5"
    thinking: ThinkingSettings = field(default_factory=ThinkingSettings)
    agents: Mapping[str, AgentOverrides] = field(default_factory=dict)
    prices: Mapping[str, Price] = field(default_factory=dict)
    """Dollars per million tokens by model, for plan budgets (``anthropic.prices``)."""
    shards: AgentShare = field(default_factory=EveryAgent)
    """The guilds this process serves; only their agents' cut-short turns resume here."""

    def model_for(self, agent: str, record: AgentRecord) -> str:
        override = self.agents.get(agent)
        return (override and override.model) or record.model or self.default_model

    def role_for(self, agent: str, record: AgentRecord) -> str | None:
        override = self.agents.get(agent)
        return (override and override.role) or record.role
