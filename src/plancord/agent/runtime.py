"""The agent runtime: one tool loop per agent, every tool call through the gate.

A user message starts a turn (or joins the running one as an interjection). Each iteration
builds a request from the stored conversation and the regime, calls the model, and answers
every ``tool_use`` block of the reply together in one user message. A tool call is dispatched
only after ``plancord.core.gate.decide`` allowed it for the phase the store holds *now*, so
``enter_plan_mode`` takes effect for the very next call of the same turn. ``submit_plan`` ends
the turn; the runtime listens to the planning service and resumes the agent when a human
approves (or asks for changes), with a host message stating what changed.

The runtime talks to the outside only through the ``Notifier`` and ``ModelClient`` ports, so
Discord, a console or a test can drive it. ``AgentRuntime`` owns little itself: it builds its
parts once, each given the few collaborators it uses (the tool loop, the model requests, the
dispatcher, the budget guard, the plan-event reactions, the restarts, the conversation
writer), and its methods delegate to them.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from plancord.agent.budget import BudgetGuard, PlanBudget
from plancord.agent.conversation_writer import ConversationWriter
from plancord.agent.dispatch import ToolDispatch
from plancord.agent.execution.endings import ExecutionEndings
from plancord.agent.execution.host import ExecutionHost
from plancord.agent.execution.results import ExecutionResults
from plancord.agent.execution.steps import StepKeeper
from plancord.agent.home import AgentHomes
from plancord.agent.host_prompts import CONTINUE_PROMPT, HOST, RESUME_PROMPT
from plancord.agent.interruptions import TurnMarkers
from plancord.agent.loop import ToolLoop
from plancord.agent.plan_events import PlanEvents
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
    Clock,
    ModelClient,
    ModelRequest,
    Notifier,
    SettingsProvider,
)
from plancord.core.results import ResultListener
from plancord.core.review_gate import ReviewListener
from plancord.core.service import PlanningService
from plancord.storage.conversations import ConversationStore
from plancord.storage.executions import ExecutionStore
from plancord.storage.plan_reviews import PlanReviewStore
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
        requests: ModelRequests | None = None,
    ) -> None:
        """Build the runtime's parts over the given services; ``requests`` replaces the
        request builder (a benchmark compares other ways of building requests)."""
        self.store = store
        self.conversations = conversations
        self.planning = planning
        self.plan_settings = plan_settings
        self.notifier = notifier
        self.model = model
        self.registry = registry
        self.agents_dir = agents_dir
        self.clock = clock
        self.settings = settings = settings or RuntimeSettings()
        self.homes = homes = AgentHomes(agents_dir, settings.sandbox)
        self.markers = TurnMarkers(agents_dir)
        self._sessions = Sessions()
        writer = ConversationWriter(conversations, notifier, clock)
        self.requests = requests or ModelRequests(
            store=store,
            conversations=conversations,
            planning=planning,
            plan_settings=plan_settings,
            model=model,
            registry=registry,
            clock=clock,
            settings=settings,
        )
        executions = ExecutionStore(store.db)
        steps = StepKeeper(
            executions=executions,
            notifier=notifier,
            clock=clock,
            homes=homes,
        )
        self.host = ExecutionHost(
            executions=executions,
            audit=store,
            steps=steps,
            notifier=notifier,
            clock=clock,
            homes=homes,
        )
        self.dispatcher = ToolDispatch(
            store=store,
            planning=planning,
            plan_settings=plan_settings,
            notifier=notifier,
            registry=registry,
            homes=homes,
            clock=clock,
            settings=settings,
            host=self.host,
        )
        self.plan_budget = PlanBudget(
            plan_settings=plan_settings,
            planning=planning,
            conversations=conversations,
            clock=clock,
            prices=settings.prices,
        )
        self.budget = BudgetGuard(budget=self.plan_budget, planning=planning, writer=writer)
        self._loop = ToolLoop(
            writer=writer,
            requests=self.requests,
            budget=self.budget,
            dispatcher=self.dispatcher,
            notifier=notifier,
            markers=self.markers,
            homes=homes,
            max_iterations=settings.max_iterations,
        )
        self._restarts = Restarts(
            sessions=self._sessions,
            loop=self._loop,
            writer=writer,
            markers=self.markers,
            store=store,
            shards=settings.shards,
            executions=executions,
            planning=planning,
        )
        self.reviews = PlanReviewRuns(
            store=store,
            reviews=PlanReviewStore(store.db),
            conversations=conversations,
            plan_settings=plan_settings,
            model=model,
            clock=clock,
            agent_model=self._model_of,
            listeners=[notifier] if isinstance(notifier, ReviewListener) else [],
            budget=self.plan_budget,
        )
        planning.add_notifier(self.reviews)
        planning.add_notifier(steps)
        # After the step keeper, which ends the execution record this reads.
        self.results = ExecutionResults(
            executions=executions,
            store=store,
            plan_settings=plan_settings,
            members=planning.members,
            clock=clock,
            agents_dir=agents_dir,
            sandbox=settings.sandbox,
            reviews=self.reviews,
        )
        if isinstance(notifier, ResultListener):
            self.results.add_listener(notifier)
        planning.add_notifier(self.results)
        self.endings = ExecutionEndings(
            executions=executions, store=store, steps=steps, results=self.results
        )
        planning.add_notifier(
            PlanEvents(
                sessions=self._sessions,
                loop=self._loop,
                writer=writer,
                conversations=conversations,
                store=store,
                clock=clock,
            )
        )

    @property
    def turn_origin(self) -> Callable[[str, object], None] | None:
        """Told where a queued request's turn answers (``queue_elsewhere``) when it starts."""
        return self._loop.turn_origin

    @turn_origin.setter
    def turn_origin(self, listener: Callable[[str, object], None] | None) -> None:
        self._loop.turn_origin = listener

    async def _model_of(self, agent: str) -> str:
        return self.settings.model_for(agent, await self.store.get_agent(agent))

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
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.shield(session.task)

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
