"""What every part of the runtime writes into an agent's conversation, and what it tells the
agent's channel: user content merged into the unanswered tail (never into a message the
model already answered), assistant replies exactly as they came, the host's instructions
appended (``plancord.agent.instructions``), messages that joined a turn, and a channel line
whose failure is only logged."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from plancord.agent.instructions import Placement, merge_user, place
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
        """Append to the conversation as user content: merged into the newest user message
        while the model has not answered it, else a new user message."""
        if not blocks:
            return
        history = await self._conversations.load(agent)
        await self._write(agent, len(history), merge_user(history, blocks))

    async def add_instruction(
        self, agent: str, blocks: list[dict[str, Any]], *, system_messages: bool
    ) -> bool:
        """Append the host's instruction where the conversation can take it now (see
        ``instructions.place``); False when it must wait for the next user message."""
        history = await self._conversations.load(agent)
        placement = place(history, blocks, system_messages=system_messages)
        if placement is None:
            return False
        await self._write(agent, len(history), placement)
        return True

    async def _write(self, agent: str, length: int, placement: Placement) -> None:
        if placement.start == length and len(placement.tail) == 1:
            await self._conversations.append(agent, placement.tail[0], self._clock.now())
        else:
            await self._conversations.replace_tail(
                agent, placement.start, placement.tail, self._clock.now()
            )

    async def add_assistant(self, agent: str, content: list[dict[str, Any]]) -> None:
        """Keep a reply exactly as the API returned it, thinking blocks (empty ones too) and
        their signatures untouched; only whitespace-only text, which the API refuses to be
        sent, is left out."""
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
