"""The one way the tests build an ``AgentRuntime``: over a ``CoreServices`` (the composition
root's ``core_services``, or ``plain_core`` without its workspace probe) with the default
tools, through the app's own ``build_runtime``, so the tests run the parts and the listener
order production runs."""

from __future__ import annotations

from pathlib import Path

from plancord.agent.execution.lease import ProcessLease
from plancord.agent.home import AgentHomes
from plancord.agent.manager import StoredSettings
from plancord.agent.runtime import AgentRuntime, RuntimeSettings
from plancord.agent.tools import default_registry
from plancord.app import CoreServices, plan_budget
from plancord.app import build_runtime as build_app_runtime
from plancord.config import Config
from plancord.core.ports import Clock, ModelClient, Notifier
from plancord.core.service import PlanningService
from plancord.storage.conversations import ConversationStore
from plancord.storage.db import Database
from plancord.storage.executions import ExecutionStore
from plancord.storage.plan_reviews import PlanReviewStore
from plancord.storage.store import SqlStore

MODEL = "claude-sonnet-5-5"


def plain_core(
    db: Database, clock: Clock, agents_dir: Path, config: Config | None = None
) -> CoreServices:
    """The store, the settings and the planning service over ``db``, the agents' homes in
    ``agents_dir``, without the plan's workspace-tree probe, the kept reviews' hold and the
    branch of its own an approved plan gets from ``app.core_services``."""
    store = SqlStore(db)
    settings = StoredSettings(config or Config(), store)
    planning = PlanningService(store, clock, settings)
    return CoreServices(
        store,
        ConversationStore(db),
        settings,
        planning,
        ExecutionStore(db),
        AgentHomes(agents_dir),
        PlanReviewStore(db),
        ProcessLease(db),
    )


def build_runtime(
    core: CoreServices,
    *,
    notifier: Notifier,
    model: ModelClient,
    clock: Clock,
    settings: RuntimeSettings | None = None,
) -> AgentRuntime:
    """A runtime over ``core`` with every default tool (``settings`` defaults to the fake
    model's name and nothing else), ``notifier`` the first to hear each planning change."""
    settings = settings or RuntimeSettings(default_model=MODEL)
    return build_app_runtime(
        core,
        notifier=notifier,
        model=model,
        registry=default_registry(),
        clock=clock,
        settings=settings,
        budget=plan_budget(core, clock, settings),
    )
