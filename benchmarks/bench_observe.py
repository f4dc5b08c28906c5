"""What observing a call's effects costs, and the completion card's git work.

Run with ``python benchmarks/bench_observe.py [RUNS]``. On a 10,000-file workspace (a git
repository with tracked, untracked and ignored files) it prints, for RUNS mutating calls:

* ``no-op call``: a sandboxed ``true``, as an executing agent's command runs (the baseline);
* ``observe``: ``WorkspaceObserver.observe`` after a sandboxed command appended to one file
  (the kernel's change notices, a stat of the paths they name, the comparison, the copy of
  the changed file);
* ``full walk``: the same with ``kernel_watch`` off (a stat of every path), as it runs when
  the kernel's notices cannot be trusted;
* ``git status``: the alternative, ``git status --porcelain=v2 -z --ignored
  --untracked-files=all`` through the sandbox's git runner;

each as median and p90, and as a ratio to the no-op call, measured alternately in one run.
Then the one-off first look (which keeps every file's content, packed, for restores) as a
ratio to a plain ``cp -a`` of the workspace's files and to a full stat walk, measured alternately,
and the time to build the
per-step summary (``ExecutionBranch.steps``) and the full diff (``diff_file``, read back)
for a 1 MB diff over three steps, and the execution start that keeps the ignored files
for Discard. Goal: observe's median under 20 ms.
"""

from __future__ import annotations

import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import percentile, timed
from plancord.agent.execution.branch import ExecutionBranch
from plancord.agent.execution.branch_reading import BranchReading
from plancord.agent.execution.observe import Effects, WorkspaceObserver
from plancord.agent.execution.snapshot import take_snapshot
from plancord.agent.host_io.git_run import run_git
from plancord.agent.host_io.walk import WorkspaceTree
from plancord.core.execution import StepNumber
from plancord.sandbox import SandboxPolicy, run_sandboxed

FILES = 10_000
GOAL_MS = 20.0


def git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(root), "-c", "user.name=b", "-c", "user.email=b@b", *args],
        check=True,
        capture_output=True,
    )


def make_workspace(root: Path) -> None:
    """9,000 tracked files in 100 directories, 500 untracked, 500 ignored."""
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / ".gitignore").write_text("build/\n")
    for n in range(FILES):
        if n < 9_000:
            path = root / "src" / f"d{n % 100:02}" / f"f{n}.py"
        elif n < 9_500:
            path = root / "notes" / f"n{n}.txt"
        else:
            path = root / "build" / f"o{n % 10}" / f"b{n}.o"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# file {n}\n" + "x = 1\n" * 20)
    git(root, "add", "src", ".gitignore")
    git(root, "commit", "-qm", "base")


def row(name: str, samples: list[float], base: float | None) -> str:
    median, high = statistics.median(samples) * 1000, percentile(samples, 0.9) * 1000
    ratio = f"{median / base:6.2f}x" if base else "      "
    return f"  {name:<12} median {median:8.2f} ms   p90 {high:8.2f} ms   {ratio}"


async def copied(root: Path, target: Path) -> None:
    """A plain copy of the workspace's files (not its repository), the naive way to keep them."""
    sources = [str(root / name) for name in ("src", "notes", "build", ".gitignore")]
    process = await asyncio.create_subprocess_exec("mkdir", str(target))
    await process.wait()
    process = await asyncio.create_subprocess_exec("cp", "-a", *sources, str(target))
    if await process.wait() != 0:
        raise SystemExit("cp -a failed")


async def observed(observer: WorkspaceObserver, target: str) -> float:
    started = time.perf_counter()
    effects = await observer.observe()
    took = time.perf_counter() - started
    if not isinstance(effects, Effects) or effects.paths != (target,):
        raise SystemExit(f"observation wrong: {effects}")
    return took


