"""A full disk or a locked database in the middle of every kind of transition.

Each transition is one SQLite transaction, so a failure anywhere in it must leave the state,
the audit log, the plan revisions and the conversation exactly as they were, tell the caller
why in words (``StorageError`` with its ``kind``), announce nothing, and let the same call
succeed once the fault is gone. ``tests/core/test_service.py`` covers a locked ``enter`` and
a full ``submit``; this file covers every other pair of fault and transition, plus a
conversation append, plus what a fault during a tool call does to the agent's conversation.

The disk fills for real: ``PRAGMA max_page_count`` is pinned to the file's size and filler
audit rows (of another agent) take the last free bytes, so the next transaction needs a page
SQLite may not add. The lock is real too: a second connection holds ``BEGIN IMMEDIATE`` while
the service's connection waits 50 ms for it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from plancord.agent.manager import AgentManager
from plancord.agent.runtime import AgentRuntime
from plancord.core.errors import StorageError
from plancord.core.planning import Actor, AuditEntry, EntrySource, Phase, PlanRef, StepStatus
from plancord.core.ports import StaticSettings
from plancord.core.service import PlanningService
from plancord.core.settings import PlanModeSettings
from plancord.llm.anthropic_client import AnthropicModelClient
from plancord.storage.conversations import ConversationStore
from plancord.storage.db import Database
from plancord.storage.store import SqlStore
from tests.conftest import ManualClock, RecordingNotifier, agent_record
from tests.fakes.anthropic_server import FakeAnthropicServer, ToolCall, text_turn, tool_turn
from tests.runtime.builders import build_runtime, plain_core
from tests.runtime.conftest import MODEL, ChannelRecorder

ANA = Actor.user(42, "ana")
PLAN = {
    "summary": "Add a health endpoint",
    "steps": [
        {"description": "Read the router", "tools": ["view"]},
        {"description": "Add /health", "tools": ["str_replace"], "risk": "medium"},
    ],
}
LOCK_WAIT_MS = 50


@dataclass
class Bed:
    db: Database
    store: SqlStore
    service: PlanningService
    conversations: ConversationStore
    notifier: RecordingNotifier
    clock: ManualClock

    async def ref(self) -> PlanRef:
        state = await self.store.load_state("ada")
        return PlanRef(
            agent="ada", plan_id=state.plan_id or "", revision=state.revision, sha256=state.plan_sha
        )

    async def snapshot(self) -> dict[str, list[tuple[Any, ...]]]:
        """Every row of every table a transition or an append may write."""
        tables = {
            "planning_state": "SELECT * FROM planning_state ORDER BY agent",
            "audit_log": "SELECT * FROM audit_log ORDER BY id",
            "plan_revisions": "SELECT * FROM plan_revisions ORDER BY plan_id, revision",
            "messages": "SELECT * FROM messages ORDER BY agent, seq",
        }
        return {
            name: [tuple(r) for r in await self.db.fetchall(sql)] for name, sql in tables.items()
        }


@asynccontextmanager
async def bed(path: Path) -> AsyncIterator[Bed]:
    db = await Database.open(path, busy_timeout_ms=LOCK_WAIT_MS)
    try:
        store = SqlStore(db)
        await store.create_agent(agent_record())
        clock = ManualClock()
        notifier = RecordingNotifier()
        service = PlanningService(store, clock, StaticSettings(PlanModeSettings()), [notifier])
        yield Bed(db, store, service, ConversationStore(db), notifier, clock)
    finally:
        await db.close()


# -- the transitions, each with what must hold before it and what it leads to -----------------


async def to_gathering(bed: Bed) -> None:
    await bed.service.enter("ada", source=EntrySource.USER, actor=ANA, task="health")


async def to_submitted(bed: Bed) -> None:
    await to_gathering(bed)
    await bed.service.submit("ada", PLAN)


async def to_executing(bed: Bed) -> None:
    await to_submitted(bed)
    await bed.service.approve(await bed.ref(), ANA)


async def nothing(bed: Bed) -> None:
    return None


async def enter(bed: Bed) -> Any:
    return await bed.service.enter("ada", source=EntrySource.USER, actor=ANA, task="health")


async def submit(bed: Bed) -> Any:
    return await bed.service.submit("ada", PLAN)


async def approve(bed: Bed) -> Any:
    return await bed.service.approve(await bed.ref(), ANA)


async def request_changes(bed: Bed) -> Any:
    return await bed.service.request_changes(await bed.ref(), ANA, "smaller steps")


async def reject(bed: Bed) -> Any:
    return await bed.service.reject(await bed.ref(), ANA, "not now")


async def cancel(bed: Bed) -> Any:
    return await bed.service.cancel("ada", ANA, "changed my mind")


async def update_step(bed: Bed) -> Any:
    return await bed.service.update_step("ada", 1, StepStatus.DONE, "read it")


async def complete(bed: Bed) -> Any:
    return await bed.service.complete("ada", Actor.agent("ada"), "done")


async def time_out(bed: Bed) -> Any:
    bed.clock.advance(hours=2)
    fired = await bed.service.fire_due()
    assert [c.action for c in fired] == ["timed-out"]
    return fired


async def append_message(bed: Bed) -> Any:
    message = {"role": "user", "content": [{"type": "text", "text": "ana: " + "y" * 12_000}]}
    await bed.conversations.append("ada", message, bed.clock.now())


Step = Callable[[Bed], Awaitable[Any]]

#: name -> (set-up, the call under test, phase afterwards, audit action it writes)
CASES: dict[str, tuple[Step, Step, Phase, str | None]] = {
    "enter": (nothing, enter, Phase.GATHERING, "entered"),
    "submit": (to_gathering, submit, Phase.SUBMITTED, "submitted"),
    "approve": (to_submitted, approve, Phase.EXECUTING, "approved"),
    "request_changes": (to_submitted, request_changes, Phase.GATHERING, "changes-requested"),
    "reject": (to_submitted, reject, Phase.INACTIVE, "rejected"),
    "cancel": (to_submitted, cancel, Phase.INACTIVE, "cancelled"),
    "timeout": (to_submitted, time_out, Phase.INACTIVE, "timed-out"),
    "update_step": (to_executing, update_step, Phase.EXECUTING, "step-updated"),
    "complete": (to_executing, complete, Phase.INACTIVE, "completed"),
    "append_message": (to_gathering, append_message, Phase.GATHERING, None),
}
COVERED_IN_TEST_SERVICE = {("locked", "enter"), ("full", "submit")}
PAIRS = [
    pytest.param(fault, name, id=f"{fault}-{name}")
    for fault in ("locked", "full")
    for name in CASES
    if (fault, name) not in COVERED_IN_TEST_SERVICE
]


# -- the faults ----------------------------------------------------------------------------------


async def fill_the_disk(bed: Bed) -> None:
    """Pin the file's size, then let filler rows take whatever room is left in its pages."""
    row = await bed.db.fetchone("PRAGMA page_count")
    assert row is not None
    await bed.db.conn.execute(f"PRAGMA max_page_count = {row[0]}")
    for size in (3000, 1000, 300, 100, 30, 10, 1):
        while True:
            filler = AuditEntry(
                at=bed.clock.now(),
                agent="filler",
                actor="test",
                action="filler",
                detail={"pad": "f" * size},
            )
            try:
                await bed.store.append_audit(filler)
            except StorageError as exc:
                if exc.kind != "full":
                    raise
                break


