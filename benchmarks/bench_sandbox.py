"""What the agent sandbox costs per command, against a plain spawn in the same run.

Run with ``python benchmarks/bench_sandbox.py [RUNS]``. For ``true``, ``ls`` and
``git status`` in a small repository it prints the median and p95 wall time of:

* ``plain``: ``subprocess.run`` of the command, no sandbox (the baseline);
* ``executing``: ``run_sandboxed`` as an executing agent runs it (bubblewrap: namespaces,
  limits);
* ``planning``: as a planning agent runs it (read-only view plus the inner wall, applied by
  the native ``landlock-exec`` when it is built, as it is wherever a C compiler is found);
* ``planning (py)``: the same with the Python trampoline as the inner wall (no compiler);
* ``exec, no cache``: as ``executing`` with git's reading of the repository config, and the
  walk for nested repositories, made afresh for every command (as before they were kept);
* ``exec, git open``: as ``executing`` without the git directories bound read-only (as the
  host's own git runs, and as every run was before they were); the ``git walls`` line after
  each command runs the two alternately (so a loaded machine weighs on both alike) and
  gives ``executing`` as a ratio to it, the cost of the walls (goal: at most 1.1);
* ``landlock only``: the fallback where bubblewrap cannot start (as the host's git runs
  there: a writing command of the agent's is refused in a repository's workspace);
* ``old trampoline``: the plan-mode Landlock trampoline alone, as before the sandbox.

Each sandboxed figure is also given as the difference from ``plain`` and as a ratio, and
planning's as the difference from executing's (``+exec``), the cost of the inner wall.

Then the same on a workspace with a real repository's shape (``_real_repo``: 5,000 files,
3,000 commits in two packs, 300 branches, 600 tags, loose and packed refs, a linked
worktree), with where the time of a run's preparation goes, phase by phase (the walk for
repositories, the git directories' walls, the config view, the argv and its memory files),
and each command's figures against ``plain`` there (goal: every one within +8 ms).
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import _real_repo
from _common import percentile_ms, timed_runs
from plancord.sandbox import (
    LayerChoice,
    SandboxPolicy,
    config_cache,
    config_view,
    git_dirs,
    hidden_argv,
    landlock_abi,
    layers,
    nested,
    run_sandboxed,
    runner,
)
from plancord.sandbox import landlock as landlock_module

COMMANDS = {"true": ["true"], "ls": ["ls", "-la"], "git status": ["git", "status", "--short"]}


async def alternately(
    runs: int, first: Callable[[], Awaitable[object]], second: Callable[[], Awaitable[object]]
) -> tuple[float, float]:
    """The medians of ``first`` and ``second`` run one after the other ``runs`` times."""
    firsts, seconds = [], []
    for _ in range(runs):
        firsts += await timed_runs(1, first)
        seconds += await timed_runs(1, second)
    return statistics.median(firsts), statistics.median(seconds)


def plain(argv: list[str], cwd: Path) -> Callable[[], Awaitable[object]]:
    def run() -> object:
        return subprocess.run(argv, cwd=cwd, capture_output=True, check=False)

    return lambda: asyncio.to_thread(run)


def sandboxed(
    argv: list[str], policy: SandboxPolicy, *, native: bool = True, cached: bool = True
) -> Callable[[], Awaitable[object]]:
    layout = layers.host_layout()
    chosen = layout if native else dataclasses.replace(layout, wall_helper=None)

    async def run() -> object:
        if not cached:
            config_cache.VIEWS.clear()
            nested.forget()
        setattr(runner, "host_layout", lambda: chosen)  # noqa: B010 (patched for this run)
        try:
            return await run_sandboxed(argv, policy, timeout=30)
        finally:
            setattr(runner, "host_layout", layers.host_layout)  # noqa: B010

    return run


def old_trampoline(argv: list[str], cwd: Path) -> Callable[[], Awaitable[object]]:
    command = [sys.executable, "-I", "-S", landlock_module.__file__, "readonly", "--", *argv]
    return plain(command, cwd)


async def main(runs: int) -> None:
    helper = await asyncio.to_thread(lambda: layers.host_layout().wall_helper)
    print(f"Landlock ABI {landlock_abi()}; native inner wall: {helper or 'not built'}")
    print(f"{runs} runs of each; times in ms")
    with tempfile.TemporaryDirectory() as directory:
        workspace = Path(directory)
        (workspace / "a.txt").write_text("hello\n")
        await plain(["git", "init", "-q"], workspace)()
        await asyncio.sleep(1.2)  # a config changed in the last second is not kept
        executing = SandboxPolicy.executing(workspace, layer=LayerChoice.BUBBLEWRAP)
        git_open = executing.for_host_git()
        planning = SandboxPolicy.read_only(
            workspace, layer=LayerChoice.BUBBLEWRAP
        ).behind_inner_wall()
        fallback = SandboxPolicy.executing(workspace, layer=LayerChoice.LANDLOCK).for_host_git()
        header = (
            f"{'command':<12} {'how':<16} {'median':>8} {'p95':>8} {'+ms':>7} {'ratio':>6} "
            f"{'+exec':>7}"
        )
        print(header)
        for name, argv in COMMANDS.items():
            actions: dict[str, Callable[[], Awaitable[object]]] = {
                "plain": plain(argv, workspace),
                "executing": sandboxed(argv, executing),
                "exec, no cache": sandboxed(argv, executing, cached=False),
                "exec, git open": sandboxed(argv, git_open),
                "planning": sandboxed(argv, planning),
                "planning (py)": sandboxed(argv, planning, native=False),
                "landlock only": sandboxed(argv, fallback),
                "old trampoline": old_trampoline(argv, workspace),
            }
            medians: dict[str, float] = {}
            for how, action in actions.items():
                await action()
                samples = await timed_runs(runs, action)
                median = medians[how] = statistics.median(samples)
                base, exec_ = medians["plain"], medians.get("executing")
                high = percentile_ms(samples, 0.95)
                over_exec = f"{(median - exec_) * 1000:7.1f}" if exec_ and how != "plain" else ""
                print(
                    f"{name:<12} {how:<16} {median * 1000:8.1f} {high:8.1f} "
                    f"{(median - base) * 1000:7.1f} {median / base:6.2f} {over_exec:>7}"
                )
            walled, open_ = await alternately(runs, actions["executing"], actions["exec, git open"])
            print(
                f"{name:<12} {'git walls':<16} executing {walled * 1000:.1f} / git open "
                f"{open_ * 1000:.1f} = {walled / open_:.3f}"
            )


REAL_GOAL_MS = 8.0


def phases(policy: SandboxPolicy, runs: int) -> dict[str, float]:
    """The median milliseconds of each phase of a run's preparation under ``policy`` (the
    config view kept, as in every run after the first)."""
    layer = layers.choose_layer(policy.layer)
    host = layers.host_layout()
    samples: dict[str, list[float]] = {}

    def timed(name: str, started: float) -> None:
        samples.setdefault(name, []).append((time.perf_counter() - started) * 1000)

    for _ in range(runs):
        started = time.perf_counter()
        found = config_view.repositories(policy)
        timed("find repositories", started)
        started = time.perf_counter()
        walls = git_dirs.walls(policy, layer, found)
        timed("git directories' walls", started)
        started = time.perf_counter()
        covers, directory = config_view.covers(
            policy, layer, runner._read_config, found, walls.blanked
        )
        timed("config view", started)
        started = time.perf_counter()
        shown = runner.GitView(walls.read_only, covers, directory, git_dirs.outside(policy))
        _, fds = hidden_argv.hidden(runner.bubblewrap_argv(policy, host, ["true"], shown))
        timed("argv, memory files", started)
        for fd in fds:
            os.close(fd)
        shown.close()
    return {name: statistics.median(values) for name, values in samples.items()}


async def real_shaped(runs: int) -> bool:
    """The real repository's figures; whether each command met the goal."""
    with tempfile.TemporaryDirectory() as directory:
        workspace = Path(directory) / "workspace"
        print("building a workspace with a real repository's shape ...", flush=True)
        await asyncio.to_thread(_real_repo.build, workspace)
        await asyncio.sleep(1.2)  # a config changed in the last second is not kept
        executing = SandboxPolicy.executing(workspace, layer=LayerChoice.BUBBLEWRAP)
        await sandboxed(["true"], executing)()
        print("real-shaped: a run's preparation, phase by phase (ms, median)")
        for name, median in (await asyncio.to_thread(phases, executing, runs)).items():
            print(f"  {name:<26} {median:8.2f}")
        small = Path(directory) / "small"
        small.mkdir()
        (small / "a.txt").write_text("hello\n")
        await plain(["git", "init", "-q"], small)()
        await asyncio.sleep(1.2)
        one_file = SandboxPolicy.executing(small, layer=LayerChoice.BUBBLEWRAP)
        met = True
        for name, argv in (("true", ["true"]), ("git status", COMMANDS["git status"])):
            samples: dict[str, list[float]] = {"plain": [], "one-file": [], "real": []}
            actions = {
                "plain": plain(argv, workspace),
                "one-file": sandboxed(argv, one_file),
                "real": sandboxed(argv, executing),
            }
            for _ in range(runs):
                for how, action in actions.items():
                    samples[how] += await timed_runs(1, action)
            base, one, real = (statistics.median(samples[how]) * 1000 for how in actions)
            over = real - base
            met = met and over <= REAL_GOAL_MS
            print(
                f"real-shaped {name:<12} plain {base:7.1f}  executing {real:7.1f} "
                f"({over:+6.1f}; goal +{REAL_GOAL_MS:.0f})  one-file repository {one:7.1f} "
                f"(real-shaped {real - one:+5.1f})"
            )
    return met


if __name__ == "__main__":
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 50
    if "--real-only" not in sys.argv:
        asyncio.run(main(count))
    sys.exit(0 if asyncio.run(real_shaped(count)) else 1)
