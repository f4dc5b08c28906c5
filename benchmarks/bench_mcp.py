"""What an MCP tool call costs the host, over the server's own time, in the same run.

Run with ``python benchmarks/bench_mcp.py [RUNS]`` from the repository root. The test
suite's tracker server (``tests/fakes/mcp_servers``) answers ``sleep(seconds)`` after
sleeping; for a few server times it prints the median and p95 wall time of:

* ``direct``: the SDK's ``Client`` on the same server, unsandboxed, on the caller's loop;
* ``plancord``: the agent's ``mcp__tracker__sleep`` tool (the server in the agent's
  sandbox, the call crossing to the MCP background loop and back);

each as a ratio to the server's own time, and plancord's overhead over ``direct`` in ms.

Then the cost of the bound on what a server sends: the same sandboxed server behind the
SDK's own stdio reader (no bound on a message) and behind plancord's (``bounded_stdio``:
each message at most 16 MiB, the result cut at 100 kB with its note), alternating call by
call, for an empty answer and answers of 64 kB and 1 MB; the median of each and the ratio
bounded / SDK.
"""

from __future__ import annotations

import asyncio
import functools
import site
import statistics
import sys
import tempfile
from pathlib import Path

from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.types import TextContent

from _common import percentile_ms, timed_runs
from plancord.agent.mcp import McpHub
from plancord.agent.mcp.spawn import server_spawn
from plancord.agent.mcp.stderr import StderrTail
from plancord.agent.mcp.stdio import StdioFault, bounded_stdio
from plancord.agent.mcp.tool import McpArguments, McpTool
from plancord.config.mcp import McpServerConfig
from plancord.core.output_bound import bounded_text
from plancord.core.sandbox_policy import SandboxSettings

REPO_ROOT = Path(__file__).resolve().parents[1]
SERVERS = REPO_ROOT / "tests" / "fakes" / "mcp_servers"
SITE_PACKAGES = next(p for p in site.getsitepackages() if p.endswith("site-packages"))
SERVER_ARGV = [str(SERVERS / "tracker_server.py"), SITE_PACKAGES]
SERVER_TIMES = (0.0, 0.005, 0.05)
RESULT_SIZES = (0, 64 * 1024, 1024 * 1024)
RESULT_LIMIT = 100_000


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
                    through = await timed_runs(
                        runs,
                        functools.partial(
                            tool.connection.call, "sleep", args.model_dump(), max_output=100_000
                        ),
                    )
                    plain = await timed_runs(
                        runs, functools.partial(direct.call_tool, "sleep", {"seconds": seconds})
                    )
                    for label, samples in (("direct", plain), ("plancord", through)):
                        median = statistics.median(samples)
                        ratio = f"{median / seconds:7.2f}" if seconds else "      -"
                        print(
                            f"{seconds * 1000:10.1f}ms {label:>9} {median * 1000:10.2f} "
                            f"{percentile_ms(samples, 0.95):8.2f} {ratio}"
                        )
                    extra = (statistics.median(through) - statistics.median(plain)) * 1000
                    print(f"{'':>12} plancord over direct: {extra:+.2f} ms per call")
        finally:
            await hub.close()


async def bound_against_sdk(runs: int) -> None:
    """The bounded reader and the SDK's, on one sandboxed server each, alternating."""
    with tempfile.TemporaryDirectory() as scratch:
        workspace = Path(scratch)
        policy = SandboxSettings().read_only(workspace)
        spawn = server_spawn(
            ["/usr/bin/python3.11", *SERVER_ARGV], policy, mounts=[Path(SITE_PACKAGES), SERVERS]
        )
        sdk_err, bounded_err = StderrTail(), StderrTail()
        params = StdioServerParameters(
            command=spawn.argv[0], args=spawn.argv[1:], env=spawn.env, cwd=spawn.cwd
        )
        sdk = Client(stdio_client(params, errlog=sdk_err.writer), cache=None)
        bounded = Client(bounded_stdio(spawn, bounded_err.writer, StdioFault()), cache=None)
        async with sdk, bounded:

            async def through_sdk(size: int) -> None:
                await sdk.call_tool("dump", {"characters": size})

            async def through_bound(size: int) -> None:
                result = await bounded.call_tool("dump", {"characters": size})
                text = "".join(b.text for b in result.content if isinstance(b, TextContent))
                bounded_text(text, RESULT_LIMIT, "narrower")

            print(f"\n{'result':>10} {'SDK ms':>8} {'bounded ms':>11} {'ratio':>6}")
            for size in RESULT_SIZES:
                sdk_samples: list[float] = []
                bound_samples: list[float] = []
                for _ in range(runs):
                    sdk_samples += await timed_runs(1, functools.partial(through_sdk, size))
                    bound_samples += await timed_runs(1, functools.partial(through_bound, size))
                before = statistics.median(sdk_samples)
                after = statistics.median(bound_samples)
                print(
                    f"{size:>10,} {before * 1000:8.2f} {after * 1000:11.2f} {after / before:6.2f}"
                )
        spawn.cleanup()


if __name__ == "__main__":
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 50
    asyncio.run(main(count))
    asyncio.run(bound_against_sdk(count))
