"""One turn per agent at a time, by construction.

Discord delivers messages concurrently: two messages for one agent can reach the runtime in
the same millisecond. If "is a turn running?" were answered by something set only after an
``await`` (a database read, entering plan mode), both messages would see "no" and two tool
loops would run one conversation, running tools twice and leaving tool calls unanswered.

``TurnSlot`` is the per-agent answer. ``claim`` is synchronous: it either starts the turn's
task at once, before the caller awaits anything, or hands the message to the running turn.
What it hands over goes to one of two queues:

- ``joining``: requests for the running turn, added to the conversation before its next
  model call (an interjection) or, if the turn ends first, served by a follow-up turn;
- ``after_stop``: requests that arrived after someone asked the running turn to stop. The
  stop applies to the work already under way, not to what the user asked for next, so
  these are served by a new turn once the stopped one has ended.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

Block = dict[str, Any]
TurnBody = Callable[[list[Block]], Coroutine[Any, Any, None]]


@dataclass(slots=True)
class TurnSlot:
    """The running turn of one agent and the requests waiting for it."""

    name: str
    task: asyncio.Task[None] | None = None
    joining: list[Block] = field(default_factory=list)
    after_stop: list[Block] = field(default_factory=list)
    stop_requested: bool = False

    @property
    def busy(self) -> bool:
        return self.task is not None and not self.task.done()

    def claim(self, blocks: list[Block], body: TurnBody) -> bool:
        """Start a turn running ``body(blocks)``, or queue ``blocks`` for the running one.

        True when a new turn started. Never awaits, so two callers can never both start one.
        """
        if self.busy:
            (self.after_stop if self.stop_requested else self.joining).extend(blocks)
            return False
        self.start(blocks, body)
        return True

    def start(self, blocks: list[Block], body: TurnBody) -> None:
        self.stop_requested = False
        self.task = asyncio.create_task(body(blocks), name=f"plancord-agent-{self.name}")

    def request_stop(self) -> bool:
        """Ask the running turn to stop between steps; False when none is running."""
        if not self.busy:
            return False
        self.stop_requested = True
        return True

    def take_joining(self) -> list[Block]:
        taken, self.joining = self.joining, []
        return taken

    def take_after_stop(self) -> list[Block]:
        taken, self.after_stop = self.after_stop, []
        return taken
