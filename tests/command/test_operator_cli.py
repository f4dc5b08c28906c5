"""The operator CLI as admins and scripts use it: real subprocesses on a real database file."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import subprocess
import sys
from collections.abc import Awaitable, Callable
from contextlib import closing
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

import pytest

from plancord.agent.manager import StoredSettings
from plancord.command.plan_commands import APPROVAL_MODES
from plancord.config import load_config
from plancord.core.agents import AgentRecord
from plancord.core.planning import (
    Actor,
    ApprovalMode,
    EntrySource,
    Phase,
    PlanningState,
    PlanRef,
    PlanRevision,
)
from plancord.core.ports import SystemClock
from plancord.core.review import Finding, PlanReview, Severity
from plancord.core.review_gate import running_hold
from plancord.core.service import PlanningService
from plancord.core.settings import ReviewMode, ReviewSettings
from plancord.storage.db import Database
from plancord.storage.engines import migrate_database
from plancord.storage.migrations import discover
from plancord.storage.plan_reviews import PlanReviewStore, ReviewKind
from plancord.storage.store import SqlStore
from tests.workspaces import WorkspaceTemplates

T = TypeVar("T")
ANA = Actor.user(42, "ana")
PLAN = {
    "summary": "Add a health endpoint",
    "steps": [
        {"description": "Read the router", "tools": ["view"]},
        {"description": "Add /health", "tools": ["str_replace"], "risk": "medium"},
    ],
}
PLAN_V2 = {**PLAN, "summary": "Add a health endpoint with a DB check"}


@dataclass
class World:
    """A config file, its migrated database and two agents: ada (channel 1001) and bob."""

    root: Path
    config: Path

    @property
    def db(self) -> Path:
        return self.root / "state" / "plancord.db"

    def do(self, action: Callable[[SqlStore, PlanningService], Awaitable[T]]) -> T:
        async def run() -> T:
            config = load_config(self.config)
            async with await Database.open(config.database_path) as db:
                store = SqlStore(db)
                service = PlanningService(store, SystemClock(), StoredSettings(config, store))
                return await action(store, service)

        return asyncio.run(run())

    def state(self, agent: str) -> PlanningState:
        async def load(store: SqlStore, _: PlanningService) -> PlanningState:
            return await store.load_state(agent)

        return self.do(load)

    def submit(self, agent: str, plan: dict[str, Any] = PLAN) -> PlanRevision:
        async def go(_: SqlStore, service: PlanningService) -> PlanRevision:
            await service.enter(agent, source=EntrySource.USER, actor=ANA, task="health")
            return await service.submit(agent, plan)

        return self.do(go)

    def resubmit(self, agent: str) -> PlanRevision:
        """Ana sends the current revision back; the agent submits the next one."""

        async def go(store: SqlStore, service: PlanningService) -> PlanRevision:
            state = await store.load_state(agent)
            assert state.plan_id is not None
            ref = PlanRef(agent=agent, plan_id=state.plan_id, revision=state.revision)
            await service.request_changes(ref, ANA, "check the database too")
            return await service.submit(agent, PLAN_V2)

        return self.do(go)

    def audit(self, agent: str) -> list[tuple[str, str, int | None, dict[str, Any]]]:
        with closing(sqlite3.connect(self.db)) as conn:
            rows = conn.execute(
                "SELECT actor, action, revision, detail FROM audit_log WHERE agent = ? ORDER BY id",
                (agent,),
            ).fetchall()
        return [(r[0], r[1], r[2], json.loads(r[3])) for r in rows]

    def cli(self, *args: str, config: bool = True) -> subprocess.CompletedProcess[str]:
        extra = ["--config", str(self.config)] if config else []
        return subprocess.run(
            [sys.executable, "-m", "plancord.command.main", *args, *extra],
            cwd=self.root,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )


@pytest.fixture
def world(tmp_path: Path, workspace_templates: WorkspaceTemplates) -> World:
    config = tmp_path / "config.yaml"
    config.write_text("data_dir: state\n")
    found = World(tmp_path, config)

    async def setup() -> None:
        await migrate_database(found.db)
        async with await Database.open(found.db) as db:
            store = SqlStore(db)
            created = datetime(2026, 1, 5, 8, 0, tzinfo=UTC)
            await store.create_agent(
                AgentRecord(name="ada", model="claude-test", channel_id=1001, created_at=created)
            )
            await store.create_agent(
                AgentRecord(name="bob", model="claude-other", role="worker", created_at=created)
            )
        for name in ("ada", "bob"):  # an approved plan executes on a branch of the workspace
            await workspace_templates.copy(tmp_path / "state" / "agents" / name / "workspace", name)

    asyncio.run(setup())
    return found


def ok(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    return result.stdout


def refused(result: subprocess.CompletedProcess[str], code: int = 1) -> str:
    assert result.returncode == code, result.stdout
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.startswith("plancord: ")
    return result.stderr.removeprefix("plancord: ").rstrip("\n")


def test_agents_list(world: World) -> None:
    world.submit("ada")
    lines = ok(world.cli("agents", "list")).splitlines()
    assert [line.split() for line in lines] == [
        ["NAME", "CHANNEL", "MODEL", "PHASE"],
        ["ada", "1001", "claude-test", "submitted"],
        ["bob", "-", "claude-other", "inactive"],
    ]
    assert json.loads(ok(world.cli("agents", "list", "--json"))) == [
        {
            "name": "ada",
            "channel_id": 1001,
            "model": "claude-test",
            "phase": "submitted",
            "role": None,
        },
        {
            "name": "bob",
            "channel_id": None,
            "model": "claude-other",
            "phase": "inactive",
            "role": "worker",
        },
    ]


def test_status_of_a_submitted_plan(world: World) -> None:
    revision = world.submit("ada")
    text = ok(world.cli("plan", "status", "--agent", "ada"))
    assert text.startswith("agent ada: submitted\ntask: health\n")
    assert f"plan: v1 · {revision.sha8} · submitted " in text
    assert "requested by: ana" in text
    assert "approve: plancord plan approve --agent ada --revision 1" in text
    assert revision.markdown.strip() in text

    data = json.loads(ok(world.cli("plan", "status", "--agent", "ada", "--json")))
    assert data["state"]["phase"] == "submitted"
    assert data["state"]["revision"] == 1
    assert data["plan"]["sha256"] == revision.sha256
    assert data["plan"]["plan"]["summary"] == "Add a health endpoint"


def test_status_of_an_inactive_agent(world: World) -> None:
    assert ok(world.cli("plan", "status", "--agent", "bob")) == (
        "agent bob: inactive (not in plan mode)\n"
    )
    data = json.loads(ok(world.cli("plan", "status", "--agent", "bob", "--json")))
    assert data["state"]["phase"] == "inactive"
    assert data["plan"] is None


def test_enter_is_audited_as_the_operator(world: World) -> None:
    out = ok(world.cli("plan", "enter", "--agent", "bob", "--task", "tidy up", "--reason", "audit"))
    assert out.startswith("agent bob entered plan mode (gathering), plan ")
    state = world.state("bob")
    assert state.phase is Phase.GATHERING
    assert state.entry_source is EntrySource.OPERATOR
    assert state.task == "tidy up"
    assert state.requested_by is None
    assert world.audit("bob") == [
        ("operator", "entered", None, {"source": "operator", "reason": "audit", "task": "tidy up"})
    ]

    again = ok(world.cli("plan", "enter", "--agent", "bob"))
    assert again == "agent bob is already in plan mode (gathering); nothing changed\n"
    assert len(world.audit("bob")) == 1


def test_approve_the_current_revision(world: World) -> None:
    revision = world.submit("ada")
    out = ok(world.cli("plan", "approve", "--agent", "ada"))
    first, note = out.splitlines()
    assert first == (
        f"approved plan v1 ({revision.sha8}) of agent ada, mode normal; audited as operator"
    )
    assert "does not resume the agent by itself" in note
    state = world.state("ada")
    assert state.phase is Phase.EXECUTING
    assert state.approved_by == "operator"
    assert state.approval_mode is ApprovalMode.NORMAL
    assert world.audit("ada")[-1] == (
        "operator",
        "approved",
        1,
        {"sha256": revision.sha256, "mode": "normal"},
    )


def test_approve_with_a_mode_and_an_exact_revision(world: World) -> None:
    world.submit("ada")
    v2 = world.resubmit("ada")
    out = ok(
        world.cli("plan", "approve", "--agent", "ada", "--revision", "2", "--mode", "fresh_context")
    )
    assert out.startswith(f"approved plan v2 ({v2.sha8}) of agent ada, mode fresh_context;")
    state = world.state("ada")
    assert state.phase is Phase.EXECUTING
    assert state.revision == 2
    assert state.approval_mode is ApprovalMode.FRESH_CONTEXT


def test_a_stale_revision_is_refused(world: World) -> None:
    world.submit("ada")
    world.resubmit("ada")
    before = world.audit("ada")
    message = refused(world.cli("plan", "approve", "--agent", "ada", "--revision", "1"))
    assert message == "Plan v1 was superseded by v2; decide on v2 instead."
    state = world.state("ada")
    assert state.phase is Phase.SUBMITTED
    assert state.revision == 2
    assert world.audit("ada") == before
    future = refused(world.cli("plan", "approve", "--agent", "ada", "--revision", "3"))
    assert future == "Plan v3 is no longer the current plan."


def test_approve_without_a_submitted_plan_is_refused(world: World) -> None:
    assert refused(world.cli("plan", "approve", "--agent", "bob")) == (
        "Cannot approve: the agent is not in plan mode."
    )
    ok(world.cli("plan", "enter", "--agent", "bob"))
    assert refused(world.cli("plan", "approve", "--agent", "bob")) == (
        "Cannot approve: the agent is still exploring and has not submitted a plan yet."
    )


def test_approving_twice_says_who_decided(world: World) -> None:
    world.submit("ada")
    ok(world.cli("plan", "approve", "--agent", "ada"))
    message = refused(world.cli("plan", "approve", "--agent", "ada", "--revision", "1"))
    assert message == "Plan v1 was already approved by operator."


def test_reject(world: World) -> None:
    revision = world.submit("ada")
    out = ok(world.cli("plan", "reject", "--agent", "ada", "--reason", "not now"))
    assert out == f"rejected plan v1 ({revision.sha8}) of agent ada; planning ended\n"
    assert world.state("ada").phase is Phase.INACTIVE
    assert world.audit("ada")[-1] == (
        "operator",
        "rejected",
        1,
        {"sha256": revision.sha256, "reason": "not now"},
    )


def test_reject_a_stale_revision_is_refused(world: World) -> None:
    world.submit("ada")
    world.resubmit("ada")
    message = refused(world.cli("plan", "reject", "--agent", "ada", "--revision", "1"))
    assert message == "Plan v1 was superseded by v2; decide on v2 instead."
    assert world.state("ada").phase is Phase.SUBMITTED


def test_cancel(world: World) -> None:
    world.submit("ada")
    out = ok(world.cli("plan", "cancel", "--agent", "ada", "--reason", "wrong channel"))
    assert out == "cancelled plan mode of agent ada (was submitted)\n"
    assert world.state("ada").phase is Phase.INACTIVE
    assert world.audit("ada")[-1] == (
        "operator",
        "cancelled",
        1,
        {"reason": "wrong channel", "from": "submitted"},
    )
    assert refused(world.cli("plan", "cancel", "--agent", "ada")) == (
        "Cannot cancel: there is nothing to cancel: the agent is not in plan mode."
    )


def test_cancel_an_executing_plan(world: World) -> None:
    world.submit("ada")
    ok(world.cli("plan", "approve", "--agent", "ada"))
    assert ok(world.cli("plan", "cancel", "--agent", "ada")) == (
        "cancelled plan mode of agent ada (was executing)\n"
    )
    assert [row[:2] for row in world.audit("ada")[-2:]] == [
        ("operator", "approved"),
        ("operator", "cancelled"),
    ]


@pytest.mark.parametrize(
    "command",
    [
        ("plan", "status"),
        ("plan", "enter"),
        ("plan", "approve"),
        ("plan", "reject"),
        ("plan", "cancel"),
        ("plan", "result"),
        ("plan", "merge"),
        ("plan", "discard"),
    ],
)
def test_an_unknown_agent(world: World, command: tuple[str, ...]) -> None:
    assert refused(world.cli(*command, "--agent", "zed")) == (
        "there is no agent named 'zed'; plancord agents list shows them"
    )


def test_a_bad_config_is_exit_2(world: World) -> None:
    world.config.write_text("data_dir: state\nplan_mode:\n  enabled: maybe\n")
    message = refused(world.cli("agents", "list"), code=2)
    assert message.startswith(f"{world.config}:3: plan_mode.enabled:")


def test_usage_errors_are_exit_2(world: World) -> None:
    missing = world.cli("plan", "approve")
    assert missing.returncode == 2
    assert "--agent" in missing.stderr
    zero = world.cli("plan", "approve", "--agent", "ada", "--revision", "0")
    assert zero.returncode == 2
    assert "revisions are numbered from 1" in zero.stderr
    mode = world.cli("plan", "approve", "--agent", "ada", "--mode", "yolo")
    assert mode.returncode == 2


def test_a_missing_database_is_not_created(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text("data_dir: empty\n")
    world = World(tmp_path, config)
    message = refused(world.cli("agents", "list"))
    assert message.startswith(f"no database at {tmp_path / 'empty' / 'plancord.db'}; run plancord")
    assert not (tmp_path / "empty" / "plancord.db").exists()


def test_a_database_at_another_version_is_refused(world: World) -> None:
    latest = discover()[-1].version
    with closing(sqlite3.connect(world.db)) as conn:
        conn.execute(f"PRAGMA user_version = {latest + 1}")
        conn.commit()
    assert "newer than this plancord knows" in refused(world.cli("agents", "list"))
    with closing(sqlite3.connect(world.db)) as conn:
        conn.execute(f"PRAGMA user_version = {latest - 1}")
        conn.commit()
    message = refused(world.cli("plan", "status", "--agent", "ada"))
    assert message.endswith("run plancord migrate first")


def test_help_states_what_a_running_bot_sees(world: World) -> None:
    # Said once, on the group's help; each action's help is its own line.
    text = ok(world.cli("plan", "--help", config=False))
    flat = " ".join(text.split())
    assert 'audited with the actor "operator"' in flat
    assert "resumes an agent waiting for approval only when the approval happens" in flat
    assert "post a message in its channel" in flat


def test_approval_modes_match_the_domain() -> None:
    assert tuple(mode.value for mode in ApprovalMode) == APPROVAL_MODES


def test_diff_of_the_current_plan_and_of_the_last_one_after_it_ended(world: World) -> None:
    world.submit("ada")
    world.resubmit("ada")
    current = ok(world.cli("plan", "diff", "--agent", "ada"))
    assert current.startswith("# Changes from v1 to v2")
    assert "**with a DB check**" in current
    assert "check the database too" in current

    ok(world.cli("plan", "cancel", "--agent", "ada"))
    assert world.state("ada").phase is Phase.INACTIVE
    assert ok(world.cli("plan", "diff", "--agent", "ada")) == current
    assert ok(world.cli("plan", "diff", "--agent", "bob")) == (
        "agent bob has no plan with two revisions to compare\n"
    )


def test_approving_past_a_reviews_blocker_needs_the_count_confirmed(world: World) -> None:
    world.config.write_text(
        "data_dir: state\nplan_mode:\n  review:\n    mode: require_acknowledgement\n"
    )
    revision = world.submit("ada")
    blocker = Finding(severity=Severity.BLOCKER, step=2, text="No test covers /health.")

    async def review(store: SqlStore, _: PlanningService) -> None:
        kept = PlanReview(model="claude-test", findings=(blocker,))
        at = datetime.now(UTC)
        await PlanReviewStore(store.db).finish(revision.plan_id, 1, ReviewKind.PLAN, kept, at)

    world.do(review)
    message = refused(world.cli("plan", "approve", "--agent", "ada"))
    assert "1 blocker" in message and "--despite-blockers 1" in message
    assert world.state("ada").phase is Phase.SUBMITTED
    wrong = refused(world.cli("plan", "approve", "--agent", "ada", "--despite-blockers", "2"))
    assert "--despite-blockers 1" in wrong

    ok(world.cli("plan", "approve", "--agent", "ada", "--despite-blockers", "1"))
    assert world.state("ada").phase is Phase.EXECUTING
    actor, action, _, detail = world.audit("ada")[-1]
    assert (actor, action) == ("operator", "approved")
    assert detail["review_blockers_acknowledged"] == 1


def test_no_result_to_show_or_decide(world: World) -> None:
    world.submit("ada")
    assert refused(world.cli("plan", "result", "--agent", "ada")) == (
        "agent ada has no executed plan with a result"
    )
    for verb in ("merge", "discard"):
        assert refused(world.cli("plan", verb, "--agent", "ada")) == (
            f"agent ada has no result waiting for a decision; nothing to {verb} "
            "(plancord plan result --agent ada shows its newest)"
        )
    assert "result" not in ok(world.cli("plan", "status", "--agent", "ada"))
    assert json.loads(ok(world.cli("plan", "status", "--agent", "ada", "--json")))["result"] is None
    assert [row[1] for row in world.audit("ada")] == ["entered", "submitted"]


def test_a_kept_reviews_hold_travels_with_it_to_the_cli_without_the_config_file(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The review was made under require_acknowledgement; the operator approves with only
    PLANCORD_DATA_DIR (no config file, so no review settings): the blocker still needs
    --despite-blockers, and the override is audited."""
    revision = world.submit("ada")
    blocker = Finding(severity=Severity.BLOCKER, step=2, text="No test covers /health.")

    async def review(store: SqlStore, _: PlanningService) -> None:
        kept = PlanReview(model="claude-test", findings=(blocker,), acknowledge_blockers=True)
        at = datetime.now(UTC)
        await PlanReviewStore(store.db).finish(revision.plan_id, 1, ReviewKind.PLAN, kept, at)

    world.do(review)
    monkeypatch.setenv("PLANCORD_DATA_DIR", str(world.root / "state"))
    message = refused(world.cli("plan", "approve", "--agent", "ada", config=False))
    assert "1 blocker" in message and "--despite-blockers 1" in message
    assert world.state("ada").phase is Phase.SUBMITTED

    ok(world.cli("plan", "approve", "--agent", "ada", "--despite-blockers", "1", config=False))
    actor, action, _, detail = world.audit("ada")[-1]
    assert (actor, action) == ("operator", "approved")
    assert detail["review_blockers_acknowledged"] == 1


