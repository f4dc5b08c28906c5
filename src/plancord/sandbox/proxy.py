"""The host-side network proxy: the only way out of a sandbox whose network the plan grants.

Why this exists: an executing sandbox under a plan-bound network has no network of its own
(its own empty network namespace). HTTP and HTTPS leave only through this proxy, reached
through a unix socket bound into the sandbox (one socket per agent, so the socket a
connection arrives on says whose it is: nothing the process sends can claim otherwise).
For each connection the proxy reads one request head (``CONNECT host:port`` for HTTPS,
never looking inside the TLS; an absolute ``http://`` URL for plain HTTP), asks the
decision (``decide``, an async function of the bot's own event loop, which knows the
current step) whether that host may be reached now, resolves the name itself and splices
bytes both ways. Every connection is decided on its own, so when the step changes, the next
connection sees the new step's hosts.

It runs in a thread of its own with its own event loop, so a slow or hostile client never
holds up the loop that serves every agent and Discord: a request head is at most
:data:`MAX_HEAD_BYTES` read within :data:`HEAD_SECONDS`, a connection to the server is made
within :data:`CONNECT_SECONDS`, a tunnel idle for :data:`IDLE_SECONDS` is closed, at most
:data:`MAX_CONNECTIONS` are open per agent, and data moves in bounded chunks with flow
control (a reader waits while its writer's buffer is full).

No library is used: the proxies on PyPI (proxy.py, pproxy, mitmproxy) are frameworks
with their own process model and plugin hooks (or TLS interception), and none lets an
asynchronous decision of another event loop hold a connection while a human answers; what
this needs is a request-head reader and a splice, kept small and tested.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import ipaddress
import logging
import os
import socket
import threading
from collections.abc import Callable, Coroutine, Mapping
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

log = logging.getLogger(__name__)

MAX_HEAD_BYTES = 16 * 1024
HEAD_SECONDS = 30.0
CONNECT_SECONDS = 15.0
IDLE_SECONDS = 300.0
DECIDE_SECONDS = 24 * 3600.0
"""A decision may wait for a human's answer; the card's own timeout ends it first."""
MAX_CONNECTIONS = 64
CHUNK_BYTES = 256 * 1024


@dataclass(frozen=True, slots=True)
class ProxyVerdict:
    """Whether a connection to a host may be made, and the reason told to the client."""

    allowed: bool
    reason: str = ""


Decide = Callable[[str, str], Coroutine[object, object, ProxyVerdict]]
"""``decide(agent, host)``: run on the bot's event loop."""


@dataclass(frozen=True, slots=True)
class _Target:
    host: str
    port: int
    tunnel: bool
    head: bytes
    """For plain HTTP, the request head as it goes to the server (origin-form)."""


class BadRequest(ValueError):
    """The client sent something that is not a proxy request we serve."""


def parse_head(head: bytes) -> _Target:
    """The target of one proxy request head (up to and including the blank line)."""
    try:
        text = head.decode("latin-1")
    except UnicodeDecodeError:  # pragma: no cover - latin-1 decodes every byte
        raise BadRequest("not a request") from None
    lines = text.split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
        raise BadRequest("not an HTTP/1 request line")
    method, target, version = parts
    if method == "CONNECT":
        host, _, port = target.rpartition(":")
        return _Target(_host(host), _port(port), True, b"")
    url = urlsplit(target)
    if url.scheme != "http" or not url.hostname:
        raise BadRequest("a proxy request names an absolute http:// URL, or CONNECT for https")
    path = url.path or "/"
    if url.query:
        path += "?" + url.query
    # One request per connection: each is decided on its own (a kept-alive connection
    # would carry the next request to this host's server whatever it names, past a step).
    dropped = ("proxy-connection:", "proxy-authorization:", "connection:", "keep-alive:")
    headers = [line for line in lines[1:] if line and not line.lower().startswith(dropped)]
    head_lines = [f"{method} {path} {version}", *headers, "Connection: close"]
    rebuilt = "\r\n".join(head_lines) + "\r\n\r\n"
    return _Target(_host(url.hostname), url.port or 80, False, rebuilt.encode("latin-1"))


def _host(name: str) -> str:
    host = name.strip("[]").lower().rstrip(".")
    if not host or len(host) > 253 or any(c.isspace() or c in "/@\\" for c in host):
        raise BadRequest("no host named")
    return host


