"""An approval that git and the database agree on, through the real bot: the approval killed
before git changed anything, while git makes the execution branch, after git made it but
before the approval's transaction, and while the branch of an approval that lost to a
rejection is being undone; each followed by a restart. The database locked across the
approval's transaction (the next click finishes the undo); two approvals at once from the
plan card and the operator's shell.

A kill is the approval's own task stopped where it stands (the click's handler cancelled
while it waits inside a git run or the store's write), the bot then closed and started
again over the same database and workspace, as a process exit and a new process would.
Whatever the moment, after the restart the plan is either approved and executing on its
branch, or still waiting for a decision with git exactly as it was reviewed."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Awaitable, Callable
from contextlib import suppress
from pathlib import Path
from typing import Any

import pytest

from plancord.agent.execution import host_git as branch_module
from plancord.command.operator import open_services, plan_approve
from plancord.core.planning import Actor, ApprovalMode, AuditEntry, Phase, PlanRef
from plancord.storage.executions import ExecutionStore
from plancord.storage.store import SqlStore
from tests.discord_bot.result_card.completed import git, reply
from tests.fakes.anthropic_server import ToolCall, text_turn, tool_turn
from tests.world import PlanScene

PLAN = {
    "summary": "Add a greeting module",
    "steps": [{"description": "Write greet.py", "tools": ["create_file"], "files": ["greet.py"]}],
}
WORK = (
    tool_turn(ToolCall("create_file", {"path": "greet.py", "content": "x = 1\n"})),
    text_turn("done"),
)
IDENTITY = ("-c", "user.name=person", "-c", "user.email=person@example.invalid")


class Kill:
    """Stops ``owner.name`` where ``matches`` picks its call, before or right after the
    original ran, as a SIGKILL there would: the approval's task never returns."""

    def __init__(
        self,
        monkeypatch: pytest.MonkeyPatch,
        owner: Any,
        name: str,
        matches: Callable[..., bool],
        *,
        after: bool,
    ) -> None:
        self.reached = asyncio.Event()
        self.task: asyncio.Task[Any] | None = None
        self._monkeypatch = monkeypatch
        self._owner, self._name = owner, name
        self._original = original = getattr(owner, name)

        async def killed(*args: Any, **kwargs: Any) -> Any:
            if self.reached.is_set() or not matches(*args):
                return await original(*args, **kwargs)
            if after:
                await original(*args, **kwargs)
            self.task = asyncio.current_task()
            self.reached.set()
            await asyncio.Event().wait()
            raise AssertionError("a killed call went on")

        monkeypatch.setattr(owner, name, killed)

    async def during(self, approval: Callable[[], Awaitable[Any]]) -> None:
        """Run ``approval`` until it reaches the kill (or ends without reaching it), kill
        it, and put the patched method back for the next process."""
        started = asyncio.ensure_future(approval())
        reached = asyncio.ensure_future(self.reached.wait())
        await asyncio.wait({started, reached}, return_when=asyncio.FIRST_COMPLETED)
        reached.cancel()
        if self.task is not None:
            self.task.cancel()
        with suppress(asyncio.CancelledError, Exception):
            await started
        self._monkeypatch.setattr(self._owner, self._name, self._original)


def git_run(*words: str) -> Callable[..., bool]:
    """A git run (``run_git(policy, *args)``) whose arguments start with ``words``."""
    return lambda _policy, *args: args[: len(words)] == words


def branch_ref_update(_policy: Any, *args: str) -> bool:
    """``update-ref refs/heads/plancord/…``: the execution branch made."""
    return len(args) > 1 and args[0] == "update-ref" and args[1].startswith("refs/heads/plancord/")


def branch_ref_delete(_policy: Any, *args: str) -> bool:
    """``update-ref -d refs/heads/plancord/…``: the execution branch deleted."""
    return (
        args[:2] == ("update-ref", "-d")
        and args[2:3] != ()
        and args[2].startswith("refs/heads/plancord/")
    )


