"""What the config file says about one agent, applied wherever the agent acts.

``agents.<name>.model``, ``.role``, ``.thinking`` and ``.effort`` in the config win over what
the agent was created with (and over ``anthropic.thinking`` / ``anthropic.effort``), so an
operator can change them by editing the file and restarting.

``thinking`` is a wish, spelt per model by ``llm/thinking.py``: unset means the model's own
default (Sonnet 5.5 and the other 5.x models think adaptively; 4.x models do not think),
``true`` thinks (``adaptive``, or ``enabled`` with ``thinking_budget_tokens`` on models that
only have extended thinking), ``false`` is the least thinking the model allows (``disabled``,
or ``between_tools`` on Sonnet 5.5; a model that always thinks keeps thinking). ``effort`` is
``output_config.effort``, sent to models that take it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from plancord.llm.thinking import ThinkingFields, thinking_fields


@dataclass(frozen=True, slots=True)
class AgentOverrides:
    model: str | None = None
    role: str | None = None
    thinking: bool | None = None
    effort: str | None = None


@dataclass(frozen=True, slots=True)
class ThinkingSettings:
    enabled: bool | None = None
    """``anthropic.thinking``: None for the model's default."""
    budget_tokens: int = 4096
    effort: str | None = None
    """``anthropic.effort``: None for the model's default."""

    def request_fields(
        self,
        model: str,
        override: AgentOverrides | None,
        *,
        drop_mismatched_thinking: bool = False,
        conversation_effort: str | None = None,
    ) -> ThinkingFields:
        """The request's ``thinking``, ``output_config`` and betas for an agent on ``model``;
        ``drop_mismatched_thinking`` adds ``block_binding.prefix_mismatch_behavior:
        "drop_block"`` and its beta where the request thinks adaptively.

        ``conversation_effort``, the effort the conversation's earlier requests were sent
        with, wins over the configured one: Sonnet 5.5 refuses an effort change in the middle
        of a ``between_tools`` conversation (whats-new-sonnet-5-5), so a config edited
        between two turns must not change it."""
        enabled = self.enabled
        effort = self.effort
        if override is not None:
            enabled = override.thinking if override.thinking is not None else enabled
            effort = override.effort or effort
        effort = conversation_effort or effort
        return thinking_fields(
            model,
            thinking=enabled,
            effort=effort,
            budget_tokens=self.budget_tokens,
            drop_mismatched_thinking=drop_mismatched_thinking,
        )


def overrides_from(agents: Mapping[str, Any]) -> dict[str, AgentOverrides]:
    """The config's ``agents`` section (objects with ``model``, ``role``, ``thinking``,
    ``effort``)."""
    return {
        name: AgentOverrides(
            model=getattr(entry, "model", None),
            role=getattr(entry, "role", None),
            thinking=getattr(entry, "thinking", None),
            effort=getattr(entry, "effort", None),
        )
        for name, entry in agents.items()
    }
