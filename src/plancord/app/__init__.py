"""Wiring: build every service of a running plancord from the config, and close them again.

The Discord bot, the operator CLI and the demo all start from ``App.open``. Front ends pass
their ``Notifier`` (the Discord edge, a console, a test recorder) and, in tests, a clock and a
model client of their own.

This package is the one place the collaborators are built, each once, and handed to the
parts that use them: ``services.core_services`` (the store, the settings, the planning
service, the executions store, the agents' homes and the kept reviews over one database),
``runtime_parts.build_runtime`` (the agent runtime's parts, which the runtime is given rather
than builds) and ``lifecycle.PlanLifecycle`` (who hears a planning change, in the one order
stated there). The tests and the benchmarks build the runtime through ``build_runtime`` too,
so they run what production runs. The Discord edge reaches what it needs through ``App``'s
named members (``results``, ``executions``, the stores of plan answers, reviews, messages and
asks), never the database itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from plancord.agent.agent_settings import overrides_from
from plancord.agent.call_log import CallLog
from plancord.agent.execution.lease import ProcessLease
from plancord.agent.execution.network import NetworkGate
from plancord.agent.execution.network_asks import NetworkCalls
from plancord.agent.execution.results import ExecutionResults
from plancord.agent.execution.starter import BranchStarter
from plancord.agent.manager import AgentManager, StoredSettings
from plancord.agent.mcp import McpHub
from plancord.agent.owed import OwedDuties
from plancord.agent.remembered_rules import RememberedRules
from plancord.agent.runtime import AgentRuntime
from plancord.agent.subagents import ExploreLimits, SubAgents
from plancord.agent.tools import default_tools
from plancord.agent.tools.base import ToolRegistry
from plancord.app.lifecycle import PlanLifecycle
from plancord.app.remote_changes import RemoteChanges
from plancord.app.runtime_parts import build_runtime, plan_budget, plan_comments, runtime_settings
from plancord.app.scheduled_starts import AgentStarts, schedule_owner
from plancord.app.services import CoreServices, core_services
from plancord.config import Config
from plancord.core.ask_authority import AskAuthority
from plancord.core.asks.agent_side import AskingNotifier
from plancord.core.asks.service import AskService
from plancord.core.errors import AgentNotFound, PlancordError
from plancord.core.front_end_audit import FrontEndAudit
from plancord.core.instructions import Instructions
from plancord.core.plan_comments import PlanComments
from plancord.core.plan_picks import PlanPicks
from plancord.core.planning import Phase
from plancord.core.ports import (
    Clock,
    FrontEnd,
    MemberDirectory,
    ModelClient,
    Notifier,
    SystemClock,
)
from plancord.core.schedule_loop import ScheduleLoop
from plancord.core.schedule_runs import ScheduleRunner
from plancord.core.scheduler import DeadlineScheduler
from plancord.core.schedules import ScheduleBook
from plancord.core.service import PlanningService
from plancord.metrics import MetricsEndpoint, PlancordCollector
from plancord.sandbox.proxy import NetworkProxy
from plancord.storage.backend import Backend
from plancord.storage.changes import ChangeFeed
from plancord.storage.conversations import ConversationStore
from plancord.storage.engines import open_database
from plancord.storage.executions import ExecutionStore
from plancord.storage.pending_asks import PendingAskStore
from plancord.storage.plan_answers import PlanAnswerStore
from plancord.storage.plan_messages import PlanMessageStore
from plancord.storage.plan_reviews import PlanReviewStore
from plancord.storage.schedules import SqlScheduleStore
from plancord.storage.store import SqlStore

__all__ = [
    "App",
    "CoreServices",
    "MetricsUnavailable",
    "PlanLifecycle",
    "build_runtime",
    "core_services",
    "plan_budget",
    "runtime_settings",
]


log = logging.getLogger(__name__)


class MetricsUnavailable(PlancordError):
    """The metrics endpoint is on but its address cannot be bound."""


@dataclass
class App:
    """Everything a running plancord is made of, built once by ``open``. The Discord edge
    (and the demo, and the CLI) reach what they need through these named members."""

    config: Config
    db: Backend
    store: SqlStore
    conversations: ConversationStore
    settings: StoredSettings
    planning: PlanningService
    runtime: AgentRuntime
    manager: AgentManager
    scheduler: DeadlineScheduler
    model: ModelClient
    clock: Clock
    mcp: McpHub
    branches: BranchStarter | None
    """The starts of approved plans' branches (``core_services``)."""
    lease: ProcessLease | None
    """This process's lease on the store, owning every intent it opens (``core_services``)."""
    executions: ExecutionStore
    """Each approved plan's execution, its result and where its completion card is."""
    results: ExecutionResults
    """The results of executed plans and the one way a human decides them."""
    plan_reviews: PlanReviewStore
    """The kept reviews of plans and results."""
    plan_answers: PlanAnswerStore
    """The reviewers' picks for a plan's questions with choices."""
    plan_comments: PlanComments
    """The members' comments on plans and their steps."""
    plan_messages: PlanMessageStore
    """Where each plan's messages live and what they show."""
    pending_asks: PendingAskStore
    """The questions and permission asks an agent waits on."""
    ask_service: AskService
    """The asks themselves: opened, waited on, answered, expired (``core.asks``)."""
    schedules: ScheduleBook
    """Scheduled plans: made, listed and changed as the authority allows."""
    schedule_runs: ScheduleRunner
    """Fires the schedules' runs, each once across processes."""
    schedule_loop: ScheduleLoop
    """Wakes at the next run; the bot starts it."""
    metrics: MetricsEndpoint | None = None
    """The Prometheus endpoint, when ``metrics.enabled``."""
    network: NetworkProxy | None = None
    """The network proxy, when some agent's network is granted by the plan."""
    network_gate: NetworkGate | None = None
    recovering: asyncio.Task[None] | None = None
    """The recovery tried again once the leases it found live can have expired."""
    call_rules: RememberedRules | None = None
    """Remembered rules for tool calls (``core_services``)."""
    call_log: CallLog | None = None
    """Every tool call's decision record (``core_services``)."""
    changes: RemoteChanges | None = None
    """The decisions other processes make, followed and acted on here (the bot starts
    it)."""
    owed: OwedDuties | None = None
    """The writes owed until they land (``core_services``); the bot starts its retrier."""

    @property
    def asks(self) -> AskAuthority:
        """The authority on clicks on asks (permission requests, drift, checkpoints,
        questions), reading this app's store and settings."""
        return self.ask_service.authority

    @cached_property
    def plan_picks(self) -> PlanPicks:
        """A pick in a plan question's menu, judged and kept with its audit row."""
        return PlanPicks(self.asks, self.store, self.plan_answers, self.clock)

    @cached_property
    def instructions(self) -> Instructions:
        """Who may instruct an agent (a message, ``/plan start``): one judgement, audited."""
        return Instructions(self.store, self.settings, self.clock)

    @cached_property
    def front_end_audit(self) -> FrontEndAudit:
        """What a front end reports that the audit log keeps (a card posted again)."""
        return FrontEndAudit(self.store, self.clock)

    @property
    def agents_dir(self) -> Path:
        return self.config.agents_dir

    async def recover_interrupted(self) -> None:
        """Undo or finish what a crash interrupted, before the cards are restored: the
        approvals whose branch was started but not recorded (the plan waits again), then
        the decisions on results; each channel is told what happened."""
        await self._recover_once()
        if self.lease is not None and await self._left_open():
            # A process killed a moment ago gives no lease up: its intents wait for its
            # lease to expire, then this process takes them (a click may take them first).
            self.recovering = asyncio.create_task(self._recover_later(self.lease.seconds))

    async def _recover_once(self) -> None:
        if self.branches is not None:
            await self.branches.recover(self.serves)
        await self.results.recover(self.serves)

    async def _left_open(self) -> bool:
        starts = self.branches is not None and await self.branches.intents.store.open_intents()
        return bool(starts) or await self.results.left_open()

    async def _recover_later(self, seconds: float) -> None:
        for _ in range(3):
            await asyncio.sleep(seconds)
            try:
                await self._recover_once()
                if not await self._left_open():
                    return
            except PlancordError:
                log.warning("the recovery after a lease expired failed", exc_info=True)

    async def serves(self, agent: str) -> bool:
        """Whether this process runs ``agent``: its guild is on one of our shards. An agent
        that no longer exists is nobody's, so every process may tidy up after it."""
        try:
            record = await self.store.get_agent(agent)
        except AgentNotFound:
            return True
        return self.runtime.settings.shards.owns(record)

    @classmethod
    async def open(
        cls,
        config: Config,
        *,
        notifier: FrontEnd,
        model: ModelClient,
        members: MemberDirectory | None = None,
        clock: Clock | None = None,
        scheduler_max_sleep: float = 60.0,
    ) -> App:
        """Open (and migrate) the database and build the services around it."""
        clock = clock or SystemClock()
        db = await open_database(config.database_target)
        core = core_services(config, db, clock, members, notifier.say)
        store, conversations, settings, planning = (
            core.store,
            core.conversations,
            core.settings,
            core.planning,
        )
        agents_dir = config.agents_dir

        async def phase_of(agent: str) -> Phase:
            return (await store.load_state(agent)).phase

        mcp = McpHub(config.mcp_servers_for, agents_dir, config.sandbox_settings, phase_of=phase_of)
        runtime_options = runtime_settings(config)
        budget = plan_budget(core, clock, runtime_options)
        explore = config.explore
        subagents = SubAgents(
            model=model,
            conversations=conversations,
            clock=clock,
            model_for=runtime_options.model_for,
            limits=ExploreLimits(
                model=explore.model,
                max_calls=explore.max_calls,
                max_tokens=explore.max_tokens,
                timeout_seconds=explore.timeout_seconds,
                concurrency=explore.concurrency,
            ),
            extensions=(mcp,),
            budget=budget,
        )
        registry = ToolRegistry(default_tools(), extensions=[mcp, subagents])
        subagents.bind(registry)
        pending_asks = PendingAskStore(db)
        ask_service = AskService(pending_asks, AskAuthority(store, settings, clock), clock)
        # The agent's asks are the core's; the front end only shows them.
        asking = AskingNotifier(notifier, ask_service)
        runtime = build_runtime(
            core,
            notifier=asking,
            front_end=notifier,
            model=model,
            registry=registry,
            clock=clock,
            settings=runtime_options,
            budget=budget,
        )
        manager = AgentManager(
            store,
            agents_dir,
            config.anthropic.model,
            clock,
            overrides_from(config.agents),
            workspace_roots=config.workspace_roots,
            sandbox_layer=config.sandbox.layer,
        )
        manager.on_removed(mcp.stop)
        scheduler = DeadlineScheduler(planning, max_sleep=scheduler_max_sleep)
        schedule_store = SqlScheduleStore(db)
        shards = runtime_options.shards

        async def serves(agent: str) -> bool:
            try:
                return shards.owns(await store.get_agent(agent))
            except AgentNotFound:
                return False

        schedule_runs = ScheduleRunner(
            schedule_store,
            clock,
            AgentStarts(planning, runtime, core.executions, store),
            notifier.say,
            serves,
            schedule_owner(),
            config.schedules.run_settings(),
        )
        schedule_loop = ScheduleLoop(schedule_runs, clock, max_sleep=scheduler_max_sleep)
        schedules = ScheduleBook(
            schedule_store, clock, settings, store.get_agent, on_change=schedule_loop.wake
        )
        app = cls(
            config=config,
            db=db,
            store=store,
            conversations=conversations,
            settings=settings,
            planning=planning,
            runtime=runtime,
            manager=manager,
            scheduler=scheduler,
            model=model,
            clock=clock,
            mcp=mcp,
            branches=core.branches,
            lease=core.lease,
            executions=core.executions,
            results=runtime.results,
            plan_reviews=core.plan_reviews,
            plan_answers=PlanAnswerStore(db),
            plan_comments=plan_comments(store, settings, clock),
            plan_messages=PlanMessageStore(db),
            pending_asks=pending_asks,
            ask_service=ask_service,
            schedules=schedules,
            schedule_runs=schedule_runs,
            schedule_loop=schedule_loop,
            call_rules=core.call_rules,
            call_log=core.call_log,
            owed=core.owed,
        )
        app.changes = RemoteChanges(
            ChangeFeed(db),
            store,
            planning,
            app.serves,
            front_end=notifier,
            runtime=runtime,
            asks=ask_service,
        )
        if config.sandbox_settings.plan_network:
            await app._serve_network(asking, core.network_calls)
        if config.metrics.enabled:
            await app._serve_metrics()
        return app

    async def _serve_network(self, notifier: Notifier, calls: NetworkCalls) -> None:
        """Start the proxy with one socket per agent whose network the plan grants."""
        sandbox = self.config.sandbox_settings
        gate = NetworkGate(
            executions=self.executions,
            store=self.store,
            settings=self.settings,
            notifier=notifier,
            clock=self.clock,
            ask_timeout_seconds=self.runtime.settings.ask_timeout_seconds,
            calls=calls,
        )
        proxy = NetworkProxy(gate.decide, asyncio.get_running_loop(), recheck=gate.recheck)
        self.network, self.network_gate = proxy, gate
        for agent in sorted(sandbox.plan_network):
            path = sandbox.proxy_socket(agent)
            if path is not None:
                await asyncio.to_thread(proxy.listen, agent, path)

    async def _serve_metrics(self) -> None:
        """Start the Prometheus endpoint; an address it cannot bind closes the app and is
        one error naming the setting."""
        settings = self.config.metrics
        dispatcher = self.runtime.dispatcher
        collector = PlancordCollector(
            asyncio.get_running_loop(),
            self.db,
            self.clock,
            self.config.anthropic.prices,
            lambda: dispatcher.refusals,
            lambda: dispatcher.decided,
        )
        endpoint = MetricsEndpoint(collector)
        try:
            endpoint.start(settings.host, settings.port)
        except OSError as exc:
            await self.close()
            raise MetricsUnavailable(
                f"metrics: cannot listen on {settings.host}:{settings.port} "
                f"({exc.strerror or exc}); change metrics.port or metrics.host, "
                "or set metrics.enabled: false"
            ) from None
        self.metrics = endpoint

    async def close(self) -> None:
        if self.metrics is not None:
            await self.metrics.stop()
            self.metrics = None
        if self.network is not None:
            await asyncio.to_thread(self.network.close)
            self.network = None
        if self.changes is not None:
            await self.changes.stop()
        await self.scheduler.stop()
        if self.recovering is not None:
            self.recovering.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.recovering
        await self.schedule_loop.stop()
        if self.owed is not None:
            await self.owed.stop()
        await self.runtime.shutdown(notice=True)
        if self.lease is not None:
            await self.lease.close()
        await self.mcp.close()
        if self.call_log is not None:
            await self.call_log.close()
        close = getattr(self.model, "close", None)
        if close is not None:
            await close()
        await self.db.close()
