"""Observation and Discard on the 10,000-file workspace, this checkout against a baseline.

Run with ``python benchmarks/bench_against.py [REF] [ROUNDS]`` (REF defaults to ``main``).
The baseline's ``src/`` is taken from REF with ``git archive``; each round runs one child
process per side (``_against_child.py``, the sides alternating, on the same workspace),
each timing ``observe`` after a sandboxed append (kernel notices, and the full walk) and
``discard`` of a branch whose step changed tracked, untracked and ignored files. Prints each
figure's median per side and this checkout's as a ratio to the baseline's. Goal: no figure
slower than 1.1x.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

from bench_observe import make_workspace  # noqa: E402

GOAL = 1.1
CALLS = 20
DISCARDS = 3


def baseline_source(ref: str, into: Path) -> Path:
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", ref, "src"], check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into / "src"


def run_side(source: Path, root: Path, stash: Path) -> dict[str, list[float]]:
    env = {**os.environ, "PYTHONPATH": str(source)}
    out = subprocess.run(
        [sys.executable, str(HERE / "_against_child.py"), str(root), str(stash),
         str(CALLS), str(DISCARDS)],
        check=True, capture_output=True, text=True, env=env,
    ).stdout  # fmt: skip
    found: dict[str, object] = json.loads(out.strip().splitlines()[-1])
    if not str(found["source"]).startswith(str(source)):
        raise SystemExit(f"the child imported {found['source']}, not {source}")
    return {key: list(value) for key, value in found.items() if isinstance(value, list)}


def main() -> int:
    ref = sys.argv[1] if len(sys.argv) > 1 else "main"
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    with tempfile.TemporaryDirectory(prefix="plancord-against-") as scratch:
        base = Path(scratch)
        sides = {"baseline": baseline_source(ref, base), "this": REPO / "src"}
        root = base / "workspace"
        make_workspace(root)
        samples: dict[str, dict[str, list[float]]] = {side: {} for side in sides}
        for _ in range(rounds):
            for side, source in sides.items():
                for key, values in run_side(source, root, base / f"stash-{side}").items():
                    samples[side].setdefault(key, []).extend(values)
    print(f"this checkout against {ref}, 10,000-file workspace, {rounds} rounds per side:")
    met = True
    for key in samples["this"]:
        before = statistics.median(samples["baseline"][key]) * 1000
        after = statistics.median(samples["this"][key]) * 1000
        ratio = after / before
        met = met and ratio <= GOAL
        print(f"  {key:<10} baseline {before:8.2f} ms   this {after:8.2f} ms   {ratio:5.2f}x")
    print(f"  goal: no figure slower than {GOAL:g}x: {'met' if met else 'NOT met'}")
    print(f"  load average: {os.getloadavg()[0]:.1f}")
    return 0 if met else 1


if __name__ == "__main__":
    raise SystemExit(main())
