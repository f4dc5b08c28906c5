"""What Merge of a pinned result costs on a 10,000-file workspace.

Run with ``python benchmarks/bench_merge.py [RUNS]``. On the 10,000-file workspace of
``bench_observe`` (tracked, untracked and ignored files) an execution branch is started and
three steps are committed; then, RUNS times each, alternately, with the workspace put back
on the branch and the base put back between runs:

* ``unpinned``: the git runs Merge made before results were pinned (the branch's tip after a
  clean-tree check, fast-forwarded onto the base): ``status``, ``rev-parse HEAD``,
  ``rev-parse main``, ``merge-base --is-ancestor``, ``update-ref``, ``symbolic-ref``;
* ``pinned``: ``ExecutionBranch.merge`` as it is now: the same, plus the check that the
  base is where the record says and that the pinned commit builds on it;
* ``moved``: ``ExecutionBranch.merge`` when the branch gained a commit after the result was
  pinned (the working tree is moved back to the pinned commit).

Each as median and p90, and as a ratio to ``unpinned``, measured in one run. Goal: ``pinned``
no slower than 1.1x.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

from _common import percentile, timed
from bench_observe import git, make_workspace
from plancord.agent.execution.branch import BranchRecord, ExecutionBranch
from plancord.agent.host_io.git_run import run_git
from plancord.sandbox import SandboxPolicy

GOAL = 1.1


def row(name: str, samples: list[float], base: float) -> str:
    median = statistics.median(samples)
    high = percentile(samples, 0.9)
    return (
        f"  {name:<9} median {median * 1000:8.1f} ms   p90 {high * 1000:8.1f} ms   "
        f"{median / base:6.2f}x"
    )


async def unpinned_merge(policy: SandboxPolicy, record: BranchRecord) -> None:
    """The git runs of Merge before results were pinned (its fast-forward path)."""

    async def checked(*args: str) -> str:
        out = await run_git(policy, *args)
        if not out.ok:
            raise RuntimeError(out.message)
        return out.stdout

    await checked("symbolic-ref", "--quiet", "HEAD")
    await checked("status", "--porcelain", "--untracked-files=all")
    tip = (await checked("rev-parse", "HEAD")).strip()
    base_now = (await checked("rev-parse", f"refs/heads/{record.base}")).strip()
    await checked("merge-base", "--is-ancestor", base_now, tip)
    await checked("update-ref", f"refs/heads/{record.base}", tip, base_now)
    await checked("symbolic-ref", "HEAD", f"refs/heads/{record.base}")


def put_back(root: Path, record: BranchRecord, tip: str) -> None:
    """The workspace on the branch at ``tip`` again, the base where it started."""
    git(root, "update-ref", f"refs/heads/{record.base}", record.base_commit)
    git(root, "update-ref", f"refs/heads/{record.branch}", tip)
    git(root, "symbolic-ref", "HEAD", f"refs/heads/{record.branch}")
    git(root, "reset", "--quiet", "--hard", tip)


async def measure(root: Path, runs: int) -> bool:
    policy = SandboxPolicy.executing(root).for_host_git()  # the host's git
    branches = ExecutionBranch(policy)
    record = await branches.start("bench", 1)
    parent = record.reviewed_commit
    for step in range(1, 4):
        for n in range(10):
            (root / "src" / f"d{n:02}" / f"step_{step}_{n}.py").write_text(f"value = {n}\n" * 50)
        made = await branches.commit_step(record, f"Step {step}", parent)
        parent = made or parent
    pinned = replace(record, result_commit=parent)
    (root / "later.txt").write_text("after the card\n")
    git(root, "add", "later.txt")
    git(root, "commit", "-qm", "later")
    later = (await run_git(policy, "rev-parse", "HEAD")).stdout.strip()

    before: list[float] = []
    now: list[float] = []
    moved: list[float] = []
    for _ in range(runs):
        put_back(root, record, parent)
        before.append(await timed(lambda: unpinned_merge(policy, record)))
        put_back(root, record, parent)
        now.append(await timed(lambda: branches.merge(pinned)))
        put_back(root, record, later)
        moved.append(await timed(lambda: branches.merge(pinned)))
    base = statistics.median(before)
    print(f"Merge on a 10,000-file workspace, {runs} runs each, alternately:")
    print(row("unpinned", before, base))
    print(row("pinned", now, base))
    print(row("moved", moved, base))
    met = statistics.median(now) / base <= GOAL
    print(f"  goal: pinned no slower than {GOAL:g}x unpinned: {'met' if met else 'NOT met'}")
    return met


def main(runs: int) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp).resolve() / "workspace"
        make_workspace(root)
        met = asyncio.run(measure(root, runs))
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]) if len(sys.argv) > 1 else 15))
