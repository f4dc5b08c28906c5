"""What the Landlock sandbox costs per shell command: a sandboxed ``true`` against a plain one.

Run with ``python benchmarks/bench_sandbox.py [RUNS]``. Prints the median, mean and 95th
percentile in milliseconds of ``run_shell("true")`` with and without the sandbox, and of the
bare trampoline (``subprocess.run``) against running ``true`` directly.
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

from plancord.core.shell import sandbox
from plancord.core.shell.sandbox import landlock_abi, run_shell


def summary(name: str, samples: list[float]) -> str:
    ordered = sorted(samples)
    p95 = ordered[max(0, round(0.95 * len(ordered)) - 1)]
    return (
        f"{name:<34} median {statistics.median(ordered) * 1000:7.1f} ms"
        f"   mean {statistics.fmean(ordered) * 1000:7.1f} ms   p95 {p95 * 1000:7.1f} ms"
    )


async def timed_async(runs: int, action: Callable[[], Awaitable[object]]) -> list[float]:
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        await action()
        samples.append(time.perf_counter() - started)
    return samples


def timed(runs: int, action: Callable[[], object]) -> list[float]:
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        action()
        samples.append(time.perf_counter() - started)
    return samples


async def main(runs: int) -> None:
    abi = landlock_abi()
    print(f"Landlock ABI {abi}; {runs} runs each")
    with tempfile.TemporaryDirectory() as directory:
        workspace = Path(directory)
        await run_shell("true", workspace, sandbox=False)

        plain = await timed_async(runs, lambda: run_shell("true", workspace, sandbox=False))
        print(summary("run_shell('true')", plain))
        if abi == 0:
            print("no Landlock here: the sandboxed figures cannot be measured")
            return
        jailed = await timed_async(runs, lambda: run_shell("true", workspace, sandbox=True))
        print(summary("run_shell('true', sandbox=True)", jailed))

        direct = timed(runs, lambda: subprocess.run(["true"], check=True))
        print(summary("subprocess.run(['true'])", direct))
        trampoline = [sys.executable, "-I", "-S", sandbox.__file__, "--", "true"]
        bare = timed(runs, lambda: subprocess.run(trampoline, check=True))
        print(summary("trampoline -- true", bare))

        overhead = statistics.median(jailed) - statistics.median(plain)
        print(f"sandbox overhead per command (medians): {overhead * 1000:.1f} ms")


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 50))
