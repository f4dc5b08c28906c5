"""What the benchmark scripts share: the import path, a clock, a quiet front end, a runtime,
the timing of a run and the percentiles of its samples.

The scripts run as ``.venv/bin/python benchmarks/<name>.py`` from the repository root, so the
root is put on ``sys.path`` here for ``tests.fakes.anthropic_server``. Everything else is the
real thing: a SQLite file, git workspaces, the ``anthropic`` client over HTTP.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from tests.runtime.builders import plain_core  # noqa: E402

from plancord.agent.manager import AgentManager  # noqa: E402
from plancord.agent.requests import ModelRequests  # noqa: E402
from plancord.agent.runtime import AgentRuntime, RuntimeSettings  # noqa: E402
from plancord.agent.tools import default_registry  # noqa: E402
from plancord.app import build_runtime, plan_budget  # noqa: E402
from plancord.config import Config  # noqa: E402
from plancord.core.authority import Answer  # noqa: E402
from plancord.core.planning import Actor  # noqa: E402
from plancord.core.ports import (  # noqa: E402
    ModelClient,
    PermissionRequest,
    PlanningChange,
    Question,
)
from plancord.core.service import PlanningService  # noqa: E402
from plancord.storage.conversations import ConversationStore  # noqa: E402
from plancord.storage.db import Database  # noqa: E402
from plancord.storage.store import SqlStore  # noqa: E402

MODEL = "claude-sonnet-5-5"
ANA = Actor.user(42, "ana")


class StepClock:
    """A clock that moves only when told to, so runs are repeatable."""

    def __init__(self, start: datetime | None = None) -> None:
        self.current = start or datetime(2026, 1, 5, 9, 0, tzinfo=UTC)

    def now(self) -> datetime:
        return self.current

    def advance(self, seconds: float) -> datetime:
        self.current += timedelta(seconds=seconds)
        return self.current


class QuietChannel:
    """The ``Notifier`` port with nobody watching: questions go unanswered, edits are allowed."""

    def __init__(self) -> None:
        self.said: list[str] = []

    async def planning_changed(self, change: PlanningChange) -> None:
        return None

    async def say(self, agent: str, text: str) -> None:
        self.said.append(text)

    async def activity(self, agent: str, line: str) -> None:
        return None

    async def progress_line(self, agent: str, key: str, line: str, *, final: bool = False) -> None:
        return None

    async def ask_user(self, question: Question) -> str | None:
        return None

    async def ask_permission(self, request: PermissionRequest) -> Answer:
        return Answer.ALLOWED


@dataclass
class Bench:
    """One agent runtime over its own database file and workspace directory."""

    db: Database
    store: SqlStore
    service: PlanningService
    conversations: ConversationStore
    runtime: AgentRuntime
    manager: AgentManager
    channel: QuietChannel
    clock: StepClock

    async def close(self) -> None:
        await self.runtime.shutdown()
        await self.db.close()


async def open_bench(
    data_dir: Path,
    model: ModelClient,
    *,
    plan_mode: dict[str, Any] | None = None,
    requests_class: type[ModelRequests] = ModelRequests,
    runtime_settings: RuntimeSettings | None = None,
    agent: str = "ada",
    profile: str = "open",
) -> Bench:
    """A runtime with one agent, ``agent``, whose workspace is a fresh git repository."""
    db = await Database.open(data_dir / "plancord.db")
    clock = StepClock()
    channel = QuietChannel()
    agents_dir = data_dir / "agents"
    config = Config.model_validate({"plan_mode": plan_mode or {}})
    core = plain_core(db, clock, agents_dir, config)
    store, service, conversations = core.store, core.planning, core.conversations
    manager = AgentManager(store, agents_dir, MODEL, clock)
    registry = default_registry()
    runtime_settings = runtime_settings or RuntimeSettings(default_model=MODEL)
    requests = requests_class(
        store=store,
        conversations=conversations,
        planning=service,
        plan_settings=core.settings,
        model=model,
        registry=registry,
        clock=clock,
        settings=runtime_settings,
    )
    runtime = build_runtime(
        core,
        notifier=channel,
        model=model,
        registry=registry,
        clock=clock,
        settings=runtime_settings,
        budget=plan_budget(core, clock, runtime_settings),
        requests=requests,
    )
    await manager.create(agent, actor=ANA, profile=profile, channel_id=1001)
    return Bench(db, store, service, conversations, runtime, manager, channel, clock)


async def timed(action: Callable[[], Awaitable[object]]) -> float:
    """The seconds one run of ``action`` took."""
    started = time.perf_counter()
    await action()
    return time.perf_counter() - started


async def timed_runs(runs: int, action: Callable[[], Awaitable[object]]) -> list[float]:
    """The seconds each of ``runs`` runs of ``action``, one after another, took."""
    return [await timed(action) for _ in range(runs)]


def percentile(samples: Sequence[float], fraction: float) -> float:
    """The sample below which ``fraction`` of them lie (nearest rank), in their unit."""
    ordered = sorted(samples)
    return ordered[max(0, round(fraction * len(ordered)) - 1)]


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def percentile_ms(samples: list[float], fraction: float) -> float:
    return percentile(samples, fraction) * 1000
