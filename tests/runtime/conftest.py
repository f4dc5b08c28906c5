"""A whole runtime over real parts: SQLite file, git workspace, the anthropic client talking
HTTP to the fake Messages API server, and a notifier that records what a channel would show."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from plancord.agent.instructions import last_regime
from plancord.agent.manager import AgentManager
from plancord.agent.runtime import AgentRuntime, RuntimeSettings
from plancord.app import CoreServices, core_services
from plancord.config import Config
from plancord.core.authority import Answer
from plancord.core.planning import Actor
from plancord.core.ports import PermissionRequest, PlanningChange, Question
from plancord.core.service import PlanningService
from plancord.llm.anthropic_client import AnthropicModelClient
from plancord.storage.conversations import ConversationStore
from plancord.storage.db import Database
from plancord.storage.store import SqlStore
from tests.conftest import ManualClock
from tests.fakes.answers import answer_of
from tests.fakes.anthropic_server import FakeAnthropicServer, Script
from tests.runtime.builders import MODEL, build_runtime

ANA = Actor.user(42, "ana")


def last_user(request: dict[str, Any]) -> dict[str, Any]:
    """The newest user message of a request (host instructions may follow it)."""
    users = [m for m in request["messages"] if m["role"] == "user"]
    return users[-1] if users else {"role": "user", "content": []}


def first_call(request: dict[str, Any]) -> bool:
    """Whether a request is its conversation's first (the model has not answered yet)."""
    return not any(m["role"] == "assistant" for m in request["messages"])


@dataclass
class ChannelRecorder:
    """The Notifier port as a test sees it: everything the channel would show."""

    said: list[str] = field(default_factory=list)
    activity_lines: list[str] = field(default_factory=list)
    changes: list[PlanningChange] = field(default_factory=list)
    questions: list[Question] = field(default_factory=list)
    permission_requests: list[PermissionRequest] = field(default_factory=list)
    answers: list[str | None] = field(default_factory=list)
    permissions: list[bool | None] = field(default_factory=list)

    async def planning_changed(self, change: PlanningChange) -> None:
        self.changes.append(change)

    async def say(self, agent: str, text: str) -> None:
        self.said.append(text)

    async def activity(self, agent: str, line: str) -> None:
        self.activity_lines.append(line)

    async def progress_line(self, agent: str, key: str, line: str, *, final: bool = False) -> None:
        self.activity_lines.append(line)

    async def ask_user(self, question: Question) -> str | None:
        self.questions.append(question)
        return self.answers.pop(0) if self.answers else None

    async def ask_permission(self, request: PermissionRequest) -> Answer:
        self.permission_requests.append(request)
        return answer_of(self.permissions.pop(0) if self.permissions else None)


@dataclass
class Harness:
    server: FakeAnthropicServer
    runtime: AgentRuntime
    service: PlanningService
    store: SqlStore
    conversations: ConversationStore
    manager: AgentManager
    channel: ChannelRecorder
    clock: ManualClock
    db: Database
    data_dir: Path
    core: CoreServices

    @property
    def workspace(self) -> Path:
        return self.runtime.workspace_of("ada")

    async def say(self, text: str, author: Actor = ANA) -> None:
        await self.runtime.handle_message("ada", text, author)
        await self.runtime.wait_idle("ada")

    def tool_results(self, request_index: int) -> list[dict[str, Any]]:
        last = last_user(self.server.requests[request_index])
        return [b for b in last["content"] if b.get("type") == "tool_result"]

    def regime(self, request_index: int) -> str:
        """The regime in force for that request: the newest one its messages hold."""
        found = last_regime(self.server.requests[request_index]["messages"])
        assert found is not None, "the request holds no regime"
        return found[1]


@pytest.fixture
async def make_harness(tmp_path: Path) -> AsyncIterator[Callable[..., Any]]:
    made: list[tuple[Harness, AnthropicModelClient]] = []

    async def make(
        script: Script,
        *,
        profile: str = "open",
        plan_mode: dict[str, Any] | None = None,
        runtime_settings: RuntimeSettings | None = None,
        role: str | None = None,
    ) -> Harness:
        server = await FakeAnthropicServer(script).start()
        config = Config.model_validate({"plan_mode": plan_mode or {}, "data_dir": str(tmp_path)})
        db = await Database.open(tmp_path / "plancord.db")
        clock = ManualClock()
        channel = ChannelRecorder()
        core = core_services(config, db, clock)
        model = AnthropicModelClient(api_key="test-key", base_url=server.url, max_retries=0)
        agents_dir = tmp_path / "agents"
        manager = AgentManager(core.store, agents_dir, MODEL, clock)
        runtime = build_runtime(
            core,
            notifier=channel,
            model=model,
            clock=clock,
            settings=runtime_settings,
        )
        await manager.create("ada", actor=ANA, profile=profile, channel_id=1001, role=role)
        harness = Harness(
            server,
            runtime,
            core.planning,
            core.store,
            core.conversations,
            manager,
            channel,
            clock,
            db,
            tmp_path,
            core,
        )
        made.append((harness, model))
        return harness

    yield make
    for harness, model in made:
        await harness.runtime.shutdown()
        await model.close()
        await harness.server.stop()
        await harness.db.close()
    for harness, _ in made:
        # A test that means the fake to refuse something clears ``rejections`` after checking.
        assert harness.server.rejections == [], "the fake Messages API refused a request"
