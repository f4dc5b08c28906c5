"""The plan-bound network scene: local servers on 127.0.0.1 named as hosts through the proxy's
own resolver map, an agent whose network the plan grants, and a plan whose steps name hosts.

The servers are real HTTP servers on the host's loopback (one serves a file, one a package
index for ``pip download``). The sandbox has its own network namespace, so ``127.0.0.1``
inside it is the sandbox's own loopback: the servers are reachable only through the proxy,
which answers their names from ``NetworkProxy.resolve_overrides`` (set here, by the test,
on the running proxy; no config reaches it). A grant without a port is HTTP's and HTTPS's
ports only, so the scene's bound and its steps name the local server's port.

:func:`start_network_scene` submits ada's plan and leaves it waiting for ana's Approve.
"""

from __future__ import annotations

import errno
import functools
import hashlib
import http.server
import io
import ipaddress
import socket
import threading
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from plancord.core.planning import Phase
from plancord.demo import host_plan_mode
from plancord.testing.anthropic_server import Script, ToolCall, text_turn, tool_turn
from tests.world import PlanScene, Worlds, plan_scene_in

FILE_BODY = "granted through the plan\n"
WHEEL = "tinypkg-1.0-py3-none-any.whl"


NAMES = ["files.test", "pypi.test", "other.test"]
HOSTS = dict.fromkeys(NAMES, "127.0.0.1")


def allowed(port: int, *more: str) -> list[str]:
    """The operator's bound of the scene: its names at 80 and 443, and at ``port``."""
    return [*NAMES, *(f"{name}:{port}" for name in NAMES), *more]


async def start_network_scene(
    worlds: Worlds,
    plan: dict[str, Any],
    script: Script,
    *,
    allow: list[str],
    drift: str = "refuse",
    network: Any = None,
    agent: dict[str, Any] | None = None,
) -> PlanScene:
    """ada's plan submitted, waiting for ana's Approve; the proxy resolves the test hosts
    locally (on loopback, which only this map may name). ``agent``: more of ada's config
    (her MCP servers)."""
    ada = {"network": {"allow": allow} if network is None else network, **(agent or {})}
    config = {"agents": {"ada": ada}}
    world = await worlds.start(
        [tool_turn(ToolCall("submit_plan", {"plan": plan})), *script, text_turn("done")],
        plan_mode=host_plan_mode(drift=drift),
        config=config,
    )
    proxy = getattr(world.bot.app, "network", None)
    if proxy is not None:
        proxy.resolve_overrides = HOSTS
    scene = await plan_scene_in(world)
    await scene.ana.slash(scene.channel, "plan start", task="fetch what the build needs")
    return scene


def plan_of(*steps: tuple[list[str], list[str]]) -> dict[str, Any]:
    """A plan whose steps have these tools and these hosts."""
    return {
        "summary": "Fetch what the build needs",
        "steps": [
            {"description": f"step {n}", "tools": tools, **({"network": hosts} if hosts else {})}
            for n, (tools, hosts) in enumerate(steps, start=1)
        ],
    }


def results(scene: PlanScene) -> list[str]:
    """The tool results the model saw in its last request."""
    seen: list[str] = []
    for message in scene.world.server.requests[-1]["messages"]:
        if message["role"] == "user" and isinstance(message["content"], list):
            for block in message["content"]:
                if block.get("type") == "tool_result":
                    content = block.get("content")
                    seen.append(content if isinstance(content, str) else str(content))
    return seen


def ran(scene: PlanScene) -> list[str]:
    """The results of the calls made while executing (after submit_plan's)."""
    return results(scene)[1:]


def curl(host: str, port: int, *options: str) -> str:
    return " ".join(["curl", "-sS", "--max-time", "5", *options, f"http://{host}:{port}/hello.txt"])


async def approved(scene: PlanScene) -> None:
    assert (await scene.state()).phase is Phase.SUBMITTED
    await scene.ana.click(scene.plan_message(1), label="Approve")


def result_steps(scene: PlanScene) -> dict[str, str]:
    """The completion card's step fields, by name."""
    card = next(
        m
        for m in reversed(scene.bot_messages())
        if m.embeds and "Result" in (m.embeds[0].title or "")
    )
    return {f.name: f.value for f in card.embeds[0].fields}


def bash(command: str) -> Any:
    return tool_turn(ToolCall("bash_execute", {"command": command, "write": True}))


def _wheel() -> bytes:
    """A minimal, valid pure-Python wheel of ``tinypkg`` 1.0."""
    files = {
        "tinypkg/__init__.py": b"VALUE = 1\n",
        "tinypkg-1.0.dist-info/METADATA": (b"Metadata-Version: 2.1\nName: tinypkg\nVersion: 1.0\n"),
        "tinypkg-1.0.dist-info/WHEEL": (
            b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        ),
    }
    record = "".join(
        f"{name},sha256={hashlib.sha256(data).hexdigest()},{len(data)}\n"
        for name, data in files.items()
    )
    record += "tinypkg-1.0.dist-info/RECORD,,\n"
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
        archive.writestr("tinypkg-1.0.dist-info/RECORD", record)
    return out.getvalue()


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        return


