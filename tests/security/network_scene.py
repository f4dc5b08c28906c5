"""The plan-bound network scene: local servers on 127.0.0.1 named as hosts through the proxy's
own resolver map, an agent whose network the plan grants, and a plan whose steps name hosts.

The servers are real HTTP servers on the host's loopback (one serves a file, one a package
index for ``pip download``). The sandbox has its own network namespace, so ``127.0.0.1``
inside it is the sandbox's own loopback: the servers are reachable only through the proxy,
which answers their names from ``NetworkProxy.resolve_overrides`` (set here, by the test,
on the running proxy; no config reaches it).
"""

from __future__ import annotations

import functools
import hashlib
import http.server
import io
import socket
import threading
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from plancord.testing.anthropic_server import ToolCall, tool_turn

FILE_BODY = "granted through the plan\n"
WHEEL = "tinypkg-1.0-py3-none-any.whl"


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