def the_approval(_store: Any, transition: Any) -> bool:
    return bool(transition.audit.action == "approved")


async def _submitted(plan_scene: Any) -> tuple[PlanScene, Path, dict[str, str]]:
    """ada's plan waits for a decision over a workspace with a committed file changed, a
    staged file, an untracked file and an ignored one; what git shows of it then."""
    scene: PlanScene = await plan_scene([tool_turn(ToolCall("submit_plan", {"plan": PLAN})), *WORK])
    workspace = scene.app.manager.workspace_of("ada")
    (workspace / ".gitignore").write_text("*.log\n")
    (workspace / "notes.txt").write_text("first\n")
    git(workspace, "add", ".gitignore", "notes.txt")
    git(workspace, *IDENTITY, "commit", "--quiet", "-m", "notes")
    (workspace / "notes.txt").write_text("first\nchanged, not staged\n")
    (workspace / "staged.txt").write_text("staged\n")
    git(workspace, "add", "staged.txt")
    (workspace / "draft.txt").write_text("untracked\n")
    (workspace / "build.log").write_text("ignored\n")
    await scene.ana.slash(scene.channel, "plan start", task="add a greeting module")
    assert (await scene.state()).phase is Phase.SUBMITTED
    return scene, workspace, _git_view(workspace)


def _git_view(workspace: Path) -> dict[str, str]:
    """What a person sees of the repository: HEAD, the branches, the index, the status
    (ignored files included) and the files' contents."""
    return {
        "HEAD": git(workspace, "symbolic-ref", "HEAD").strip(),
        "branches": git(workspace, "for-each-ref", "--format=%(refname) %(objectname)"),
        "index": git(workspace, "write-tree").strip(),
        "status": git(workspace, "status", "--porcelain", "--untracked-files=all", "--ignored"),
        **{
            name: (workspace / name).read_text()
            for name in ("notes.txt", "staged.txt", "draft.txt", "build.log")
        },
    }


def _approve(scene: PlanScene) -> Callable[[], Awaitable[Any]]:
    return lambda: scene.ana.click(scene.plan_message(1), label="Approve")


async def _restarted(scene: PlanScene) -> None:
    await scene.restart()
    await scene.env.settle()


async def _open_starts(scene: PlanScene) -> list[str]:
    rows = await scene.app.db.fetchall("SELECT plan_id FROM start_intents WHERE state = 'open'")
    return [row["plan_id"] for row in rows]


async def _recovered_rows(scene: PlanScene) -> list[AuditEntry]:
    return [
        entry
        for entry in await scene.app.store.list_audit("ada")
        if entry.action == "decision-refused" and entry.detail.get("recovered")
    ]


async def _waits_as_reviewed(scene: PlanScene, workspace: Path, before: dict[str, str]) -> None:
    """The plan still waits with no execution, git exactly as it was reviewed, the channel
    told, and Approve works again: the plan executes on its branch."""
    assert (await scene.state()).phase is Phase.SUBMITTED
    executions = ExecutionStore(scene.app.db)
    assert await executions.latest("ada") is None
    assert _git_view(workspace) == before
    assert await _open_starts(scene) == []
    assert [t for t in scene.bot_texts() if "approval of ada's plan" in t and "interrupted" in t]
    assert len(await _recovered_rows(scene)) == 1

    await scene.ana.click(scene.plan_message(1), label="Approve")
    await scene.app.runtime.wait_idle("ada")

    record = await executions.latest("ada")
    assert record is not None and (await scene.state()).phase is not Phase.SUBMITTED
    assert git(workspace, "rev-parse", record.branch).strip() != record.base_commit
    assert git(workspace, "show", f"{record.reviewed_commit}:draft.txt") == "untracked\n"
    assert (workspace / "greet.py").exists() and (workspace / "build.log").exists()


