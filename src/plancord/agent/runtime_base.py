"""What every part of the agent runtime shares: its settings, the live session of each agent,
the services the runtime holds, and the conversation edits every part makes."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from plancord.agent.agent_settings import AgentOverrides, ThinkingSettings
from plancord.agent.tools.base import ShellSettings, ToolRegistry
from plancord.agent.turns import Block, TurnBody, TurnSlot
from plancord.core.agents import AgentRecord
from plancord.core.cost import Price
from plancord.core.planning import (
    Actor,
)
from plancord.core.ports import (
    Clock,
    ModelClient,
    Notifier,
    SettingsProvider,
)
from plancord.core.service import PlanningService
from plancord.core.shards import ShardShare
from plancord.core.shell.sandbox.policy import SandboxSettings
from plancord.storage.conversations import ConversationStore
from plancord.storage.store import SqlStore

log = logging.getLogger(__name__)

HOST = "[plancord]"
CONTINUE_PROMPT = (
    f"{HOST} Your previous reply was cut off at the output token limit. "
    "Continue exactly where you stopped."
)
MIN_ANSWER_TOKENS = 1024
RESUME_PROMPT = f"{HOST} Continue."
SUMMARY_PROMPT = (
    "Summarise the conversation below so an agent can continue the work without it: the task, "
    "decisions taken, files read or changed and what they contain that matters, open questions, "
    "and the current state. Be concise and concrete."
)


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
    shards: ShardShare = field(default_factory=ShardShare)
    """The guilds this process serves; only their agents' cut-short turns resume here."""

    def model_for(self, agent: str, record: AgentRecord) -> str:
        override = self.agents.get(agent)
        return (override and override.model) or record.model or self.default_model

    def role_for(self, agent: str, record: AgentRecord) -> str | None:
        override = self.agents.get(agent)
        return (override and override.role) or record.role


@dataclass(slots=True)
class Elsewhere:
    """A request that arrived from another place (a thread) while a turn ran there: it gets
    a turn of its own afterwards, answered where it was asked."""

    blocks: list[Block]
    requester: Actor
    origin: object
    interactive: bool = True


@dataclass(slots=True)
class AgentSession(TurnSlot):
    """The live side of one agent: its turn slot and who the running turn serves. The
    requester is fixed when a turn starts; later messages that join it do not change it."""

    requester: Actor | None = None
    interactive: bool = True
    elsewhere: list[Elsewhere] = field(default_factory=list)


class RuntimeBase:
    """The services and state the runtime's parts share (``AgentRuntime`` sets them)."""

    store: SqlStore
    conversations: ConversationStore
    planning: PlanningService
    plan_settings: SettingsProvider
    notifier: Notifier
    model: ModelClient
    registry: ToolRegistry
    agents_dir: Path
    clock: Clock
    settings: RuntimeSettings

    def session(self, agent: str) -> AgentSession:
        raise NotImplementedError  # AgentRuntime keeps the sessions

    def _turn(self, session: AgentSession) -> TurnBody:
        raise NotImplementedError  # AgentRuntime runs the turns

    def workspace_of(self, agent: str) -> Path:
        return self.agents_dir / agent / "workspace"

    # -- conversation edits ----------------------------------------------------------------

    async def _add_user_blocks(self, agent: str, blocks: list[dict[str, Any]]) -> None:
        """Append to the conversation as user content, merged into a trailing user message."""
        if not blocks:
            return
        history = await self.conversations.load(agent)
        if history and history[-1]["role"] == "user":
            last = history[-1]
            await self.conversations.replace_last(
                agent, {"role": "user", "content": [*last["content"], *blocks]}
            )
        else:
            await self.conversations.append(
                agent, {"role": "user", "content": list(blocks)}, self.clock.now()
            )

    async def _add_assistant(self, agent: str, content: list[dict[str, Any]]) -> None:
        blocks = [b for b in content if b.get("type") != "text" or b.get("text", "").strip()]
        if blocks:
            await self.conversations.append(
                agent, {"role": "assistant", "content": blocks}, self.clock.now()
            )

    async def _flush_inbox(self, session: AgentSession) -> None:
        joined = session.take_joining()
        if joined:
            await self._add_user_blocks(session.name, joined)

    async def _say(self, agent: str, text: str) -> None:
        try:
            await self.notifier.say(agent, text)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("agent %s: could not deliver a message", agent)


def _has_visible(content: list[dict[str, Any]]) -> bool:
    """Whether a reply holds anything but thinking: text or a tool call."""
    return any(b.get("type") not in ("thinking", "redacted_thinking") for b in content)
