"""Shared fixtures: a real SQLite file per test, a controllable clock, the planning service."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from plancord.core.agents import AgentRecord
from plancord.core.ports import PlanningChange, StaticSettings
from plancord.core.service import PlanningService
from plancord.core.settings import PlanModeSettings
from plancord.storage.db import Database
from plancord.storage.store import SqliteStore


class ManualClock:
    """A clock that moves only when the test says so."""

    def __init__(self, start: datetime | None = None) -> None:
        self.current = start or datetime(2026, 1, 5, 9, 0, tzinfo=UTC)

    def now(self) -> datetime:
        return self.current

    def advance(self, **kwargs: float) -> datetime:
        self.current += timedelta(**kwargs)
        return self.current


class RecordingNotifier:
    def __init__(self) -> None:
        self.changes: list[PlanningChange] = []

    async def planning_changed(self, change: PlanningChange) -> None:
        self.changes.append(change)

    @property
    def actions(self) -> list[str]:
        return [c.action for c in self.changes]


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "plancord.db"


@pytest.fixture
async def db(db_path: Path) -> AsyncIterator[Database]:
    database = await Database.open(db_path)
    try:
        yield database
    finally:
        await database.close()


@pytest.fixture
def store(db: Database) -> SqliteStore:
    return SqliteStore(db)


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def settings() -> StaticSettings:
    return StaticSettings(PlanModeSettings(approver_roles=("reviewers",)))


@pytest.fixture
def notifier() -> RecordingNotifier:
    return RecordingNotifier()


@pytest.fixture
def service(
    store: SqliteStore, clock: ManualClock, settings: StaticSettings, notifier: RecordingNotifier
) -> PlanningService:
    return PlanningService(store, clock, settings, [notifier])


def agent_record(name: str = "ada", channel_id: int | None = 1001) -> AgentRecord:
    return AgentRecord(
        name=name,
        model="claude-test",
        channel_id=channel_id,
        created_at=datetime(2026, 1, 5, 8, 0, tzinfo=UTC),
    )


@pytest.fixture
async def agent(store: SqliteStore) -> str:
    await store.create_agent(agent_record())
    return "ada"
