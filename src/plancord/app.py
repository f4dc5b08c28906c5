"""Wiring: build every service of a running plancord from the config, and close them again.

The Discord bot, the operator CLI and the demo all start from ``App.open``. Front ends pass
their ``Notifier`` (the Discord edge, a console, a test recorder) and, in tests, a clock and a
model client of their own.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from plancord.agent.agent_settings import ThinkingSettings, overrides_from
from plancord.agent.budget import PlanBudget
from plancord.agent.execution.network import NetworkGate
from plancord.agent.execution.start_intents import Say
from plancord.agent.execution.starter import BranchStarter
from plancord.agent.home import AgentHomes
from plancord.agent.manager import AgentManager, StoredSettings
from plancord.agent.mcp import McpHub
from plancord.agent.runtime import AgentRuntime, RuntimeSettings
from plancord.agent.subagents import ExploreLimits, SubAgents
from plancord.agent.tools import default_tools
from plancord.agent.tools.base import ShellSettings, ToolRegistry
from plancord.agent.workspace_probe import GitTreeProbe
from plancord.config import Config
from plancord.core.ask_authority import AskAuthority
from plancord.core.errors import AgentNotFound, PlancordError
from plancord.core.planning import Phase
from plancord.core.ports import (
    Clock,
    MemberDirectory,
    ModelClient,
    Notifier,
    PlanningListener,
    SystemClock,
)
from plancord.core.scheduler import DeadlineScheduler
from plancord.core.service import PlanningService
from plancord.metrics import MetricsEndpoint, PlancordCollector
from plancord.sandbox.proxy import NetworkProxy
from plancord.storage.backend import Backend
from plancord.storage.conversations import ConversationStore
from plancord.storage.engines import open_database
from plancord.storage.executions import ExecutionStore
from plancord.storage.plan_reviews import PlanReviewStore
from plancord.storage.store import SqlStore


class MetricsUnavailable(PlancordError):
    """The metrics endpoint is on but its address cannot be bound."""


@dataclass(frozen=True, slots=True)
class CoreServices:
    """The services every entry point needs over one database: the bot, the operator CLI."""

    store: SqlStore
    conversations: ConversationStore
    settings: StoredSettings
    planning: PlanningService
    branches: BranchStarter | None = None
    """Starts approved plans' branches; ``recover`` undoes the starts a crash interrupted
    (None where plans execute where the workspace stands, as in tests of the planning)."""


def core_services(
    config: Config,
    db: Backend,
    clock: Clock,
    listeners: Sequence[PlanningListener] = (),
    members: MemberDirectory | None = None,
    say: Say | None = None,
) -> CoreServices:
    """The one place the store, the settings and the planning service are wired together;
    plans bind to the workspace tree they were submitted against, an approved plan executes
    on a branch of its own, and approval votes are counted for voters ``members`` reads as
    still entitled (none without it). ``say`` tells a channel how an interrupted approval
    was undone."""
    store = SqlStore(db)
    settings = StoredSettings(config, store)
    agents_dir = config.agents_dir
    probe = GitTreeProbe(agents_dir, config.sandbox_settings)
    homes = AgentHomes(agents_dir, config.sandbox_settings)
    branches = BranchStarter(homes, ExecutionStore(db), clock, say)
    planning = PlanningService(
        store,
        clock,
        settings,
        list(listeners),
        probe,
        members,
        reviews=PlanReviewStore(db),
        executions=branches,
    )
    return CoreServices(store, ConversationStore(db), settings, planning, branches)


def runtime_settings(config: Config) -> RuntimeSettings:
    """The agent runtime's settings, as the config file gives them."""
    return RuntimeSettings(
        max_tokens=config.anthropic.max_tokens,
        max_iterations=config.anthropic.max_iterations,
        context_window_tokens=config.anthropic.context_window_tokens,
        shell=ShellSettings(
            timeout_seconds=config.shell.timeout_seconds,
            max_output_bytes=config.shell.max_output_bytes,
            operator_rules=config.shell.operator_rules,
        ),
        sandbox=config.sandbox_settings,
        default_model=config.anthropic.model,
        thinking=ThinkingSettings(
            enabled=config.anthropic.thinking,
            budget_tokens=config.anthropic.thinking_budget_tokens,
        ),
        agents=overrides_from(config.agents),
        prices=config.anthropic.prices,
        shards=config.discord.share(),
    )


@dataclass
class App:
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
    metrics: MetricsEndpoint | None = None
    """The Prometheus endpoint, when ``metrics.enabled``."""
    network: NetworkProxy | None = None
    """The network proxy, when some agent's network is granted by the plan."""
    network_gate: NetworkGate | None = None
    branches: BranchStarter | None = None
    """The starts of approved plans' branches (``core_services``)."""

    @cached_property
    def asks(self) -> AskAuthority:
        """The authority on clicks on asks (permission requests, drift, checkpoints,
        questions), reading this app's store and settings."""
        return AskAuthority(self.store, self.settings, self.clock)

    @property
    def agents_dir(self) -> Path:
        return self.config.agents_dir

    async def recover_interrupted(self) -> None:
        """Undo or finish what a crash interrupted, before the cards are restored: the
        approvals whose branch was started but not recorded (the plan waits again), then
        the decisions on results; each channel is told what happened."""
        if self.branches is not None:
            await self.branches.recover(self.serves)
        await self.runtime.results.recover(self.serves)

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
        notifier: Notifier,
        model: ModelClient,
        members: MemberDirectory | None = None,
        clock: Clock | None = None,
        scheduler_max_sleep: float = 60.0,
    ) -> App:
        """Open (and migrate) the database and build the services around it."""
        clock = clock or SystemClock()
        db = await open_database(config.database_target)
        core = core_services(config, db, clock, [notifier], members, notifier.say)
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
            budget=PlanBudget(
                plan_settings=settings,
                planning=planning,
                conversations=conversations,
                clock=clock,
                prices=runtime_options.prices,
            ),
        )
        registry = ToolRegistry(default_tools(), extensions=[mcp, subagents])
        subagents.bind(registry)
        runtime = AgentRuntime(
            store=store,
            conversations=conversations,
            planning=planning,
            plan_settings=settings,
            notifier=notifier,
            model=model,
            registry=registry,
            agents_dir=agents_dir,
            clock=clock,
            settings=runtime_options,
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
        )
        if config.sandbox_settings.plan_network:
            await app._serve_network(notifier)
        if config.metrics.enabled:
            await app._serve_metrics()
        return app

    async def _serve_network(self, notifier: Notifier) -> None:
        """Start the proxy with one socket per agent whose network the plan grants."""
        sandbox = self.config.sandbox_settings
        gate = NetworkGate(
            executions=ExecutionStore(self.db),
            store=self.store,
            settings=self.settings,
            notifier=notifier,
            clock=self.clock,
            ask_timeout_seconds=self.runtime.settings.ask_timeout_seconds,
        )
        proxy = NetworkProxy(gate.decide, asyncio.get_running_loop())
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
        await self.scheduler.stop()
        await self.runtime.shutdown(notice=True)
        if self.branches is not None:
            self.branches.close()
        await self.mcp.close()
        close = getattr(self.model, "close", None)
        if close is not None:
            await close()
        await self.db.close()
