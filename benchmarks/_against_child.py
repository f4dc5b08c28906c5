"""One side of ``bench_against.py``: observation and Discard on a prepared workspace, with
whichever ``plancord`` is first on ``sys.path`` (this checkout's, or a baseline's).

Prints one JSON line: the source it ran, and samples in seconds (``first look``: the
observer's start, which keeps every file's content). Uses only the interfaces
both sides share (``WorkspaceObserver``, ``ExecutionBranch``, ``run_sandboxed``).
"""

from __future__ import annotations

import asyncio
import inspect
import json
import shutil
import sys
import time
from pathlib import Path

import plancord
from plancord.agent.execution.branch import ExecutionBranch
from plancord.agent.execution.observe import Effects, WorkspaceObserver

try:
    from plancord.sandbox import SandboxPolicy, run_sandboxed
except ImportError:  # a baseline from before the sandbox had its own package
    from plancord.core.shell.sandbox import (  # type: ignore[no-redef,attr-defined,unused-ignore]
        SandboxPolicy,
        run_sandboxed,
    )


def fresh(directory: Path) -> None:
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir(parents=True)


async def main(root: Path, stash: Path, calls: int, discards: int) -> None:
    # Both sides run this file: a baseline may predate the named constructors and the
    # host's own git policy, and take a step number where this checkout takes a parent.
    if hasattr(SandboxPolicy, "executing"):
        policy = SandboxPolicy.executing(root)
    else:
        policy = SandboxPolicy(workspace=root, writable=True)  # type: ignore[call-arg]
    host_git = policy.for_host_git() if hasattr(policy, "for_host_git") else policy
    fresh(stash)
    observe: list[float] = []
    walk: list[float] = []
    first_look: list[float] = []
    watching = WorkspaceObserver(root, stash / "watching")
    walking = WorkspaceObserver(root, stash / "walking", kernel_watch=False)
    for _ in range(3):
        started = time.perf_counter()
        await watching.start()
        first_look.append(time.perf_counter() - started)
    await walking.start()
    for n in range(calls):
        target = f"src/d{n % 100:02}/f{n % 100}.py"
        await run_sandboxed(["bash", "-c", f"echo 'y = {n}' >> {target}"], policy, timeout=30)
        for observer, samples in ((watching, observe), (walking, walk)):
            started = time.perf_counter()
            effects = await observer.observe()
            samples.append(time.perf_counter() - started)
            if not isinstance(effects, Effects) or effects.paths != (target,):
                raise SystemExit(f"observation wrong: {effects}")
    watching.close()
    walking.close()
    branches = ExecutionBranch(host_git, kept=stash / "kept")
    takes_parent = "parent" in inspect.signature(branches.commit_step).parameters
    discard: list[float] = []
    for n in range(discards):
        record = await branches.start("bench", n)
        change = (
            f"echo changed >> src/d0{n % 10}/f{n % 10}.py && rm -rf build/o{n % 10} && "
            f"mkdir -p build/new{n} && echo new > build/new{n}/x.o && echo n > notes/n{n}.txt"
        )
        await run_sandboxed(["bash", "-c", change], policy, timeout=30)
        if takes_parent:
            await branches.commit_step(record, "change", record.reviewed_commit)
        else:
            await branches.commit_step(record, 1, "change")  # type: ignore[arg-type]
        started = time.perf_counter()
        await branches.discard(record)
        discard.append(time.perf_counter() - started)
    print(
        json.dumps(
            {
                "source": str(Path(plancord.__file__).parent),
                "first look": first_look,
                "observe": observe,
                "full walk": walk,
                "discard": discard,
            }
        )
    )


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])))