async def observation(root: Path, stash: Path, runs: int) -> bool:
    policy = SandboxPolicy.executing(root)
    watching = WorkspaceObserver(root, stash / "watching")
    walking = WorkspaceObserver(root, stash / "walking", kernel_watch=False)
    await walking.start()
    first_look: list[float] = []
    copy: list[float] = []
    stat_walk: list[float] = []
    for n in range(5):
        first_look.append(await timed(watching.start))
        copy_to = stash / f"copy{n}"
        copy.append(await timed(lambda: copied(root, copy_to)))  # noqa: B023 - awaited at once
        stat_walk.append(
            await timed(
                lambda: asyncio.to_thread(
                    take_snapshot, WorkspaceTree(root), max_paths=100_000, max_seconds=60
                )
            )
        )
    noop: list[float] = []
    watch: list[float] = []
    walk: list[float] = []
    status: list[float] = []
    for n in range(runs):
        noop.append(await timed(lambda: run_sandboxed(["true"], policy, timeout=30)))
        target = f"src/d{n % 100:02}/f{n % 100}.py"
        await run_sandboxed(["bash", "-c", f"echo 'y = {n}' >> {target}"], policy, timeout=30)
        watch.append(await observed(watching, target))
        walk.append(await observed(walking, target))
        status.append(
            await timed(
                lambda: run_git(
                    policy,
                    "status",
                    "--porcelain=v2",
                    "-z",
                    "--ignored",
                    "--untracked-files=all",
                )
            )
        )
    watching.close()
    base = statistics.median(noop) * 1000
    print(f"observation of a mutating call, {FILES:,}-file workspace, {runs} calls:")
    print(row("no-op call", noop, base))
    print(row("observe", watch, base))
    print(row("  full walk", walk, base))
    print(row("git status", status, base))
    copy_ms = statistics.median(copy) * 1000
    print(f"first look (every file's content kept for restores), {FILES:,} files, 5 runs:")
    print(row("cp -a", copy, copy_ms))
    print(row("first look", first_look, copy_ms))
    print(row("stat walk", stat_walk, copy_ms))
    met = statistics.median(watch) * 1000 < GOAL_MS
    print(f"  goal: observe median under {GOAL_MS:g} ms: {'met' if met else 'NOT met'}")
    return met


async def completion(root: Path, stash: Path) -> None:
    policy = SandboxPolicy.executing(root).for_host_git()  # the host's git
    plain = ExecutionBranch(policy)
    branches = ExecutionBranch(policy, kept=stash / "kept")
    reading = BranchReading(policy)
    starts: list[float] = []
    keeping: list[float] = []
    for n in range(3):
        starts.append(await timed(lambda: plain.start("plain", n)))  # noqa: B023
        keeping.append(await timed(lambda: branches.start("kept", n)))  # noqa: B023
    record = await branches.start("bench", 1)
    line = "".join(f"value_{n} = {n} * 2  # a line of about fifty bytes\n" for n in range(7_000))
    recorded: list[tuple[StepNumber, str]] = []
    for step in range(1, 4):
        for n in range(10):
            (root / "src" / f"d{n:02}" / f"new_{step}_{n}.py").write_text(line[: len(line) // 10])
        parent = recorded[-1][1] if recorded else record.reviewed_commit
        commit = await branches.commit_step(record, f"Step {step}", parent)
        if commit is not None:
            recorded.append((StepNumber(step), commit))
    noop = [await timed(lambda: run_sandboxed(["true"], policy, timeout=30)) for _ in range(5)]

    async def card() -> int:
        steps = await reading.steps(recorded)
        size = 0
        async with reading.diff_file(record) as diff:
            with diff.open("rb") as stream:
                while chunk := stream.read(1 << 16):
                    size += len(chunk)
        return size + len(steps)

    size = await card()
    samples = [await timed(card) for _ in range(5)]
    base = statistics.median(noop) * 1000
    print(f"completion card: per-step summary + full diff ({size / 1e6:.1f} MB), 5 runs:")
    print(row("no-op call", noop, base))
    print(row("summary+diff", samples, base))
    print("execution start (git's reviewed-state commit), 3 runs each:")
    print(row("start", starts, statistics.median(starts) * 1000))
    print(row("  + keep", keeping, statistics.median(starts) * 1000))
    print("  (+ keep: the 500 ignored files kept for Discard)")


async def measure(root: Path, stash: Path, runs: int) -> int:
    met = await observation(root, stash, runs)
    await completion(root, stash)
    return 0 if met else 1


def main(runs: int) -> int:
    with tempfile.TemporaryDirectory() as temporary:
        here = Path(temporary).resolve()
        make_workspace(here / "workspace")
        return asyncio.run(measure(here / "workspace", here / "stash", runs))


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]) if len(sys.argv) > 1 else 30))
