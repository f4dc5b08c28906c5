"""The agent runtime: one tool loop per agent, every tool call through the gate.

A user message starts a turn (or joins the running one as an interjection). Each iteration
builds a request from the stored conversation and the regime, calls the model, and answers
every ``tool_use`` block of the reply together in one user message. A tool call is dispatched
only after ``plancord.core.gate.decide`` allowed it for the phase the store holds *now*, so
``enter_plan_mode`` takes effect for the very next call of the same turn. ``submit_plan`` ends
the turn; the runtime's plan events (a planning listener) resume the agent when a human
approves (or asks for changes), with a host message stating what changed.

The runtime talks to the outside only through the ``Notifier`` and ``ModelClient`` ports, so
Discord, a console or a test can drive it. ``AgentRuntime`` owns nothing itself: the app
(``plancord.app.build_runtime``, the one wiring place) builds its parts once, each given the
few collaborators it uses (the tool loop, the model requests, the dispatcher, the budget
guard, the restarts, the plan reviews, the results), registers the planning listeners in
their one order, and hands the parts here; the runtime's methods delegate to them.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from plancord.agent.budget import BudgetGuard
from plancord.agent.dispatch import ToolDispatch
from plancord.agent.execution.endings import ExecutionEndings
from plancord.agent.execution.results import ExecutionResults
from plancord.agent.home import AgentHomes
from plancord.agent.host_prompts import CONTINUE_PROMPT, HOST, RESUME_PROMPT
from plancord.agent.interruptions import TurnMarkers
from plancord.agent.loop import ToolLoop
from plancord.agent.plan_review.runs import PlanReviewRuns
from plancord.agent.requests import ModelRequests
from plancord.agent.restarts import Restarts
from plancord.agent.runtime_settings import RuntimeSettings
from plancord.agent.sessions import AgentSession, Elsewhere, Sessions
from plancord.agent.tools.base import ToolRegistry, ToolResult
from plancord.core.agents import AgentRecord
from plancord.core.errors import PlancordError
from plancord.core.planning import (
    Actor,
    EntrySource,
    Phase,
)
from plancord.core.ports import (
    ModelRequest,
    SettingsProvider,
)
from plancord.core.service import PlanningService
from plancord.storage.store import SqlStore

__all__ = [
    "CONTINUE_PROMPT",
    "RESUME_PROMPT",
    "AgentRuntime",
    "AgentSession",
    "Elsewhere",
    "RuntimeSettings",
]


class AgentRuntime:
    """Every agent's turns, as one face over the parts the app built for it."""

    def __init__(
        self,
        *,
        store: SqlStore,
        planning: PlanningService,
        plan_settings: SettingsProvider,
        registry: ToolRegistry,
        settings: RuntimeSettings,
        homes: AgentHomes,
        sessions: Sessions,
        markers: TurnMarkers,
        requests: ModelRequests,
        dispatcher: ToolDispatch,
        budget: BudgetGuard,
        loop: ToolLoop,
        restarts: Restarts,
        reviews: PlanReviewRuns,
        results: ExecutionResults,
        endings: ExecutionEndings,
    ) -> None:
        self.store = store
        self.planning = planning
        self.plan_settings = plan_settings
        self.registry = registry
        self.settings = settings
        self.homes = homes
        self.markers = markers
        self.requests = requests
        self.dispatcher = dispatcher
        self.budget = budget
        self.reviews = reviews
        self.results = results
        self.endings = endings
        self._sessions = sessions
        self._loop = loop
        self._restarts = restarts

    @property
    def turn_origin(self) -> Callable[[str, object], None] | None:
        """Told where a queued request's turn answers (``queue_elsewhere``) when it starts."""
        return self._loop.turn_origin

    @turn_origin.setter
    def turn_origin(self, listener: Callable[[str, object], None] | None) -> None:
        self._loop.turn_origin = listener

    # -- entry points ----------------------------------------------------------------------

    def session(self, agent: str) -> AgentSession:
        return self._sessions.get(agent)

    def workspace_of(self, agent: str) -> Path:
        return self.homes.of(agent).workspace

    def is_busy(self, agent: str) -> bool:
        return self.session(agent).busy

    def any_busy(self) -> bool:
        """Whether any agent has a turn running."""
        return self._sessions.any_busy()

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

        if session.claim([block], lambda blocks: self._loop.run(session, blocks, enter_default)):
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
            self._loop.start_elsewhere(session)

    async def start_planning(
        self,
        agent: str,
        task: str | None,
        author: Actor,
        *,
        actor: Actor | None = None,
        reason: str | None = None,
    ) -> bool:
        """``/plan start``: enter plan mode and set the agent to work; False if already planning.
        A scheduled run passes the scheduler as ``actor`` and its schedule as ``reason``:
        ``author``, the schedule's creator, is then the requester as if they had typed it."""
        outcome = await self.planning.enter(
            agent,
            source=EntrySource.USER,
            actor=actor or author,
            task=task,
            reason=reason or task,
            requested_by=author,
        )
        if not outcome.entered:
            return False
        session = self.session(agent)
        text = f"{author.name} asked you to plan" + (f": {task}" if task else " the next task.")
        block = {"type": "text", "text": f"{HOST} {text}"}
        if session.claim([block], self._loop.turn(session)):
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
            try:
                await asyncio.shield(session.task)
            except asyncio.CancelledError:
                # The loop's own cancellation ends its wait; the waiter's (a Ctrl-C, a
                # shutdown) is passed on, never swallowed.
                current = asyncio.current_task()
                if current is not None and current.cancelling():
                    raise

    # -- the parts' public faces ------------------------------------------------------------

    async def dispatch(self, session: AgentSession, call: dict[str, Any]) -> ToolResult:
        """Run one tool call through the gate (``ToolDispatch.dispatch``)."""
        return await self.dispatcher.dispatch(session, call)

    async def tool_schemas(self, agent: str) -> list[dict[str, Any]]:
        return await self.requests.tool_schemas(agent)

    async def build_request(self, agent: str, record: AgentRecord | None = None) -> ModelRequest:
        return await self.requests.build_request(agent, record)

    async def compact(
        self, agent: str, record: AgentRecord | None = None, *, keep_fraction: float | None = None
    ) -> bool:
        return await self.requests.compact(agent, record, keep_fraction=keep_fraction)

    async def shutdown(self, *, notice: bool = False, grace_seconds: float = 10.0) -> None:
        """Stop every running turn; see ``Restarts.shutdown``."""
        await self._restarts.shutdown(notice=notice, grace_seconds=grace_seconds)
        await self.reviews.close()
        await self.results.close()

    async def _serves(self, agent: str) -> bool:
        try:
            return self.settings.shards.owns(await self.store.get_agent(agent))
        except PlancordError:
            return False

    async def resume_interrupted(self) -> list[str]:
        """Resume the turns a stop cut short (``Restarts.resume_interrupted``) and the plan
        reviews it cut short (``PlanReviewRuns.resume``)."""
        await self.endings.settle(self._serves)
        resumed = await self._restarts.resume_interrupted()
        waiting = []
        for state in await self.store.list_states():
            if state.phase is Phase.SUBMITTED:
                with contextlib.suppress(PlancordError):
                    if self.settings.shards.owns(await self.store.get_agent(state.agent)):
                        waiting.append(state)
        await self.reviews.resume(waiting)
        return resumed
