"""The tool loop: one turn of one agent, from the user's message to the model's last answer.

Each iteration flushes the messages that joined the turn, asks the budget guard whether the
plan may go on, calls the model (``ModelRequests``), writes the reply into the conversation
and tells the channel, and answers every ``tool_use`` block of the reply together in one user
message through the dispatcher. After the turn it serves what arrived meanwhile: messages that
joined it, messages sent after a stop, then requests from elsewhere.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from plancord.agent.budget import BudgetGuard
from plancord.agent.comment_notes import CommentNotes
from plancord.agent.context import THINKING_TYPES
from plancord.agent.conversation_writer import ConversationWriter
from plancord.agent.dispatch import ToolDispatch
from plancord.agent.home import AgentHomes
from plancord.agent.host_prompts import (
    CONTINUE_PROMPT,
    EMPTY_REPLY_NUDGE,
    PREFIX_REPAIRED,
    RESUME_PROMPT,
)
from plancord.agent.interruptions import TurnMarkers
from plancord.agent.requests import ModelRequests
from plancord.agent.sessions import AgentSession
from plancord.agent.stop_reasons import NextStep, next_step, runs_tools
from plancord.agent.tools.base import ToolResult
from plancord.agent.turns import Block, TurnBody
from plancord.agent.workspace import WorkspaceMissing, require_workspace
from plancord.core.errors import (
    ModelCallFailed,
    PlancordError,
    StorageError,
    ToolResultsNotSaved,
)
from plancord.core.ports import Notifier
from plancord.llm.replies import words_of

log = logging.getLogger(__name__)


class ToolLoop:
    def __init__(
        self,
        *,
        writer: ConversationWriter,
        requests: ModelRequests,
        budget: BudgetGuard,
        dispatcher: ToolDispatch,
        notifier: Notifier,
        markers: TurnMarkers,
        homes: AgentHomes,
        max_iterations: int,
        notes: CommentNotes | None = None,
    ) -> None:
        self._notes = notes
        self._writer = writer
        self._requests = requests
        self._budget = budget
        self._dispatcher = dispatcher
        self._notifier = notifier
        self._markers = markers
        self._homes = homes
        self._max_iterations = max_iterations
        self.shutting_down = False
        """Set by a shutdown: cancelled turns then start nothing after them."""
        self.turn_origin: Callable[[str, object], None] | None = None
        """Told where a queued request's turn answers (``queue_elsewhere``) when it starts."""

    def turn(self, session: AgentSession) -> TurnBody:
        """The body of a turn for ``session``, to claim or start its slot with."""
        return lambda blocks: self.run(session, blocks)

    def start_elsewhere(self, session: AgentSession) -> bool:
        """Start the first waiting request from elsewhere (with the ones from the same place
        right behind it) as a turn; False when none waits."""
        if not session.elsewhere:
            return False
        first = session.elsewhere.pop(0)
        blocks = list(first.blocks)
        while session.elsewhere and session.elsewhere[0].origin == first.origin:
            blocks += session.elsewhere.pop(0).blocks
        if self.turn_origin is not None:
            self.turn_origin(session.name, first.origin)
        session.requester = first.requester
        session.interactive = first.interactive
        session.start(blocks, self.turn(session))
        return True

    async def run(
        self,
        session: AgentSession,
        blocks: list[Block],
        prepare: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        """One turn: ``prepare`` (if any), the blocks into the conversation, then the loop.
        Every failure ends up as a line in the channel; nothing escapes."""
        agent = session.name
        writer = self._writer
        self._markers.mark(agent)
        try:
            await require_workspace(self._homes.of(agent).workspace)
            if prepare is not None:
                await prepare()
            if self._notes is not None:
                blocks = [*blocks, *await self._notes.for_turn(agent)]
            await writer.add_user_blocks(agent, blocks)
            await self._loop(session)
        except WorkspaceMissing as exc:
            with contextlib.suppress(PlancordError):
                await writer.add_user_blocks(agent, blocks)
            await writer.say(agent, f"⚠️ {exc} Your message is kept.")
        except ModelCallFailed as exc:
            await writer.say(agent, f"⚠️ {exc} Your message is kept; send another to retry.")
        except PlancordError as exc:
            await writer.say(agent, f"⚠️ {exc}")
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("agent %s: the tool loop failed", agent)
            await writer.say(agent, "⚠️ Something went wrong inside plancord; the error is logged.")
        finally:
            if not self.shutting_down:
                await self._follow_up(session)
                if session.task is asyncio.current_task():
                    self._markers.clear(agent)

    async def _follow_up(self, session: AgentSession) -> None:
        """After a turn: serve what arrived during it. Requests that joined a turn that was
        stopped stay in the conversation only; requests sent after the stop get a new turn."""
        if session.stop_requested:
            joined = session.take_joining()
            if joined:
                with contextlib.suppress(PlancordError):
                    await self._writer.add_user_blocks(session.name, joined)
            waiting = session.take_after_stop()
        else:
            waiting = session.take_joining() + session.take_after_stop()
        if waiting:
            session.start(waiting, self.turn(session))
        elif not session.stop_requested:
            self.start_elsewhere(session)

    async def _loop(self, session: AgentSession) -> None:
        agent = session.name
        continued = nudged = False

        async def repaired() -> None:
            await self._writer.say(agent, PREFIX_REPAIRED)

        for _ in range(self._max_iterations):
            if session.stop_requested:
                await self._writer.say(agent, "Stopped.")
                return
            await self._writer.flush_inbox(session)
            if await self._budget.stops(agent):
                return
            after_results = await self._requests.answers_tool_results(agent)
            reply = await self._requests.call(agent, on_repair=repaired)
            step = next_step(reply.stop_reason)
            content = list(reply.content)
            if not runs_tools(step):
                content = [b for b in content if b.get("type") != "tool_use"]
            tool_uses = [b for b in content if b.get("type") == "tool_use"]
            truncated = step in (NextStep.CONTINUE_TRUNCATED, NextStep.COMPACT_AND_CONTINUE)
            if truncated and not _has_visible(content):
                # Cut off while thinking: an assistant turn of nothing but an unfinished
                # thought cannot be continued and must not be kept.
                await self._writer.say(
                    agent,
                    "(The model used its whole output budget before answering; raise "
                    "anthropic.max_tokens or turn thinking off for this agent.)",
                )
                return
            await self._writer.add_assistant(agent, content)
            text = words_of(content)
            if text:
                await self._writer.say(agent, text)
            if step is NextStep.REFUSED:
                await self._writer.say(agent, refusal_line(reply.stop_details))
                return
            empty_after_results = after_results or nudged
            if step is NextStep.ANSWERED and empty_after_results and not _has_visible(content):
                # An empty end_turn right after tool results: nudged once, then said.
                if nudged:
                    await self._writer.say(
                        agent,
                        "(The model ended its turn without a word after the tool results; "
                        "send a message to continue.)",
                    )
                    return
                nudged = True
                await self._requests.add_instruction(agent, EMPTY_REPLY_NUDGE)
                continue
            if step is NextStep.UNKNOWN:
                await self._writer.say(
                    agent,
                    f"(The model stopped for a reason plancord does not know: "
                    f"{reply.stop_reason!r}; send a message to continue.)",
                )
                return
            if step is NextStep.RESUME_PAUSED:
                await self._writer.add_user_blocks(agent, [{"type": "text", "text": RESUME_PROMPT}])
                continue
            if truncated:
                if continued:
                    await self._writer.say(agent, "(The reply was cut off at the token limit.)")
                    return
                continued = True
                if step is NextStep.COMPACT_AND_CONTINUE:
                    await self._requests.compact(agent)
                await self._writer.add_user_blocks(
                    agent, [{"type": "text", "text": CONTINUE_PROMPT}]
                )
                continue
            if step is NextStep.ANSWERED or not tool_uses:
                return
            submitted = await self._run_tools(session, tool_uses)
            if submitted or session.stop_requested:
                if session.stop_requested:
                    await self._writer.say(agent, "Stopped.")
                return
        await self._writer.say(
            agent,
            f"Stopped after {self._max_iterations} model calls in one turn; "
            "send a message to continue.",
        )

    async def _run_tools(self, session: AgentSession, calls: Sequence[dict[str, Any]]) -> bool:
        """Answer a reply's tool calls in one user message; True if a plan was submitted."""
        results: list[dict[str, Any]] = []
        summary: list[str] = []
        submitted = False
        for call in calls:
            if session.stop_requested:
                result = ToolResult.error("Not run: the user stopped the agent.")
                self._dispatcher.stopped(session, call)
            else:
                result = await self._dispatcher.dispatch(session, call)
            results.append(
                {
                    "type": "tool_result",
                    "tool_use_id": call["id"],
                    "content": result.content or "(no output)",
                    **({"is_error": True} if result.is_error else {}),
                }
            )
            summary.append(("✗ " if result.is_error else "") + _call_label(call))
            if call.get("name") == "submit_plan" and not result.is_error:
                submitted = True
        with contextlib.suppress(Exception):
            await self._notifier.activity(session.name, " · ".join(summary))
        try:
            await self._writer.add_user_blocks(session.name, results)
        except StorageError as exc:
            # The tools have run: their effects are real even though the database refused
            # the record of them, so "nothing was changed" would be false here.
            raise ToolResultsNotSaved(" · ".join(summary), exc) from exc
        return submitted


def _call_label(call: dict[str, Any]) -> str:
    args = call.get("input") or {}
    hint = ""
    if isinstance(args, dict):
        for key in ("path", "command", "pattern", "message", "reason", "question", "ref"):
            value = args.get(key)
            if isinstance(value, str) and value:
                hint = value if len(value) <= 40 else value[:39] + "…"
                break
    return f"{call.get('name')}({hint})" if hint else str(call.get("name"))


def refusal_line(details: dict[str, Any] | None) -> str:
    """What the channel is told of a ``refusal``: the API's category and explanation."""
    line = "The model declined to continue with this request"
    if details:
        category = details.get("category")
        explanation = details.get("explanation")
        if category:
            line += f" ({category})"
        if explanation:
            line += f": {explanation}"
    return line.rstrip(".") + "."


def _has_visible(content: list[dict[str, Any]]) -> bool:
    """Whether a reply holds anything but thinking: text or a tool call."""
    return any(b.get("type") not in THINKING_TYPES for b in content)