def _port(text: str) -> int:
    if not text.isdigit() or not 0 < int(text) < 65536:
        raise BadRequest("no port named")
    return int(text)


@dataclass
class _Listener:
    server: asyncio.AbstractServer
    path: Path
    open_connections: int = 0


@dataclass
class NetworkProxy:
    """The proxy's thread, its event loop and one unix socket per agent.

    A name that resolves to an address of this host itself (loopback, link-local,
    unspecified, multicast) is refused after the decision: the sandbox must not reach the
    bot's own services through a granted name. ``resolve_overrides``: host names answered
    from this map instead of the system's resolver, and exempt from that rule. It exists
    for tests (local servers on 127.0.0.1 named as hosts) and is set only by code that
    holds this object; nothing in the config reaches it.
    """

    decide: Decide
    decide_loop: asyncio.AbstractEventLoop
    resolve_overrides: Mapping[str, str] = field(default_factory=dict)
    _loop: asyncio.AbstractEventLoop | None = None
    _thread: threading.Thread | None = None
    _listeners: dict[str, _Listener] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def start(self) -> None:
        if self._thread is not None:
            return
        loop = asyncio.new_event_loop()
        ready = threading.Event()

        def serve() -> None:
            asyncio.set_event_loop(loop)
            loop.call_soon(ready.set)
            loop.run_forever()
            loop.close()

        self._loop = loop
        self._thread = threading.Thread(target=serve, name="plancord-proxy", daemon=True)
        self._thread.start()
        ready.wait()

    def listen(self, agent: str, path: Path) -> None:
        """Serve ``agent``'s connections on the unix socket ``path`` (made afresh, mode
        0600 in a 0700 directory); blocking until it listens."""
        self.start()
        with self._lock:
            if agent in self._listeners:
                return
            path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            os.chmod(path.parent, 0o700)
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
            # In a context of its own: the proxy's tasks inherit nothing of the caller's
            # (no context variable of the bot's loop reaches the proxy's clock or logs).
            future: Future[_Listener] = contextvars.Context().run(
                asyncio.run_coroutine_threadsafe, self._listen(agent, path), self._running_loop()
            )
            self._listeners[agent] = future.result(timeout=30)

    def close(self) -> None:
        """Stop listening, close every socket file and end the thread."""
        if self._loop is None or self._thread is None:
            return
        loop = self._loop
        with contextlib.suppress(RuntimeError):
            asyncio.run_coroutine_threadsafe(self._close_all(), loop).result(timeout=10)
        loop.call_soon_threadsafe(loop.stop)
        self._thread.join(timeout=10)
        self._thread = None
        self._loop = None

    def _running_loop(self) -> asyncio.AbstractEventLoop:
        if self._loop is None:
            raise RuntimeError("the proxy is not running")
        return self._loop

    async def _listen(self, agent: str, path: Path) -> _Listener:
        holder: list[_Listener] = []

        async def accept(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await self._serve(agent, holder[0], reader, writer)

        server = await asyncio.start_unix_server(accept, path=str(path), limit=MAX_HEAD_BYTES)
        os.chmod(path, 0o600)
        holder.append(_Listener(server, path))
        return holder[0]

    async def _close_all(self) -> None:
        """Stop listening and end every open connection (each closes its sockets)."""
        for listener in self._listeners.values():
            listener.server.close()
            with contextlib.suppress(FileNotFoundError):
                listener.path.unlink()
        self._listeners.clear()
        current = asyncio.current_task()
        open_connections = [task for task in asyncio.all_tasks() if task is not current]
        for task in open_connections:
            task.cancel()
        await asyncio.gather(*open_connections, return_exceptions=True)

    async def _serve(
        self,
        agent: str,
        listener: _Listener,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> None:
        listener.open_connections += 1
        try:
            if listener.open_connections > MAX_CONNECTIONS:
                await _answer(writer, 503, "too many connections at once")
                return
            await self._one(agent, reader, writer)
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            pass
        except TimeoutError:
            pass
        except asyncio.CancelledError:
            pass  # the proxy is closing: the connection ends here, with its sockets
        finally:
            listener.open_connections -= 1
            writer.close()
            with contextlib.suppress(OSError, ConnectionError):
                await writer.wait_closed()

    async def _one(
        self, agent: str, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), HEAD_SECONDS)
        except asyncio.LimitOverrunError:
            await _answer(writer, 431, "request head too large")
            return
        except asyncio.IncompleteReadError:
            return
        try:
            target = parse_head(head)
        except BadRequest as exc:
            await _answer(writer, 400, str(exc))
            return
        verdict = await self._decided(agent, target.host)
        if not verdict.allowed:
            await _answer(writer, 403, verdict.reason)
            return
        try:
            address = await self._resolve(target.host, target.port)
        except (OSError, TimeoutError) as exc:
            await _answer(writer, 502, f"could not resolve {target.host}: {type(exc).__name__}")
            return
        if target.host not in self.resolve_overrides and _host_local(address):
            await _answer(
                writer, 403, f"{target.host} resolves to {address}, an address of this host"
            )
            return
        try:
            upstream_reader, upstream_writer = await asyncio.wait_for(
                asyncio.open_connection(address, target.port, limit=CHUNK_BYTES),
                CONNECT_SECONDS,
            )
        except (OSError, TimeoutError) as exc:
            await _answer(writer, 502, f"could not reach {target.host}: {type(exc).__name__}")
            return
        try:
            if target.tunnel:
                writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
                await writer.drain()
            else:
                upstream_writer.write(target.head)
                await upstream_writer.drain()
            await _splice(reader, writer, upstream_reader, upstream_writer)
        finally:
            upstream_writer.close()
            with contextlib.suppress(OSError, ConnectionError):
                await upstream_writer.wait_closed()

    async def _decided(self, agent: str, host: str) -> ProxyVerdict:
        """The decision, made on the bot's loop; an error or a lost answer refuses."""
        decision = self.decide(agent, host)
        try:
            future: Future[ProxyVerdict] = asyncio.run_coroutine_threadsafe(
                decision, self.decide_loop
            )
        except RuntimeError:  # the bot's loop is closed: it is stopping
            decision.close()
            return ProxyVerdict(False, "the bot is stopping; refused")
        try:
            return await asyncio.wait_for(asyncio.wrap_future(future), DECIDE_SECONDS)
        except Exception:
            log.exception("agent %s: deciding a connection to %s failed", agent, host)
            future.cancel()
            return ProxyVerdict(False, "the host could not decide; refused")
        except asyncio.CancelledError:
            future.cancel()
            raise

    async def _resolve(self, host: str, port: int) -> str:
        """The address to connect to: the test map, an address literal, or the system's
        resolver, run by the proxy (never inside the sandbox)."""
        if host in self.resolve_overrides:
            return self.resolve_overrides[host]
        with contextlib.suppress(ValueError):
            return str(ipaddress.ip_address(host))
        loop = asyncio.get_running_loop()
        infos = await asyncio.wait_for(
            loop.getaddrinfo(host, port, type=socket.SOCK_STREAM), CONNECT_SECONDS
        )
        if not infos:
            raise OSError(f"{host} has no address")
        return str(infos[0][4][0])


def _host_local(address: str) -> bool:
    """Whether ``address`` reaches this host itself or its link (loopback, link-local such
    as a cloud's metadata service, unspecified, multicast): a granted name that resolves
    there would let the sandbox reach the bot's own services."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return True
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_loopback or ip.is_link_local or ip.is_unspecified or ip.is_multicast


async def _answer(writer: asyncio.StreamWriter, status: int, reason: str) -> None:
    """An error response; the reason goes in the status line (which pip and curl show)
    and the body."""
    phrase = " ".join(reason.replace("\r", " ").replace("\n", " ").split())[:300]
    body = f"plancord: {phrase}\n".encode()
    head = (
        f"HTTP/1.1 {status} {phrase}\r\nContent-Type: text/plain\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    with contextlib.suppress(OSError, ConnectionError):
        writer.write(head.encode("latin-1", "replace") + body)
        await writer.drain()


async def _splice(
    client_reader: asyncio.StreamReader,
    client_writer: asyncio.StreamWriter,
    server_reader: asyncio.StreamReader,
    server_writer: asyncio.StreamWriter,
) -> None:
    """Copy both ways until either side ends or the tunnel is idle too long."""

    async def pump(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
        while True:
            data = await asyncio.wait_for(source.read(CHUNK_BYTES), IDLE_SECONDS)
            if not data:
                with contextlib.suppress(OSError, RuntimeError):
                    if sink.can_write_eof():
                        sink.write_eof()
                return
            sink.write(data)
            await sink.drain()

    tasks = [
        asyncio.create_task(pump(client_reader, server_writer)),
        asyncio.create_task(pump(server_reader, client_writer)),
    ]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
