"""The lock files a killed git leaves in an agent's repository, through the real bot: the
approval is killed after git switched the workspace to its branch, and the git that was
running then is taken to have left its locks (``HEAD.lock``, ``index.lock``, the branch's
ref lock), untouched since, as a SIGKILL leaves them. After the restart the recovery
removes them and undoes the start, and the next Approve executes. A lock a live process
holds open is left, the refusal naming it, until that process is gone; a link named like
a lock, or a linked directory holding one, is never followed."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from plancord.agent.execution import host_git as branch_module
from plancord.agent.execution import lease as leases
from tests.discord_bot.test_approval_intents import (
    Kill,
    _approve,
    _open_starts,
    _recovered_rows,
    _restarted,
    _submitted,
    _waits_as_reviewed,
    git_run,
)
from tests.world import PlanScene

LONG_AGO = time.time() - 3600


def _left_by_a_killed_git(path: Path) -> Path:
    """``path`` as git's lock file a killed git left: written, closed, untouched since."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("0" * 40 + "\n")
    os.utime(path, (LONG_AGO, LONG_AGO))
    return path


async def _killed_after_the_switch(
    plan_scene: Any, monkeypatch: pytest.MonkeyPatch
) -> tuple[PlanScene, Path, dict[str, str], str]:
    """ada's approval killed once git switched the workspace to the execution branch; the
    scene, the workspace, what git showed as reviewed and the branch's name."""
    scene, workspace, before = await _submitted(plan_scene)
    kill = Kill(
        monkeypatch, branch_module, "run_git", git_run("reset", "--quiet", "--mixed"), after=True
    )
    await kill.during(_approve(scene))
    assert kill.reached.is_set()
    head = (workspace / ".git" / "HEAD").read_text().strip()
    assert head.startswith("ref: refs/heads/plancord/"), head
    return scene, workspace, before, head.removeprefix("ref: refs/heads/")


async def test_the_restarts_recovery_removes_a_killed_gits_locks_and_approve_works(
    plan_scene: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    scene, workspace, before, branch = await _killed_after_the_switch(plan_scene, monkeypatch)
    git_dir = workspace / ".git"
    locks = [
        _left_by_a_killed_git(git_dir / "HEAD.lock"),
        _left_by_a_killed_git(git_dir / "index.lock"),
        _left_by_a_killed_git(git_dir / "refs" / "heads" / f"{branch}.lock"),
    ]

    await _restarted(scene)

    assert [lock for lock in locks if lock.exists()] == []
    told = [t for t in scene.bot_texts() if "HEAD.lock" in t and "removed them" in t]
    assert told, scene.bot_texts()[-3:]
    [row] = await _recovered_rows(scene)
    assert set(row.detail["locks_removed"]) == {  # type: ignore[arg-type]
        ".git/HEAD.lock",
        ".git/index.lock",
        f".git/refs/heads/{branch}.lock",
    }
    await _waits_as_reviewed(scene, workspace, before)


async def test_a_lock_a_live_process_holds_open_is_left_and_the_refusal_names_it(
    plan_scene: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    scene, workspace, before, _ = await _killed_after_the_switch(plan_scene, monkeypatch)
    # The restarted bots' leases: each later pass of the recovery runs once a lease expired,
    # and the restart waits for them, so eight seconds instead of thirty (still longer than
    # SimCord's settle timeout, and enough for the lease to hold on a loaded machine).
    monkeypatch.setattr(leases, "LEASE_SECONDS", 8.0)
    lock = _left_by_a_killed_git(workspace / ".git" / "HEAD.lock")
    holder = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        "import sys, time; f = open(sys.argv[1]); print('held', flush=True); time.sleep(600)",
        str(lock),
        stdout=asyncio.subprocess.PIPE,
    )
    try:
        assert holder.stdout is not None and await holder.stdout.readline() == b"held\n"
        await _restarted(scene)

        assert lock.exists()
        # Said at the restart's recovery, and again at each later pass that finds it held.
        told = [t for t in scene.bot_texts() if "could not undo its branch yet" in t]
        assert told
        for said in told:
            assert "`.git/HEAD.lock` (a running process holds it open)" in said, said
            assert "removed by hand once no git runs" in said, said
        assert await _open_starts(scene) != []
    finally:
        holder.kill()
        await holder.wait()

    # Its holder gone, the lock is stale: the next start's recovery removes it.
    await _restarted(scene)
    assert not lock.exists()
    await _waits_as_reviewed(scene, workspace, before)


async def test_links_named_like_locks_are_never_followed(
    plan_scene: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    scene, workspace, before, _ = await _killed_after_the_switch(plan_scene, monkeypatch)
    git_dir = workspace / ".git"
    outside = tmp_path / "outside"
    target = _left_by_a_killed_git(outside / "host.lock")
    inside_linked = _left_by_a_killed_git(outside / "HEAD.lock")
    (git_dir / "shallow.lock").symlink_to(target)
    os.utime(git_dir / "shallow.lock", (LONG_AGO, LONG_AGO), follow_symlinks=False)
    (git_dir / "elsewhere").symlink_to(outside, target_is_directory=True)
    stale = _left_by_a_killed_git(git_dir / "HEAD.lock")

    await _restarted(scene)

    assert not stale.exists()
    assert target.read_text() == "0" * 40 + "\n"
    assert inside_linked.exists()
    assert (git_dir / "shallow.lock").is_symlink()
    [row] = await _recovered_rows(scene)
    assert row.detail["locks_removed"] == [".git/HEAD.lock"]
    (git_dir / "shallow.lock").unlink()
    (git_dir / "elsewhere").unlink()
    await _waits_as_reviewed(scene, workspace, before)