def test_a_review_that_holds_holds_from_the_submission_itself(world: World) -> None:
    """The plan was submitted under require_acknowledgement and no listener has started its
    review yet; the operator approves under a config without review settings: the
    submission's own transaction marked the review as one that holds, so it is refused."""
    world.config.write_text(
        "data_dir: state\nplan_mode:\n  review:\n    mode: require_acknowledgement\n"
    )
    world.submit("ada")
    world.config.write_text("data_dir: state\n")
    message = refused(world.cli("plan", "approve", "--agent", "ada"))
    assert "the plan's review has not finished yet" in message, message
    assert world.state("ada").phase is Phase.SUBMITTED


def test_a_running_review_that_holds_refuses_the_cli_without_the_config_file(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bot started the review under require_acknowledgement and it still runs; the
    operator approves with only PLANCORD_DATA_DIR: the review's own row holds the approval
    (no blocker count can release it), audited, until the review is kept."""
    revision = world.submit("ada")
    acknowledging = ReviewSettings(mode=ReviewMode.REQUIRE_ACKNOWLEDGEMENT)

    async def start(store: SqlStore, _: PlanningService) -> None:
        reviews = PlanReviewStore(store.db)
        at = datetime.now(UTC)
        hold = running_hold(acknowledging)
        assert await reviews.start(revision.plan_id, 1, ReviewKind.PLAN, at, hold=hold)

    world.do(start)
    monkeypatch.setenv("PLANCORD_DATA_DIR", str(world.root / "state"))
    for extra in ((), ("--despite-blockers", "1")):
        message = refused(world.cli("plan", "approve", "--agent", "ada", *extra, config=False))
        assert "the plan's review has not finished yet" in message, message
    assert world.state("ada").phase is Phase.SUBMITTED
    refusals = [row for row in world.audit("ada") if row[1] == "decision-refused"]
    assert len(refusals) == 2 and "not finished" in str(refusals[-1][3]["why"])

    async def keep(store: SqlStore, _: PlanningService) -> None:
        kept = PlanReview(model="claude-test", acknowledge_blockers=True)
        at = datetime.now(UTC)
        await PlanReviewStore(store.db).finish(revision.plan_id, 1, ReviewKind.PLAN, kept, at)

    world.do(keep)
    ok(world.cli("plan", "approve", "--agent", "ada", config=False))
    assert world.audit("ada")[-1][:2] == ("operator", "approved")


def test_plan_edit_from_a_file_and_plan_comment(world: World) -> None:
    revision = world.submit("ada")
    edited = revision.markdown.replace("Add /health", "Add /health and /ready")
    path = world.root / "PLAN.md"
    path.write_text(edited)
    out = ok(world.cli("plan", "edit", "--agent", "ada", "--file", str(path)))
    assert out.startswith("edited plan v1 of agent ada into v2 (")
    state = world.state("ada")
    assert (state.phase, state.revision) == (Phase.SUBMITTED, 2)
    actor, action, number, detail = world.audit("ada")[-1]
    assert (actor, action, number) == ("operator", "submitted", 2)
    assert (detail["author"], detail["revises"]) == ("human-edit", 1)

    path.write_text(edited.replace("## Steps", "## Steps\n   tools: `view`"))
    message = refused(world.cli("plan", "edit", "--agent", "ada", "--file", str(path)))
    assert "line 4: a step starts with" in message and "nothing changed" in message

    out = ok(world.cli("plan", "comment", "--agent", "ada", "--step", "2", "check", "the", "DB"))
    assert out == "comment #1 on step 2 of plan v2 of agent ada kept\n"
    assert world.audit("ada")[-1][:2] == ("operator", "commented")
