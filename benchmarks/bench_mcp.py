"""What an MCP tool call costs the host, over the server's own time, in the same run.

Run with ``python benchmarks/bench_mcp.py [RUNS]`` from the repository root. The test
suite's tracker server (``tests/fakes/mcp_servers``) answers ``sleep(seconds)`` after
sleeping; for a few server times it prints the median and p95 wall time of:

* ``direct``: the SDK's ``Client`` on the same server, unsandboxed, on the caller's loop;
* ``plancord``: the agent's ``mcp__tracker__sleep`` tool (the server in the agent's
  sandbox, the call crossing to the MCP background loop and back);

each as a ratio to the server's own time, and plancord's overhead over ``direct`` in ms.
"""

from __future__ import annotations

import asyncio
import site
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from mcp import Client
from mcp.client.stdio import StdioServerParameters

from plancord.agent.mcp import McpHub
from plancord.agent.mcp.tool import McpArguments, McpTool
from plancord.config.mcp import McpServerConfig
from plancord.core.sandbox_policy import SandboxSettings

REPO_ROOT = Path(__file__).resolve().parents[1]
SERVERS = REPO_ROOT / "tests" / "fakes" / "mcp_servers"
SITE_PACKAGES = next(p for p in site.getsitepackages() if p.endswith("site-packages"))
SERVER_ARGV = [str(SERVERS / "tracker_server.py"), SITE_PACKAGES]
SERVER_TIMES = (0.0, 0.005, 0.05)


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


async def main(runs: int) -> None:
    config = McpServerConfig(
        command="/usr/bin/python3.11",
        args=SERVER_ARGV,
        mounts=[Path(SITE_PACKAGES), SERVERS],
        trust_hints=True,
    )
    with tempfile.TemporaryDirectory() as scratch:
        agents_dir = Path(scratch)
        (agents_dir / "bench" / "workspace").mkdir(parents=True)
        hub = McpHub(lambda agent: {"tracker": config}, agents_dir, SandboxSettings())
        direct = Client(StdioServerParameters(command=sys.executable, args=SERVER_ARGV), cache=None)
        try:
            tools = {t.name: t for t in await hub.tools_for("bench")}
            tool = tools["mcp__tracker__sleep"]
            assert isinstance(tool, McpTool)
            async with direct:
                print(
                    f"{'server time':>12} {'path':>9} {'median ms':>10} {'p95 ms':>8} {'ratio':>7}"
                )
                for seconds in SERVER_TIMES:
                    args = McpArguments.model_validate({"seconds": seconds})
                    through = await timed(
                        runs, lambda a=args: tool.connection.call("sleep", a.model_dump())
                    )
                    plain = await timed(
                        runs, lambda s=seconds: direct.call_tool("sleep", {"seconds": s})
                    )
                    for label, samples in (("direct", plain), ("plancord", through)):
                        median = statistics.median(samples)
                        ratio = f"{median / seconds:7.2f}" if seconds else "      -"
                        print(
                            f"{seconds * 1000:10.1f}ms {label:>9} {median * 1000:10.2f} "
                            f"{p95(samples) * 1000:8.2f} {ratio}"
                        )
                    extra = (statistics.median(through) - statistics.median(plain)) * 1000
                    print(f"{'':>12} plancord over direct: {extra:+.2f} ms per call")
        finally:
            await hub.close()


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 50))
