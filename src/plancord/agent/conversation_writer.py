"""The edits every part of the runtime makes to an agent's conversation, and what it tells the
agent's channel: user content merged into a trailing user message, assistant replies without
empty text, messages that joined a turn, and a channel line whose failure is only logged."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from plancord.agent.sessions import AgentSession
from plancord.core.ports import Clock, Notifier
from plancord.storage.conversations import ConversationStore

log = logging.getLogger(__name__)


class ConversationWriter:
    def __init__(self, conversations: ConversationStore, notifier: Notifier, clock: Clock) -> None:
        self._conversations = conversations
        self._notifier = notifier
        self._clock = clock

    async def add_user_blocks(self, agent: str, blocks: list[dict[str, Any]]) -> None:
        """Append to the conversation as user content, merged into a trailing user message."""
        if not blocks:
            return
        history = await self._conversations.load(agent)
        if history and history[-1]["role"] == "user":
            last = history[-1]
            await self._conversations.replace_last(
                agent, {"role": "user", "content": [*last["content"], *blocks]}
            )
        else:
            await self._conversations.append(
                agent, {"role": "user", "content": list(blocks)}, self._clock.now()
            )

    async def add_assistant(self, agent: str, content: list[dict[str, Any]]) -> None:
        blocks = [b for b in content if b.get("type") != "text" or b.get("text", "").strip()]
        if blocks:
            await self._conversations.append(
                agent, {"role": "assistant", "content": blocks}, self._clock.now()
            )

    async def flush_inbox(self, session: AgentSession) -> None:
        """Write the messages that joined the running turn into the conversation."""
        joined = session.take_joining()
        if joined:
            await self.add_user_blocks(session.name, joined)

    async def say(self, agent: str, text: str) -> None:
        """Tell the agent's channel; a failure to deliver is logged, never raised."""
        try:
            await self._notifier.say(agent, text)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("agent %s: could not deliver a message", agent)
