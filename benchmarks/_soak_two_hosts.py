"""The two-host phase of the crash soak (``soak_crash.py --phase two-hosts``).

Two children with different host identities (``PLANCORD_HOST_ID``) decide results over one
database and one workspace, as two containers on one volume would. Host A decides result
after result; at a random moment inside a decision it is either SIGKILLed or SIGSTOPped (the
Python process alone, as a frozen process whose git child runs on; a suspended VM stops
both, and then git's lock file stays held) for longer than its lease. Host B then recovers
what it can take over (it waits until A's lease has expired) and the invariants are
checked; a stopped A is then woken, must run no more git of the decision B took over, and
the invariants are checked again once its next answer is in. Each child's lease is one
second long, so a stop of 1.5 s is past it.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path

LEASE = 1.0


async def child(
    script: Path, data: Path, host: str, *args: str, stderr: Path
) -> asyncio.subprocess.Process:
    with stderr.open("ab") as errors:
        return await asyncio.create_subprocess_exec(
            sys.executable,
            str(script),
            f"--data={data}",
            f"--lease-seconds={LEASE}",
            *args,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=errors,
            env={**os.environ, "PLANCORD_HOST_ID": host},
        )


async def two_host_phase(
    args: argparse.Namespace,
    data: Path,
    script: Path,
    soak: object,
    check: Callable[[str], None],
) -> dict[str, int]:
    """Until ``args.cycles`` events (kills and stops) land inside decisions."""
    rng = random.Random(args.seed)
    stderr = data / "child-stderr.log"
    counts = {"kills": 0, "stops": 0, "decided": 0, "stopped-and-refused": 0}
    started = time.monotonic()
    life = 0
    window = 1.0

    async def recover_on_b(when: str) -> None:
        process = await child(script, data, "host-b", "--recover-only", stderr=stderr)
        await process.communicate()
        if process.returncode != 0:
            tail = stderr.read_text(errors="replace")[-3000:]
            raise RuntimeError(f"host B failed to recover (exit {process.returncode}):\n{tail}")
        check(when)

    while counts["kills"] + counts["stops"] < args.cycles:
        if time.monotonic() - started > args.time_limit:
            break
        life += 1
        a = await child(
            script, data, "host-a", f"--cycles={10**6}", f"--seed={args.seed * 1000 + life}",
            stderr=stderr,
        )  # fmt: skip
        assert a.stdout is not None
        assert a.stdin is not None
        while line := (await a.stdout.readline()).decode():
            if line.startswith("DECIDED"):
                counts["decided"] += 1
                check(f"after decision {counts['decided']} on host A")
                a.stdin.write(b"next\n")
                await a.stdin.drain()
                continue
            if not line.startswith("DECIDING"):
                continue
            try:
                line = (
                    await asyncio.wait_for(a.stdout.readline(), rng.uniform(0, window))
                ).decode()
            except TimeoutError:
                window *= 1.15
            else:
                window = max(0.05, window * 0.85)
                if line.startswith("DECIDED"):
                    counts["decided"] += 1
                    check(f"after decision {counts['decided']} on host A")
                    a.stdin.write(b"next\n")
                    await a.stdin.drain()
                continue
            if rng.random() < 0.5:
                a.kill()
                await a.wait()
                counts["kills"] += 1
                await recover_on_b(f"after kill {counts['kills']}, recovered on host B")
                break
            os.kill(a.pid, signal.SIGSTOP)
            counts["stops"] += 1
            await asyncio.sleep(LEASE * 1.5)
            await recover_on_b(f"after stop {counts['stops']}, recovered on host B")
            os.kill(a.pid, signal.SIGCONT)
            woke = (await a.stdout.readline()).decode()
            if "lost its lease" in woke or "taken over" in woke:
                counts["stopped-and-refused"] += 1
            a.kill()
            await a.wait()
            await recover_on_b(f"after stop {counts['stops']}, host A woke ({woke.strip()[:80]})")
            break
        if a.returncode is None:
            a.kill()
            await a.wait()
    return counts