async def free_the_disk(bed: Bed) -> None:
    await bed.db.conn.execute("PRAGMA max_page_count = 1073741823")


@pytest.mark.parametrize(("fault", "name"), PAIRS)
async def test_a_fault_changes_nothing_and_the_retry_succeeds(
    tmp_path: Path, fault: str, name: str
) -> None:
    setup, call, phase_after, action = CASES[name]
    path = tmp_path / "plancord.db"
    async with bed(path) as world:
        await setup(world)
        blocker: Database | None = None
        if fault == "locked":
            blocker = await Database.open(path, migrate=False)
            await blocker.conn.execute("BEGIN IMMEDIATE")
        else:
            await fill_the_disk(world)
        before = await world.snapshot()
        announced = len(world.notifier.changes)
        clock_before = world.clock.current
        try:
            with pytest.raises(StorageError) as info:
                await call(world)
            assert info.value.kind == fault
            assert "nothing was changed" in str(info.value)
            assert str(path) in str(info.value)
            assert await world.snapshot() == before
            assert len(world.notifier.changes) == announced
        finally:
            if blocker is not None:
                await blocker.conn.execute("ROLLBACK")
                await blocker.close()
            else:
                await free_the_disk(world)
        world.clock.current = clock_before
        await call(world)
        state = await world.store.load_state("ada")
        assert state.phase is phase_after
        after = await world.snapshot()
        if action is not None:
            assert after["audit_log"][-1][4] == action
            assert len(after["audit_log"]) == len(before["audit_log"]) + 1
        else:
            assert len(after["messages"]) == len(before["messages"]) + 1


