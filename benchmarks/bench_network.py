"""What the plan-bound network costs, against the host's network (``network: true``).

Run with ``python benchmarks/bench_network.py [RUNS]``. A local HTTP server on 127.0.0.1
serves a 1 MB file and a tiny one; each figure runs ``curl`` in the real executing sandbox
(bubblewrap), alternating the two ways so a loaded machine weighs on both alike:

* ``1 MB download``: through the proxy (the sandbox's own loopback bridge, the unix socket,
  the host's proxy deciding the connection and splicing it) against the same download with
  the host's network; the ratio is the goal (at most 1.2);
* ``1 MB through CONNECT``: the same through a CONNECT tunnel (``curl -p``), as HTTPS goes;
* ``tiny request``: a 25-byte file, so the difference is the connection's set-up (the
  bridge, the proxy's decision, its own connection);
* ``true``: a command that makes no connection, with the proxy's bridge against the host's
  network, and against the default sandbox with no network (which also builds a network
  namespace of its own: the difference is the bridge alone);
* ``20 requests, 1 command``: twenty tiny requests in one command, so the sandbox's start
  is paid once and the difference is what each connection costs through the proxy.

Exits 1 when the 1 MB ratio is over the goal.
"""

from __future__ import annotations

import asyncio
import functools
import http.server
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from plancord.core.host_names import Endpoint
from plancord.core.sandbox_policy import HOST_NETWORK, Proxied, SandboxPolicy
from plancord.sandbox import run_sandboxed
from plancord.sandbox.layers import bubblewrap_problem
from plancord.sandbox.proxy import NetworkProxy, ProxyVerdict

GOAL = 1.2
SIZE = 1024 * 1024


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        return


async def _allow(agent: str, endpoint: Endpoint) -> ProxyVerdict:
    return ProxyVerdict(True)


async def _median(
    runs: int, first: Callable[[], Awaitable[object]], second: Callable[[], Awaitable[object]]
) -> tuple[float, float]:
    firsts: list[float] = []
    seconds: list[float] = []
    for _ in range(runs):
        for action, samples in ((first, firsts), (second, seconds)):
            started = time.perf_counter()
            await action()
            samples.append(time.perf_counter() - started)
    return statistics.median(firsts), statistics.median(seconds)


def _run(command: str, policy: SandboxPolicy) -> Callable[[], Awaitable[object]]:
    async def go() -> object:
        result = await run_sandboxed(["bash", "-c", command], policy, timeout=60)
        if result.exit_code != 0:
            raise SystemExit(f"{command!r} failed: {result.stdout}{result.stderr}")
        return result

    return go


async def main(runs: int) -> int:
    problem = bubblewrap_problem()
    if problem is not None:
        print(f"bubblewrap does not work here ({problem}); nothing to measure")
        return 0
    root = Path(tempfile.mkdtemp(prefix="plancord-bench-network-"))
    served = root / "served"
    served.mkdir()
    (served / "big").write_bytes(b"x" * SIZE)
    (served / "tiny").write_bytes(b"t" * 25)
    workspace = root / "workspace"
    workspace.mkdir()
    handler = functools.partial(_Quiet, directory=str(served))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    proxy = NetworkProxy(_allow, asyncio.get_running_loop(), {"files.test": "127.0.0.1"})
    socket_path = root / "network" / "bench.sock"
    await asyncio.to_thread(proxy.listen, "bench", socket_path)
    proxied = SandboxPolicy.executing(workspace, network=Proxied(socket_path))
    host = SandboxPolicy.executing(workspace, network=HOST_NETWORK)
    closed = SandboxPolicy.executing(workspace)
    print(f"{runs} runs each, medians; bubblewrap; a {SIZE // 1024} KiB file from 127.0.0.1")
    print(f"{'':24} {'proxy':>10} {'network':>10} {'ratio':>7} {'diff':>9}")
    over = False
    try:
        cases = [
            ("1 MB download", "", "big"),
            ("1 MB through CONNECT", "-p", "big"),
            ("tiny request", "", "tiny"),
        ]
        for label, option, name in cases:
            through, direct = await _median(
                runs,
                _run(f"curl -sS {option} -o /dev/null http://files.test:{port}/{name}", proxied),
                _run(f"curl -sS {option} -o /dev/null http://127.0.0.1:{port}/{name}", host),
            )
            ratio = through / direct
            print(
                f"{label:24} {through * 1000:8.1f}ms {direct * 1000:8.1f}ms {ratio:6.2f}x "
                f"{(through - direct) * 1000:+7.1f}ms"
            )
            if name == "big" and not option and ratio > GOAL:
                over = True
        bridged, bare = await _median(runs, _run("true", proxied), _run("true", host))
        print(
            f"{'true (no connection)':24} {bridged * 1000:8.1f}ms {bare * 1000:8.1f}ms "
            f"{bridged / bare:6.2f}x {(bridged - bare) * 1000:+7.1f}ms"
        )
        bridged, offline = await _median(runs, _run("true", proxied), _run("true", closed))
        print(
            f"{'true, vs no network':24} {bridged * 1000:8.1f}ms {offline * 1000:8.1f}ms "
            f"{bridged / offline:6.2f}x {(bridged - offline) * 1000:+7.1f}ms  "
            "(the default sandbox: its own empty network namespace, no bridge)"
        )

        def twenty(name: str) -> str:
            return f"for i in $(seq 20); do curl -sS -o /dev/null http://{name}:{port}/tiny; done"

        through, direct = await _median(
            max(3, runs // 5), _run(twenty("files.test"), proxied), _run(twenty("127.0.0.1"), host)
        )
        print(
            f"{'20 requests, 1 command':24} {through * 1000:8.1f}ms {direct * 1000:8.1f}ms "
            f"{through / direct:6.2f}x {(through - direct) * 50:+7.1f}ms a request"
        )
    finally:
        await asyncio.to_thread(proxy.close)
        server.shutdown()
    print(f"goal: 1 MB download through the proxy at most {GOAL}x: {'FAIL' if over else 'PASS'}")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 15)))
