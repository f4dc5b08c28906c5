"""Fixtures for the agent tools: a real git workspace, a recording notifier, a context factory."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Protocol

import pytest

from plancord.agent.tools.base import Tool, ToolContext, ToolResult
from plancord.core.authority import Answer
from plancord.core.planning import Actor, Phase
from plancord.core.ports import Notifier, PermissionRequest, PlanningChange, Question
from plancord.core.service import PlanningService
from plancord.storage.store import SqlStore
from tests.fakes.answers import answer_of
from tests.workspaces import WorkspaceTemplates

REQUESTER = Actor.user(42, "ana")


class FakeNotifier:
    """Records everything; ``answer`` is what ``ask_user`` returns (None = nobody replied)."""

    def __init__(self) -> None:
        self.answer: str | None = None
        self.permission: bool | None = None
        self.said: list[tuple[str, str]] = []
        self.activities: list[tuple[str, str]] = []
        self.questions: list[Question] = []
        self.permission_requests: list[PermissionRequest] = []
        self.changes: list[PlanningChange] = []

    async def planning_changed(self, change: PlanningChange) -> None:
        self.changes.append(change)

    async def say(self, agent: str, text: str) -> None:
        self.said.append((agent, text))

    async def activity(self, agent: str, line: str) -> None:
        self.activities.append((agent, line))

    async def progress_line(self, agent: str, key: str, line: str, *, final: bool = False) -> None:
        self.activities.append((agent, line))

    async def ask_user(self, question: Question) -> str | None:
        self.questions.append(question)
        return self.answer

    async def ask_permission(self, request: PermissionRequest) -> Answer:
        self.permission_requests.append(request)
        return answer_of(self.permission)


class MakeCtx(Protocol):
    def __call__(self, **overrides: Any) -> ToolContext: ...


GitRunner = Callable[..., Awaitable[str]]


async def git_run(cwd: Path, *args: str) -> str:
    """Run git for a test's setup or checks; fails the test when git fails."""
    process = await asyncio.create_subprocess_exec(
        "git",
        *args,
        cwd=cwd,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await process.communicate()
    assert process.returncode == 0, f"git {' '.join(args)}: {err.decode()}"
    return out.decode()


async def call(tool: Tool[Any], ctx: ToolContext, **arguments: Any) -> ToolResult:
    """Call a tool as the runtime does: validate the input model, then run."""
    return await tool.run(tool.Input.model_validate(arguments), ctx)


@pytest.fixture
def git() -> GitRunner:
    return git_run


@pytest.fixture
async def workspace(tmp_path: Path, workspace_templates: WorkspaceTemplates) -> Path:
    """Agent ada's workspace as ``init_workspace`` makes it (a copy of one made per session)."""
    return await workspace_templates.copy(tmp_path / "workspace", "ada")


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A directory next to the workspace, with a file the tools must never read or change."""
    path = tmp_path / "outside"
    path.mkdir()
    (path / "secret.txt").write_text("top secret\n")
    return path


@pytest.fixture
def fake_notifier() -> FakeNotifier:
    return FakeNotifier()


@pytest.fixture
async def make_ctx(
    store: SqlStore,
    service: PlanningService,
    agent: str,
    workspace: Path,
    fake_notifier: FakeNotifier,
) -> MakeCtx:
    record = await store.get_agent(agent)
    notifier: Notifier = fake_notifier
    service.listen([notifier])

    def factory(**overrides: Any) -> ToolContext:
        fields: dict[str, Any] = {
            "agent": record,
            "workspace": workspace,
            "phase": Phase.INACTIVE,
            "planning": service,
            "store": store,
            "notifier": notifier,
            "requester": REQUESTER,
        }
        fields.update(overrides)
        return ToolContext(**fields)

    return factory


@pytest.fixture
def ctx(make_ctx: MakeCtx) -> ToolContext:
    return make_ctx()