@contextmanager
def local_server(root: Path) -> Iterator[int]:
    """An HTTP server on 127.0.0.1 serving ``root``; its port."""
    handler = functools.partial(_Quiet, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


def serve_files(root: Path) -> Path:
    """A file to download and a package index with one wheel, under ``root``."""
    (root / "hello.txt").parent.mkdir(parents=True, exist_ok=True)
    (root / "hello.txt").write_text(FILE_BODY)
    index = root / "simple" / "tinypkg"
    index.mkdir(parents=True)
    (root / "packages").mkdir()
    (root / "packages" / WHEEL).write_bytes(_wheel())
    (index / "index.html").write_text(
        f'<html><body><a href="/packages/{WHEEL}">{WHEEL}</a></body></html>\n'
    )
    return root


class PingServer:
    """A loopback TCP server on the host that answers each line it receives with one
    line, counting them, and notes when its client closed the connection."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.lines = 0
        self.connections = 0
        self.closed = threading.Event()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        try:
            connection, _ = self.sock.accept()
        except OSError:
            return
        self.connections += 1
        with connection:
            while data := connection.recv(4096):
                self.lines += data.count(b"\n")
                connection.sendall(b"pong\n")
        self.closed.set()

    def close(self) -> None:
        self.sock.close()


class TcpListener:
    """A loopback TCP server on the host that records whether anything connected."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen()
        self.sock.setblocking(False)
        self.port = self.sock.getsockname()[1]

    def reached(self) -> bool:
        try:
            connection, _ = self.sock.accept()
        except BlockingIOError:
            return False
        connection.close()
        return True

    def close(self) -> None:
        self.sock.close()


class UdpListener:
    """A loopback UDP socket on the host (a stand-in DNS server) that records any datagram."""

    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.setblocking(False)
        self.port = self.sock.getsockname()[1]

    def reached(self) -> bool:
        try:
            self.sock.recvfrom(512)
        except BlockingIOError:
            return False
        return True

    def close(self) -> None:
        self.sock.close()


class _Echo(http.server.BaseHTTPRequestHandler):
    """Answers every GET with the Host header it received, and keeps each one."""

    seen: list[str]

    def do_GET(self) -> None:
        host = self.headers.get("Host", "")
        self.seen.append(host)
        body = f"host={host}\n".encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        return


@contextmanager
def host_echo_server() -> Iterator[tuple[int, list[str]]]:
    """An HTTP server on 127.0.0.1 that tells (and keeps) the Host header of each request."""
    seen: list[str] = []
    handler = type("Echo", (_Echo,), {"seen": seen})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1], seen
    finally:
        server.shutdown()
        server.server_close()


def raw_request(head: bytes) -> str:
    """A command sending ``head`` to the sandbox's proxy as it is, printing the answer."""
    return (
        "python3 - <<'PY'\n"
        "import socket\n"
        "s = socket.create_connection(('127.0.0.1', 3128), 5)\n"
        f"s.sendall({head!r})\n"
        "s.settimeout(10)\n"
        "print('answer:', s.recv(4096).decode('latin-1') or '(closed, no answer)')\n"
        "PY"
    )


class Zone:
    """A stand-in for the system's resolver in the test process: ``names`` are answered
    as the C library would (reading a name up to its first NUL), every other name goes to
    the real resolver; ``asked`` keeps every name handed to it."""

    def __init__(self, real: Any) -> None:
        self.names: dict[str, str] = {}
        self.asked: list[str] = []
        self._real = real

    def getaddrinfo(self, host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(host, str):
            self.asked.append(host)
            read = host.split("\0", 1)[0]
            if read in self.names:
                address = ipaddress.ip_address(self.names[read])
                number = int(port or 0)
                if address.version == 6:
                    v6 = (str(address), number, 0, 0)
                    return [(socket.AF_INET6, socket.SOCK_STREAM, 6, "", v6)]
                return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (str(address), number))]
        return self._real(host, port, *args, **kwargs)


class Outbound:
    """Every connect of the test process to an address off loopback, refused and kept: no
    test sends a packet anywhere but 127.0.0.0/8 and ::1, and each can tell whether the
    proxy tried."""

    def __init__(self, connect: Any, connect_ex: Any) -> None:
        self.attempts: list[tuple[str, int]] = []
        self._connect = connect
        self._connect_ex = connect_ex

    def _off_loopback(self, address: Any) -> bool:
        if not isinstance(address, tuple):
            return False
        try:
            ip = ipaddress.ip_address(address[0])
        except ValueError:
            return False
        if ip.is_loopback:
            return False
        self.attempts.append((str(ip), int(address[1])))
        return True

    def install(self, monkeypatch: Any) -> None:
        guard = self

        def connect(sock: socket.socket, address: Any) -> None:
            if guard._off_loopback(address):
                raise ConnectionRefusedError(errno.ECONNREFUSED, "refused by the test's guard")
            guard._connect(sock, address)

        def connect_ex(sock: socket.socket, address: Any) -> int:
            if guard._off_loopback(address):
                return errno.ECONNREFUSED
            return int(guard._connect_ex(sock, address))

        monkeypatch.setattr(socket.socket, "connect", connect)
        monkeypatch.setattr(socket.socket, "connect_ex", connect_ex)


def interface_address() -> str | None:
    """An address of one of this host's interfaces other than loopback (read from the
    kernel here, independently of the code under test), or None."""
    last = ""
    for line in Path("/proc/net/fib_trie").read_text().splitlines():
        if "|--" in line:
            last = line.split("|--")[1].strip()
        elif "host LOCAL" in line and not ipaddress.ip_address(last).is_loopback:
            return last
    return None
