"""Which of a git directory's lock files are stale: left untouched long enough and held open
by no process; a fresh one, a held one, a link or what a linked directory holds is left."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

from plancord.agent.execution.git_locks import refused_by_lock, sweep_stale_locks

LONG_AGO = time.time() - 3600


def _lock(path: Path, *, old: bool = True) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("x\n")
    if old:
        os.utime(path, (LONG_AGO, LONG_AGO))
    return path


def test_only_old_unheld_regular_lock_files_are_removed(tmp_path: Path) -> None:
    git = tmp_path / ".git"
    stale = _lock(git / "refs" / "heads" / "plancord" / "p-v1.lock")
    fresh = _lock(git / "index.lock", old=False)
    outside = _lock(tmp_path.parent / f"{tmp_path.name}-outside" / "HEAD.lock")
    (git / "linked").symlink_to(outside.parent, target_is_directory=True)
    _lock(git / "objects" / "ab" / "never-looked-at.lock")
    not_a_lock = _lock(git / "HEAD")

    swept = sweep_stale_locks(tmp_path)

    assert swept.removed == (".git/refs/heads/plancord/p-v1.lock",)
    assert swept.left == ((".git/index.lock", "changed less than 60 s ago"),)
    assert not stale.exists()
    assert fresh.exists() and outside.exists() and not_a_lock.exists()
    assert "`.git/index.lock` (changed less than 60 s ago)" in swept.left_text()
    assert swept.stale_in is not None and 0 < swept.stale_in <= 60


def test_a_lock_held_open_by_another_process_is_left(tmp_path: Path) -> None:
    lock = _lock(tmp_path / ".git" / "packed-refs.lock")
    with lock.open("rb") as handle:
        holder = subprocess.Popen(["sleep", "60"], stdin=handle)
    try:
        swept = sweep_stale_locks(tmp_path)  # only the other process holds it now
    finally:
        holder.kill()
        holder.wait()
    assert swept.left == ((".git/packed-refs.lock", "a running process holds it open"),)
    assert swept.stale_in is None  # waiting would not make it stale
    assert lock.exists()
    assert sweep_stale_locks(tmp_path).removed == (".git/packed-refs.lock",)


def test_a_linked_git_directory_is_not_entered(tmp_path: Path) -> None:
    real = tmp_path / "real"
    lock = _lock(real / "HEAD.lock")
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / ".git").symlink_to(real, target_is_directory=True)

    assert sweep_stale_locks(workspace).removed == ()
    assert lock.exists()


def test_gits_lock_refusal_is_recognised() -> None:
    said = "fatal: Unable to create '/w/.git/HEAD.lock': File exists.\n\nAnother git process"
    assert refused_by_lock(said)
    assert not refused_by_lock("fatal: not a git repository")
