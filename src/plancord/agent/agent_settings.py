"""What the config file says about one agent, applied wherever the agent acts.

``agents.<name>.model``, ``.role`` and ``.thinking`` in the config win over what the agent
was created with, so an operator can change them by editing the file and restarting.
Thinking (extended thinking) is off unless the config turns it on, globally
(``anthropic.thinking``) or per agent; ``thinking_budget_tokens`` is what each reply may
spend thinking, and ``max_tokens`` is raised above it so the answer still has room.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

MIN_THINKING_BUDGET = 1024


@dataclass(frozen=True, slots=True)
class AgentOverrides:
    model: str | None = None
    role: str | None = None
    thinking: bool | None = None


@dataclass(frozen=True, slots=True)
class ThinkingSettings:
    enabled: bool = False
    budget_tokens: int = 4096

    def request_field(self, override: AgentOverrides | None) -> dict[str, Any] | None:
        """The request's ``thinking`` parameter for an agent, or None when it is off."""
        enabled = self.enabled
        if override is not None and override.thinking is not None:
            enabled = override.thinking
        if not enabled:
            return None
        return {"type": "enabled", "budget_tokens": max(MIN_THINKING_BUDGET, self.budget_tokens)}


def overrides_from(agents: Mapping[str, Any]) -> dict[str, AgentOverrides]:
    """The config's ``agents`` section (objects with ``model``, ``role``, ``thinking``)."""
    return {
        name: AgentOverrides(
            model=getattr(entry, "model", None),
            role=getattr(entry, "role", None),
            thinking=getattr(entry, "thinking", None),
        )
        for name, entry in agents.items()
    }
