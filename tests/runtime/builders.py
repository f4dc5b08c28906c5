"""The one way the tests build an ``AgentRuntime``: over a ``CoreServices`` (the composition
root's ``core_services``, or ``plain_core`` without its workspace probe) with the default
tools, so a new runtime collaborator is wired here once and not in every test module."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from plancord.agent.manager import StoredSettings
from plancord.agent.runtime import AgentRuntime, RuntimeSettings
from plancord.agent.tools import default_registry
from plancord.app import CoreServices
from plancord.config import Config
from plancord.core.ports import Clock, ModelClient, Notifier, PlanningListener
from plancord.core.service import PlanningService
from plancord.storage.conversations import ConversationStore
from plancord.storage.db import Database
from plancord.storage.store import SqlStore

MODEL = "claude-fake-test-model"


def plain_core(
    db: Database,
    clock: Clock,
    listeners: Sequence[PlanningListener],
    config: Config | None = None,
) -> CoreServices:
    """The store, the settings and the planning service over ``db``, without the plan's
    workspace-tree probe that ``app.core_services`` adds."""
    store = SqlStore(db)
    settings = StoredSettings(config or Config(), store)
    planning = PlanningService(store, clock, settings, list(listeners))
    return CoreServices(store, ConversationStore(db), settings, planning)


def build_runtime(
    core: CoreServices,
    *,
    notifier: Notifier,
    model: ModelClient,
    agents_dir: Path,
    clock: Clock,
    settings: RuntimeSettings | None = None,
) -> AgentRuntime:
    """A runtime over ``core`` with every default tool (``settings`` defaults to the fake
    model's name and nothing else)."""
    return AgentRuntime(
        store=core.store,
        conversations=core.conversations,
        planning=core.planning,
        plan_settings=core.settings,
        notifier=notifier,
        model=model,
        registry=default_registry(),
        agents_dir=agents_dir,
        clock=clock,
        settings=settings or RuntimeSettings(default_model=MODEL),
    )