@pytest.mark.parametrize(
    ("where", "matches", "after"),
    [
        ("before git changed anything", git_run("write-tree"), False),
        ("git made the branch, HEAD not yet on it", branch_ref_update, True),
        ("git made the branch and switched to it", git_run("reset", "--quiet", "--mixed"), True),
    ],
    ids=["before-git", "branch-made", "switched"],
)
async def test_an_approval_killed_in_git_is_undone_at_the_restart(
    plan_scene: Any,
    monkeypatch: pytest.MonkeyPatch,
    where: str,
    matches: Callable[..., bool],
    after: bool,
) -> None:
    scene, workspace, before = await _submitted(plan_scene)
    kill = Kill(monkeypatch, branch_module, "run_git", matches, after=after)

    await kill.during(_approve(scene))
    assert kill.reached.is_set(), where
    await _restarted(scene)

    await _waits_as_reviewed(scene, workspace, before)


async def test_an_approval_killed_before_its_transaction_is_undone_at_the_restart(
    plan_scene: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Git made the branch and switched to it; the approval's transaction (its state, its
    audit row, the execution's record) never ran."""
    scene, workspace, before = await _submitted(plan_scene)
    kill = Kill(monkeypatch, SqlStore, "save_transition", the_approval, after=False)

    await kill.during(_approve(scene))
    assert kill.reached.is_set()
    await _restarted(scene)

    await _waits_as_reviewed(scene, workspace, before)


async def test_an_approval_killed_after_its_transaction_executes_after_the_restart(
    plan_scene: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The approval committed: the plan is approved and its branch is checked out, before
    and after the restart, and nothing is undone."""
    scene, workspace, _ = await _submitted(plan_scene)
    kill = Kill(monkeypatch, SqlStore, "save_transition", the_approval, after=True)

    await kill.during(_approve(scene))
    await _restarted(scene)

    assert (await scene.state()).phase is Phase.EXECUTING
    record = await ExecutionStore(scene.app.db).latest("ada")
    assert record is not None and record.ended_at is None
    assert git(workspace, "symbolic-ref", "HEAD").strip() == f"refs/heads/{record.branch}"
    assert await _open_starts(scene) == []
    assert await _recovered_rows(scene) == []


async def test_the_branch_of_an_approval_that_lost_is_undone_even_if_killed_midway(
    plan_scene: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The operator rejects the plan while git makes ana's branch, so ana's approval does
    not commit and its branch is taken back; the process dies in the middle of that. After
    the restart nothing runs, git is as reviewed, and the agent can start a new plan."""
    scene, workspace, before = await _submitted(plan_scene)
    original = branch_module.run_git
    state = await scene.state()
    ref = PlanRef(agent="ada", plan_id=state.plan_id or "", revision=state.revision)

    async def rejected_meanwhile(policy: Any, *args: str, **kwargs: Any) -> Any:
        done = await original(policy, *args, **kwargs)
        if args[:3] == ("reset", "--quiet", "--mixed"):
            await scene.app.planning.reject(ref, Actor.operator(), "not now")
        return done

    monkeypatch.setattr(branch_module, "run_git", rejected_meanwhile)
    kill = Kill(monkeypatch, branch_module, "run_git", branch_ref_delete, after=True)

    await kill.during(_approve(scene))
    assert kill.reached.is_set()
    monkeypatch.setattr(branch_module, "run_git", original)
    await _restarted(scene)

    assert (await scene.state()).phase is Phase.INACTIVE
    executions = ExecutionStore(scene.app.db)
    assert await executions.running("ada") is None
    assert await executions.latest("ada") is None
    assert _git_view(workspace) == before
    assert await _open_starts(scene) == []
    assert [t for t in scene.bot_texts() if "interrupted" in t and "Nothing executes." in t]


async def test_the_database_locked_across_the_approval_then_the_next_click_approves(
    plan_scene: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Git made the branch; the approval's transaction cannot be written (another process
    holds the database's write lock past the busy timeout), so its branch is taken back and
    the member told. The next click on Approve finds nothing in its way and executes."""
    scene, workspace, before = await _submitted(plan_scene)
    path = scene.app.config.database_path
    assert path is not None
    holder = sqlite3.connect(path, isolation_level=None)
    original = branch_module.run_git

    async def locked_after_git(policy: Any, *args: str, **kwargs: Any) -> Any:
        done = await original(policy, *args, **kwargs)
        if args[:3] == ("reset", "--quiet", "--mixed"):
            holder.execute("BEGIN IMMEDIATE")
        return done

    monkeypatch.setattr(branch_module, "run_git", locked_after_git)
    try:
        first = reply(await scene.ana.click(scene.plan_message(1), label="Approve"))
    finally:
        if holder.in_transaction:
            holder.execute("ROLLBACK")
        holder.close()
        monkeypatch.setattr(branch_module, "run_git", original)

    assert "locked" in first.lower() or "database" in first.lower(), first
    assert (await scene.state()).phase is Phase.SUBMITTED
    assert _git_view(workspace) == before

    await scene.ana.click(scene.plan_message(1), label="Approve")
    await scene.app.runtime.wait_idle("ada")

    record = await ExecutionStore(scene.app.db).latest("ada")
    assert record is not None
    assert (await scene.state()).phase is not Phase.SUBMITTED
    assert (workspace / "greet.py").exists()
    assert await _open_starts(scene) == []
    assert [t for t in scene.bot_texts() if "git shows no branch of it" in t]
    assert len(await _recovered_rows(scene)) == 1


async def test_two_approvals_at_once_one_reaches_git_and_the_other_is_refused(
    plan_scene: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ana clicks Approve while the operator approves from the shell (another process's
    services over the same database). Whichever reaches git first is held there until the
    other has reached git too or been refused, so both get every chance to run."""
    scene, workspace, _ = await _submitted(plan_scene)
    kept = scene.world.data_dir / "agents" / "ada" / "kept"
    arrived: list[str] = []
    both_arrived, one_refused = asyncio.Event(), asyncio.Event()
    append_audit = SqlStore.append_audit

    async def audited(store: SqlStore, entry: AuditEntry) -> None:
        await append_audit(store, entry)
        if entry.action == "decision-refused":
            one_refused.set()

    monkeypatch.setattr(SqlStore, "append_audit", audited)
    original = branch_module.run_git

    async def held(policy: Any, *args: str, **kwargs: Any) -> Any:
        if args[:1] == ("write-tree",) and "GIT_INDEX_FILE" not in (kwargs.get("extra_env") or {}):
            arrived.append(str(len(arrived)))
            if len(arrived) == 2:
                both_arrived.set()
            waits = {asyncio.ensure_future(e.wait()) for e in (both_arrived, one_refused)}
            _, pending = await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
            for waiting in pending:
                waiting.cancel()
        return await original(policy, *args, **kwargs)

    monkeypatch.setattr(branch_module, "run_git", held)

    async def from_the_shell() -> str:
        async with open_services(scene.app.config) as services:
            try:
                return await plan_approve(services, "ada", 1, ApprovalMode.NORMAL)
            except Exception as exc:
                return str(exc)

    clicked, shell = await asyncio.gather(
        scene.ana.click(scene.plan_message(1), label="Approve"), from_the_shell()
    )
    await scene.app.runtime.wait_idle("ada")
    await scene.env.settle()

    answers = [reply(clicked), shell]
    assert len(arrived) == 1, f"both approvals ran git: {answers}"
    assert [a for a in answers if "already" in a], answers
    state = await scene.state()
    assert state.phase is not Phase.SUBMITTED and state.approved_by_name in ("ana", "operator")
    record = await ExecutionStore(scene.app.db).latest("ada")
    assert record is not None
    assert git(workspace, "for-each-ref", "--format=%(refname)", "refs/heads/plancord/") == (
        f"refs/heads/{record.branch}\n"
    )
    manifests = [m.read_text() for m in kept.rglob("manifest.json")]
    assert [m for m in manifests if "build.log" in m], "the kept ignored files were lost"
    approvals = [a for a, _ in await scene.audit() if a == "approved"]
    assert len(approvals) == 1
    assert await _open_starts(scene) == []