async def test_the_disk_really_is_full(tmp_path: Path) -> None:
    """The filler leaves no room: even a small transition cannot commit, a read still can."""
    async with bed(tmp_path / "plancord.db") as world:
        await fill_the_disk(world)
        with pytest.raises(StorageError, match="full"):
            await world.service.enter("ada", source=EntrySource.USER, actor=ANA)
        assert (await world.store.load_state("ada")).phase is Phase.INACTIVE


# -- a fault in the middle of an agent's turn ---------------------------------------------------


class LocksWhenTheAgentSpeaks(ChannelRecorder):
    """Another process takes the write lock just after the agent's reply was stored."""

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = path
        self.blocker: Database | None = None

    async def say(self, agent: str, text: str) -> None:
        await super().say(agent, text)
        if text == "Let me look." and self.blocker is None:
            self.blocker = await Database.open(self.path, migrate=False)
            await self.blocker.conn.execute("BEGIN IMMEDIATE")

    async def release(self) -> None:
        if self.blocker is not None:
            await self.blocker.conn.execute("ROLLBACK")
            await self.blocker.close()


async def test_a_locked_database_during_a_tool_call_does_not_wedge_the_agent(
    tmp_path: Path,
) -> None:
    path = tmp_path / "plancord.db"
    channel = LocksWhenTheAgentSpeaks(path)
    script = [
        tool_turn(ToolCall("view", {"path": "README.md"}), text="Let me look."),
        text_turn("Here is what I found."),
    ]
    async with FakeAnthropicServer(script) as server, runtime_for(path, server, channel) as rt:
        await rt.planning.enter("ada", source=EntrySource.USER, actor=ANA, task="look")
        try:
            await rt.handle_message("ada", "what is in the README?", ANA)
            await rt.wait_idle("ada")
        finally:
            await channel.release()
        await rt.handle_message("ada", "try again please", ANA)
        await rt.wait_idle("ada")
        assert server.rejections == []
        assert channel.said[-1] == "Here is what I found."


@asynccontextmanager
async def runtime_for(
    path: Path, server: FakeAnthropicServer, channel: ChannelRecorder
) -> AsyncIterator[AgentRuntime]:
    db = await Database.open(path, busy_timeout_ms=LOCK_WAIT_MS)
    model = AnthropicModelClient(api_key="test-key", base_url=server.url, max_retries=0)
    clock = ManualClock()
    agents_dir = path.parent / "agents"
    core = plain_core(db, clock, agents_dir)
    runtime = build_runtime(core, notifier=channel, model=model, clock=clock)
    await AgentManager(core.store, agents_dir, MODEL, clock).create(
        "ada", actor=ANA, profile="open"
    )
    (runtime.workspace_of("ada") / "README.md").write_text("# demo\n")
    try:
        yield runtime
    finally:
        await runtime.shutdown()
        await model.close()
        await db.close()
