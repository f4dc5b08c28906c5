"""The agent runtime: one tool loop per agent, every tool call through the gate.

A user message starts a turn (or joins the running one as an interjection). Each iteration
builds a request from the stored conversation and the regime, calls the model, and answers
every ``tool_use`` block of the reply together in one user message. A tool call is dispatched
only after ``plancord.core.gate.decide`` allowed it for the phase the store holds *now*, so
``enter_plan_mode`` takes effect for the very next call of the same turn. ``submit_plan`` ends
the turn; the runtime listens to the planning service and resumes the agent when a human
approves (or asks for changes), with a host message stating what changed.

The runtime talks to the outside only through the ``Notifier`` and ``ModelClient`` ports, so
Discord, a console or a test can drive it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from plancord.agent.budget import BudgetGuard
from plancord.agent.context import (
    text_of,
)
from plancord.agent.dispatch import ToolDispatch
from plancord.agent.interruptions import TurnMarkers
from plancord.agent.plan_events import PlanEvents
from plancord.agent.requests import ModelRequests
from plancord.agent.restarts import Restarts
from plancord.agent.runtime_base import (
    CONTINUE_PROMPT,
    HOST,
    RESUME_PROMPT,
    AgentSession,
    Elsewhere,
    RuntimeSettings,
    _has_visible,
)
from plancord.agent.stop_reasons import NextStep, next_step, runs_tools
from plancord.agent.tools.base import ToolRegistry, ToolResult
from plancord.agent.turns import Block, TurnBody
from plancord.agent.workspace import WorkspaceMissing, require_workspace
from plancord.core.errors import (
    ModelCallFailed,
    PlancordError,
    StorageError,
    ToolResultsNotSaved,
)
from plancord.core.planning import (
    Actor,
    EntrySource,
    Phase,
)
from plancord.core.ports import (
    Clock,
    ModelClient,
    Notifier,
    SettingsProvider,
)
from plancord.core.service import PlanningService
from plancord.storage.conversations import ConversationStore
from plancord.storage.store import SqlStore

__all__ = [
    "CONTINUE_PROMPT",
    "RESUME_PROMPT",
    "AgentRuntime",
    "AgentSession",
    "Elsewhere",
    "RuntimeSettings",
]

log = logging.getLogger(__name__)


class AgentRuntime(ToolDispatch, ModelRequests, BudgetGuard, PlanEvents, Restarts):
    def __init__(
        self,
        *,
        store: SqlStore,
        conversations: ConversationStore,
        planning: PlanningService,
        plan_settings: SettingsProvider,
        notifier: Notifier,
        model: ModelClient,
        registry: ToolRegistry,
        agents_dir: Path,
        clock: Clock,
        settings: RuntimeSettings | None = None,
    ) -> None:
        self.store = store
        self.conversations = conversations
        self.planning = planning
        self.plan_settings = plan_settings
        self.notifier = notifier
        self.model = model
        self.registry = registry
        self.agents_dir = agents_dir
        self.clock = clock
        self.settings = settings or RuntimeSettings()
        self._sessions: dict[str, AgentSession] = {}
        self.markers = TurnMarkers(agents_dir)
        self._shutting_down = False
        self.turn_origin: Callable[[str, object], None] | None = None
        """Told where a queued request's turn answers (``queue_elsewhere``) when it starts."""
        planning.add_notifier(self)

    # -- entry points ----------------------------------------------------------------------

    def session(self, agent: str) -> AgentSession:
        return self._sessions.setdefault(agent, AgentSession(agent))

    def is_busy(self, agent: str) -> bool:
        return self.session(agent).busy

    def any_busy(self) -> bool:
        """Whether any agent has a turn running."""
        return any(session.busy for session in self._sessions.values())

    async def handle_message(
        self, agent: str, text: str, author: Actor, *, interactive: bool = True
    ) -> None:
        """A human wrote to the agent: start a turn, or join the running one.

        The turn is claimed before anything is awaited, so messages arriving together
        start one loop, and the later ones join it (see ``plancord.agent.turns``).
        """
        session = self.session(agent)
        block = {"type": "text", "text": f"{author.name}: {text}"}

        async def enter_default() -> None:
            state = await self.store.load_state(agent)
            if state.phase is Phase.INACTIVE:
                record = await self.store.get_agent(agent)
                await self.planning.enter_default(
                    agent,
                    self.settings.role_for(agent, record),
                    task=text,
                    requested_by=author,
                    interactive=interactive,
                )

        if session.claim([block], lambda blocks: self._run(session, blocks, enter_default)):
            session.requester = author
            session.interactive = interactive

    def queue_elsewhere(
        self, agent: str, text: str, author: Actor, origin: object, *, interactive: bool = True
    ) -> None:
        """A message from another place than the running turn's: it does not join that turn
        (whose output stays where it started) but gets the next turn, answered at ``origin``
        (``turn_origin`` is told when it starts)."""
        block = {"type": "text", "text": f"{author.name}: {text}"}
        session = self.session(agent)
        session.elsewhere.append(Elsewhere([block], author, origin, interactive))
        if not session.busy:
            self._start_elsewhere(session)

    def _start_elsewhere(self, session: AgentSession) -> bool:
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
        session.start(blocks, self._turn(session))
        return True

    async def start_planning(self, agent: str, task: str | None, author: Actor) -> bool:
        """``/plan start``: enter plan mode and set the agent to work; False if already planning."""
        outcome = await self.planning.enter(
            agent, source=EntrySource.USER, actor=author, task=task, reason=task
        )
        if not outcome.entered:
            return False
        session = self.session(agent)
        text = f"{author.name} asked you to plan" + (f": {task}" if task else " the next task.")
        block = {"type": "text", "text": f"{HOST} {text}"}
        if session.claim([block], self._turn(session)):
            session.requester = author
            session.interactive = True
        return True

    async def stop(self, agent: str) -> bool:
        """End the running loop cleanly between tool calls. False when nothing was running."""
        return self.session(agent).request_stop()

    async def wait_idle(self, agent: str) -> None:
        """Wait until the agent's loop (and any loop it chains into) has finished."""
        session = self.session(agent)
        while session.task is not None and not session.task.done():
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.shield(session.task)

    # -- the loop --------------------------------------------------------------------------

    def _turn(self, session: AgentSession) -> TurnBody:
        return lambda blocks: self._run(session, blocks)

    async def _run(
        self,
        session: AgentSession,
        blocks: list[Block],
        prepare: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        agent = session.name
        self.markers.mark(agent)
        try:
            await require_workspace(self.workspace_of(agent))
            if prepare is not None:
                await prepare()
            await self._add_user_blocks(agent, blocks)
            await self._loop(session)
        except WorkspaceMissing as exc:
            with contextlib.suppress(PlancordError):
                await self._add_user_blocks(agent, blocks)
            await self._say(agent, f"⚠️ {exc} Your message is kept.")
        except ModelCallFailed as exc:
            await self._say(agent, f"⚠️ {exc} Your message is kept; send another to retry.")
        except PlancordError as exc:
            await self._say(agent, f"⚠️ {exc}")
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("agent %s: the tool loop failed", agent)
            await self._say(agent, "⚠️ Something went wrong inside plancord; the error is logged.")
        finally:
            if not self._shutting_down:
                await self._follow_up(session)
                if session.task is asyncio.current_task():
                    self.markers.clear(agent)

    async def _follow_up(self, session: AgentSession) -> None:
        """After a turn: serve what arrived during it. Requests that joined a turn that was
        stopped stay in the conversation only; requests sent after the stop get a new turn."""
        if session.stop_requested:
            joined = session.take_joining()
            if joined:
                with contextlib.suppress(PlancordError):
                    await self._add_user_blocks(session.name, joined)
            waiting = session.take_after_stop()
        else:
            waiting = session.take_joining() + session.take_after_stop()
        if waiting:
            session.start(waiting, self._turn(session))
        elif not session.stop_requested:
            self._start_elsewhere(session)

    async def _loop(self, session: AgentSession) -> None:
        agent = session.name
        continued = False
        for _ in range(self.settings.max_iterations):
            if session.stop_requested:
                await self._say(agent, "Stopped.")
                return
            await self._flush_inbox(session)
            if await self._budget_stops(agent):
                return
            reply = await self._call_model(agent)
            step = next_step(reply.stop_reason)
            content = list(reply.content)
            if not runs_tools(step):
                content = [b for b in content if b.get("type") != "tool_use"]
            tool_uses = [b for b in content if b.get("type") == "tool_use"]
            truncated = step in (NextStep.CONTINUE_TRUNCATED, NextStep.COMPACT_AND_CONTINUE)
            if truncated and not _has_visible(content):
                # Cut off while thinking: an assistant turn of nothing but an unfinished
                # thought cannot be continued and must not be kept.
                await self._say(
                    agent,
                    "(The model used its whole output budget before answering; raise "
                    "anthropic.max_tokens or turn thinking off for this agent.)",
                )
                return
            await self._add_assistant(agent, content)
            text = text_of(content)
            if text:
                await self._say(agent, text)
            if step is NextStep.REFUSED:
                await self._say(agent, "The model declined to continue with this request.")
                return
            if step is NextStep.UNKNOWN:
                await self._say(
                    agent,
                    f"(The model stopped for a reason plancord does not know: "
                    f"{reply.stop_reason!r}; send a message to continue.)",
                )
                return
            if step is NextStep.RESUME_PAUSED:
                await self._add_user_blocks(agent, [{"type": "text", "text": RESUME_PROMPT}])
                continue
            if truncated:
                if continued:
                    await self._say(agent, "(The reply was cut off at the token limit.)")
                    return
                continued = True
                if step is NextStep.COMPACT_AND_CONTINUE:
                    await self.compact(agent)
                await self._add_user_blocks(agent, [{"type": "text", "text": CONTINUE_PROMPT}])
                continue
            if step is NextStep.ANSWERED or not tool_uses:
                return
            submitted = await self._run_tools(session, tool_uses)
            if submitted or session.stop_requested:
                if session.stop_requested:
                    await self._say(agent, "Stopped.")
                return
        await self._say(
            agent,
            f"Stopped after {self.settings.max_iterations} model calls in one turn; "
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
            else:
                result = await self.dispatch(session, call)
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
            await self.notifier.activity(session.name, " · ".join(summary))
        try:
            await self._add_user_blocks(session.name, results)
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
