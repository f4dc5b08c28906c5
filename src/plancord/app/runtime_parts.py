"""The agent runtime's parts, built once and handed to ``AgentRuntime``.

Why this exists: the runtime used to build its own stores, homes, budget and collaborators,
beside the app that built some of them again; a part built twice can disagree with itself
(two homes, two budgets). ``build_runtime`` is the one place they are made, and production,
the tests (``tests/runtime/builders.py``) and the benchmarks all call it.
"""

from __future__ import annotations

from plancord.agent.agent_settings import ThinkingSettings, overrides_from
from plancord.agent.budget import BudgetGuard, PlanBudget
from plancord.agent.comment_notes import CommentNotes
from plancord.agent.conversation_writer import ConversationWriter
from plancord.agent.dispatch import ToolDispatch
from plancord.agent.execution.endings import ExecutionEndings
from plancord.agent.execution.host import ExecutionHost
from plancord.agent.execution.results import ExecutionResults
from plancord.agent.execution.steps import StepKeeper
from plancord.agent.interruptions import TurnMarkers
from plancord.agent.loop import ToolLoop
from plancord.agent.plan_events import PlanEvents
from plancord.agent.plan_review.runs import PlanReviewRuns
from plancord.agent.requests import ModelRequests
from plancord.agent.restarts import Restarts
from plancord.agent.runtime import AgentRuntime, RuntimeSettings
from plancord.agent.sessions import Sessions
from plancord.agent.tools.base import ShellSettings, ToolRegistry
from plancord.app.lifecycle import PlanLifecycle
from plancord.app.services import CoreServices
from plancord.config import Config
from plancord.core.plan_comments import PlanComments
from plancord.core.ports import Clock, ModelClient, Notifier, SettingsProvider
from plancord.core.results import ResultListener
from plancord.core.review_gate import ReviewListener
from plancord.storage.plan_comments import PlanCommentStore
from plancord.storage.store import SqlStore


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
            effort=config.anthropic.effort,
        ),
        agents=overrides_from(config.agents),
        prices=config.anthropic.prices,
        shards=config.discord.share(),
    )


def plan_budget(core: CoreServices, clock: Clock, settings: RuntimeSettings) -> PlanBudget:
    """The plan's one budget, asked before every model call made for the plan: the agent's,
    its explore sub-agents' and its reviewer's."""
    return PlanBudget(
        plan_settings=core.settings,
        planning=core.planning,
        conversations=core.conversations,
        clock=clock,
        prices=settings.prices,
    )


def plan_comments(store: SqlStore, settings: SettingsProvider, clock: Clock) -> PlanComments:
    """The comments on plans, over ``store``'s database (``core.plan_comments``)."""
    return PlanComments(PlanCommentStore(store.db), store, store, settings, clock)


def build_runtime(
    core: CoreServices,
    *,
    notifier: Notifier,
    model: ModelClient,
    registry: ToolRegistry,
    clock: Clock,
    settings: RuntimeSettings,
    budget: PlanBudget,
    requests: ModelRequests | None = None,
    front_end: object | None = None,
) -> AgentRuntime:
    """The agent runtime over ``core``: every part built once, each given the few
    collaborators it uses, and the planning listeners registered in their one order
    (``PlanLifecycle``, the ``notifier`` first). ``requests`` replaces the request builder
    (a benchmark compares other ways of building requests). ``front_end`` is what the
    ``notifier`` shows through, when it is not the notifier itself: the listener the reviews
    and results tell."""
    store, conversations, planning = core.store, core.conversations, core.planning
    plan_settings, executions, homes = core.settings, core.executions, core.homes
    shown = notifier if front_end is None else front_end
    sessions = Sessions()
    markers = TurnMarkers(homes.agents_dir)
    writer = ConversationWriter(conversations, notifier, clock)
    requests = requests or ModelRequests(
        store=store,
        conversations=conversations,
        planning=planning,
        plan_settings=plan_settings,
        model=model,
        registry=registry,
        clock=clock,
        settings=settings,
    )
    steps = StepKeeper(
        executions=executions, notifier=notifier, clock=clock, homes=homes, owed=core.owed
    )
    host = ExecutionHost(
        executions=executions,
        audit=store,
        steps=steps,
        notifier=notifier,
        clock=clock,
        homes=homes,
        network_calls=core.network_calls,
    )
    dispatcher = ToolDispatch(
        store=store,
        planning=planning,
        plan_settings=plan_settings,
        notifier=notifier,
        registry=registry,
        homes=homes,
        clock=clock,
        settings=settings,
        host=host,
        rules=core.call_rules,
        calls=core.call_log,
    )
    guard = BudgetGuard(budget=budget, planning=planning, writer=writer)
    loop = ToolLoop(
        writer=writer,
        requests=requests,
        budget=guard,
        dispatcher=dispatcher,
        notifier=notifier,
        markers=markers,
        homes=homes,
        max_iterations=settings.max_iterations,
        notes=CommentNotes(plan_comments(store, plan_settings, clock)),
    )

    async def model_of(agent: str) -> str:
        return settings.model_for(agent, await store.get_agent(agent))

    reviews = PlanReviewRuns(
        store=store,
        reviews=core.plan_reviews,
        conversations=conversations,
        plan_settings=plan_settings,
        model=model,
        clock=clock,
        agent_model=model_of,
        listeners=[shown] if isinstance(shown, ReviewListener) else [],
        budget=budget,
    )
    results = ExecutionResults(
        executions=executions,
        store=store,
        plan_settings=plan_settings,
        members=planning.members,
        clock=clock,
        homes=homes,
        lease=core.lease,
        reviews=reviews,
        owed=core.owed,
    )
    if isinstance(shown, ResultListener):
        results.add_listener(shown)
    PlanLifecycle(
        steps=steps,
        results=results,
        front_end=notifier,
        reviews=reviews,
        turns=PlanEvents(
            sessions=sessions,
            loop=loop,
            writer=writer,
            conversations=conversations,
            store=store,
            clock=clock,
        ),
    ).listen(planning)
    return AgentRuntime(
        store=store,
        planning=planning,
        plan_settings=plan_settings,
        registry=registry,
        settings=settings,
        homes=homes,
        sessions=sessions,
        markers=markers,
        requests=requests,
        dispatcher=dispatcher,
        budget=guard,
        loop=loop,
        restarts=Restarts(
            sessions=sessions,
            loop=loop,
            writer=writer,
            markers=markers,
            store=store,
            shards=settings.shards,
            executions=executions,
            planning=planning,
        ),
        reviews=reviews,
        results=results,
        endings=ExecutionEndings(
            executions=executions, store=store, steps=steps, results=results, owed=core.owed
        ),
    )
