"""What the agent sandbox costs per command, against a plain spawn in the same run.

Run with ``python benchmarks/bench_sandbox.py [RUNS]``. For ``true``, ``ls`` and
``git status`` in a small repository it prints the median and p95 wall time of:

* ``plain``: ``subprocess.run`` of the command, no sandbox (the baseline);
* ``bubblewrap``: ``run_sandboxed`` as an executing agent runs it (namespaces, limits);
* ``bwrap+landlock``: as a planning agent runs it (read-only view plus the inner wall);
* ``landlock only``: the fallback where bubblewrap cannot start;
* ``old trampoline``: the plan-mode Landlock trampoline alone, as before the sandbox.

Each sandboxed figure is also given as the difference from ``plain`` and as a ratio.
"""

from __future__ import annotations

import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from plancord.core.shell.sandbox import (
    LayerChoice,
    SandboxPolicy,
    landlock_abi,
    run_sandboxed,
)
from plancord.core.shell.sandbox import landlock as landlock_module

COMMANDS = {"true": ["true"], "ls": ["ls", "-la"], "git status": ["git", "status", "--short"]}


def p95(samples: list[float]) -> float:
    ordered = sorted(samples)
    return ordered[max(0, round(0.95 * len(ordered)) - 1)]


async def timed(runs: int, action: Callable[[], Awaitable[object]]) -> list[float]:
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        await action()
        samples.append(time.perf_counter() - started)
    return samples


def plain(argv: list[str], cwd: Path) -> Callable[[], Awaitable[object]]:
    def run() -> object:
        return subprocess.run(argv, cwd=cwd, capture_output=True, check=False)

    return lambda: asyncio.to_thread(run)


def sandboxed(argv: list[str], policy: SandboxPolicy) -> Callable[[], Awaitable[object]]:
    return lambda: run_sandboxed(argv, policy, timeout=30)


def old_trampoline(argv: list[str], cwd: Path) -> Callable[[], Awaitable[object]]:
    command = [sys.executable, "-I", "-S", landlock_module.__file__, "readonly", "--", *argv]
    return plain(command, cwd)


async def main(runs: int) -> None:
    print(f"Landlock ABI {landlock_abi()}; {runs} runs of each; times in ms")
    with tempfile.TemporaryDirectory() as directory:
        workspace = Path(directory)
        (workspace / "a.txt").write_text("hello\n")
        await plain(["git", "init", "-q"], workspace)()
        policies = {
            "bubblewrap": SandboxPolicy(workspace, writable=True, layer=LayerChoice.BUBBLEWRAP),
            "bwrap+landlock": SandboxPolicy(
                workspace, writable=False, inner_wall=True, layer=LayerChoice.BUBBLEWRAP
            ),
            "landlock only": SandboxPolicy(workspace, writable=True, layer=LayerChoice.LANDLOCK),
        }
        header = f"{'command':<12} {'how':<16} {'median':>8} {'p95':>8} {'+ms':>7} {'ratio':>6}"
        print(header)
        for name, argv in COMMANDS.items():
            await plain(argv, workspace)()
            baseline = await timed(runs, plain(argv, workspace))
            base = statistics.median(baseline)
            rows: list[tuple[str, list[float]]] = [("plain", baseline)]
            for how, policy in policies.items():
                await sandboxed(argv, policy)()
                rows.append((how, await timed(runs, sandboxed(argv, policy))))
            rows.append(("old trampoline", await timed(runs, old_trampoline(argv, workspace))))
            for how, samples in rows:
                median = statistics.median(samples)
                print(
                    f"{name:<12} {how:<16} {median * 1000:8.1f} {p95(samples) * 1000:8.1f} "
                    f"{(median - base) * 1000:7.1f} {median / base:6.2f}"
                )


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 50))
