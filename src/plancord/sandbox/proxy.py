"""The host-side network proxy: the only way out of a sandbox whose network the plan grants.

Why this exists: an executing sandbox under a plan-bound network has no network of its own
(its own empty network namespace). HTTP and HTTPS leave only through this proxy: one unix
socket per agent on the host, over which each run's bridge hands its loopback listener
(``proxy_door``; the socket a listener arrives on says whose its connections are: nothing
the process sends can claim otherwise), and the proxy accepts on that listener itself.
For each connection the proxy reads one request head (``CONNECT host:port`` for HTTPS,
never looking inside the TLS; an absolute ``http://`` URL for plain HTTP) into one
endpoint (``request_head``, ``core.host_names``), asks the decision (``decide``, an async
function of the bot's own event loop, which knows the current step) whether that endpoint
may be reached now, resolves the name itself, refuses an address of this host
(``host_addresses``), connects, tells the decision's ``settle`` what came of it (so only a
connection made is recorded as reached) and splices bytes both ways. The value parsed once
is what is matched, resolved, connected to and recorded: the client's text is never read
again. Every connection is decided on its own, so when the step changes, the next
connection sees the new step's hosts; and a connection already open lasts only while the
grant it was let through under holds (``proxy_grants``: the decision's ``recheck``), so a
tunnel of a long-lived process ends with its step or the execution.

It runs in a thread of its own with its own event loop, so a slow or hostile client never
holds up the loop that serves every agent and Discord: a request head is at most
:data:`MAX_HEAD_BYTES` read within :data:`HEAD_SECONDS`, a connection to the server is made
within :data:`CONNECT_SECONDS`, at most :data:`MAX_CONNECTIONS` are open per agent, and
bytes move as ``proxy_streams`` bounds them (idle tunnels closed, chunks with flow control).

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
from collections.abc import Callable, Coroutine, Hashable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path

from plancord.core.host_names import Address, Endpoint, IpLiteral
from plancord.sandbox import proxy_door
from plancord.sandbox.host_addresses import HostAddresses
from plancord.sandbox.proxy_grants import OpenGrants, Recheck, on_bot_loop
from plancord.sandbox.proxy_streams import (
    CHUNK_BYTES,
    CONNECT_SECONDS,
    answer,
    splice,
    system_addresses,
)
from plancord.sandbox.request_head import BadRequest, parse_head

log = logging.getLogger(__name__)

MAX_HEAD_BYTES = 16 * 1024
HEAD_SECONDS = 30.0
DECIDE_SECONDS = 24 * 3600.0
"""A decision may wait for a human's answer; the card's own timeout ends it first."""
MAX_CONNECTIONS = 64


Settle = Callable[[str | None], Coroutine[object, object, None]]
"""``settle(refused)``: run on the bot's loop once an allowed connection's fate is known,
with None when it was made, or the reason the proxy refused it after the decision."""


@dataclass(frozen=True, slots=True)
class ProxyVerdict:
    """Whether a connection to an endpoint may be made, the reason told to the client, and
    (when allowed) what to tell the decision once it is made or refused."""

    allowed: bool
    reason: str = ""
    settle: Settle | None = None
    grant: Hashable | None = None
    """What the connection came under: it is ended once ``recheck`` no longer holds this
    (``proxy_grants``); None holds it for as long as it lasts."""


Decide = Callable[[str, Endpoint], Coroutine[object, object, ProxyVerdict]]
"""``decide(agent, endpoint)``: run on the bot's event loop."""


@dataclass
class _Listener:
    server: socket.socket
    path: Path
    open_connections: int = 0
    doors: set[asyncio.Task[None]] = field(default_factory=set)
    door_sockets: set[socket.socket] = field(default_factory=set)
    """Each door taken and not yet closed: closed at the end even when its task was
    cancelled before it ran."""


@dataclass
class NetworkProxy:
    """The proxy's thread, its event loop and one unix socket per agent.

    An address of this host itself (``host_addresses``) is refused after the decision,
    whatever the name: the sandbox must not reach the bot's own services or the cloud's
    metadata through a granted name. ``resolve_overrides``: host names answered from this
    map instead of the system's resolver; a loopback answer of the map (and only such an
    answer) is let through. It exists for tests (local servers on 127.0.0.1 named as hosts),
    is empty unless code that holds this object sets it, and nothing in the config file
    reaches it.
    """

    decide: Decide
    decide_loop: asyncio.AbstractEventLoop
    resolve_overrides: Mapping[str, str] = field(default_factory=dict)
    addresses: HostAddresses = field(default_factory=HostAddresses)
    _loop: asyncio.AbstractEventLoop | None = None
    _thread: threading.Thread | None = None
    _listeners: dict[str, _Listener] = field(default_factory=dict)
    recheck: Recheck | None = None
    """Which open connections' grants still hold (``proxy_grants``); None: every
    connection lasts until it ends or idles out."""
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _open: OpenGrants | None = None

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
        self._open = OpenGrants(self.recheck, self.decide_loop)
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
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            server.bind(str(path))
            os.chmod(path, 0o600)
            server.listen(MAX_CONNECTIONS)
        except OSError:
            server.close()
            raise
        server.setblocking(False)
        listener = _Listener(server, path)
        task = asyncio.get_running_loop().create_task(self._doors(agent, listener))
        listener.doors.add(task)
        return listener

    async def _doors(self, agent: str, listener: _Listener) -> None:
        """Take each run's door to ``agent``'s proxy (``proxy_door``) as it connects."""
        loop = asyncio.get_running_loop()
        while True:
            # Readable, then a plain accept: a cancelled wait loses no accepted socket (an
            # awaited sock_accept cancelled as it completes would drop the one it took).
            try:
                await _readable(loop, listener.server)
                door, _ = listener.server.accept()
            except BlockingIOError:
                continue
            except (OSError, ValueError):
                return  # the listener closed
            listener.door_sockets.add(door)
            task = loop.create_task(self._door(agent, listener, door))
            listener.doors.add(task)
            task.add_done_callback(listener.doors.discard)

    async def _door(self, agent: str, listener: _Listener, door: socket.socket) -> None:
        """Serve the loopback listener a run's bridge hands over ``door``, until the host
        closes its end of ``door`` (the run ended)."""
        loop = asyncio.get_running_loop()
        door.setblocking(False)
        server: asyncio.AbstractServer | None = None
        try:
            await asyncio.wait_for(_readable(loop, door), HEAD_SECONDS)
            handed = proxy_door.received(door)
            if handed is None:
                return

            async def accept(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
                await self._serve(agent, listener, reader, writer)

            server = await asyncio.start_server(accept, sock=handed, limit=MAX_HEAD_BYTES)
            while await loop.sock_recv(door, 64):
                pass
        except (OSError, TimeoutError):
            pass
        finally:
            if server is not None:
                server.close()
            door.close()
            listener.door_sockets.discard(door)

    async def _close_all(self) -> None:
        """Stop listening and end every open connection (each closes its sockets)."""
        if self._open is not None:
            self._open.stop()
        current = asyncio.current_task()
        open_connections = [task for task in asyncio.all_tasks() if task is not current]
        for task in open_connections:
            task.cancel()
        await asyncio.gather(*open_connections, return_exceptions=True)
        for listener in self._listeners.values():
            listener.server.close()
            for door in listener.door_sockets:
                door.close()
            listener.door_sockets.clear()
            with contextlib.suppress(FileNotFoundError):
                listener.path.unlink()
            with contextlib.suppress(OSError):  # this process's own folder, when empty
                listener.path.parent.rmdir()
        self._listeners.clear()

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
                await answer(writer, 503, "too many connections at once")
                return
            await self._one(agent, reader, writer)
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            pass
        except TimeoutError:
            pass
        except asyncio.CancelledError:
            pass  # the proxy is closing: the connection ends here, with its sockets
        except Exception:
            # A fault of ours: one connection ends, told nothing more; the proxy goes on.
            log.exception("agent %s: the proxy failed a connection", agent)
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
            await answer(writer, 431, "request head too large")
            return
        except asyncio.IncompleteReadError:
            return
        try:
            request = parse_head(head)
        except BadRequest as exc:
            log.info("agent %s: a bad request head, answered 400: %s", agent, exc)
            await answer(writer, 400, str(exc))
            return
        endpoint = request.endpoint
        verdict = await self._decided(agent, endpoint)
        if not verdict.allowed:
            await answer(writer, 403, verdict.reason)
            return
        try:
            addresses = await self._resolve(endpoint)
        except (OSError, TimeoutError) as exc:
            await answer(writer, 502, f"could not resolve {endpoint.host.shown}: {exc}")
            return
        allowed, refusal = self._judged(endpoint, addresses)
        if not allowed:
            await self._settle(agent, verdict, refusal)
            await answer(writer, 403, refusal)
            return
        upstream = await self._connect(allowed, endpoint.port)
        if upstream is None:
            await answer(writer, 502, f"could not reach {endpoint.shown}")
            return
        upstream_reader, upstream_writer = upstream
        held = self._open if verdict.grant is not None else None
        try:
            if held is not None:
                held.hold(agent, verdict.grant)
            await self._settle(agent, verdict, None)
            if request.tunnel:
                writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
                await writer.drain()
            else:
                upstream_writer.write(request.head)
                await upstream_writer.drain()
            await splice(reader, writer, upstream_reader, upstream_writer)
        finally:
            if held is not None:
                held.drop(agent)
            upstream_writer.close()
            with contextlib.suppress(OSError, ConnectionError):
                await upstream_writer.wait_closed()

    async def _decided(self, agent: str, endpoint: Endpoint) -> ProxyVerdict:
        """The decision, made on the bot's loop; an error or a lost answer refuses."""
        try:
            verdict = await on_bot_loop(
                self.decide_loop, self.decide(agent, endpoint), DECIDE_SECONDS
            )
        except Exception:
            log.exception("agent %s: deciding a connection to %s failed", agent, endpoint.shown)
            return ProxyVerdict(False, "the host could not decide; refused")
        if verdict is None:
            return ProxyVerdict(False, "the bot is stopping; refused")
        return verdict

    async def _settle(self, agent: str, verdict: ProxyVerdict, refused: str | None) -> None:
        """Tell the decision what came of the connection it allowed (its record)."""
        if verdict.settle is None:
            return
        try:
            await on_bot_loop(self.decide_loop, verdict.settle(refused), CONNECT_SECONDS)
        except Exception:
            log.exception("agent %s: recording a connection failed", agent)

    async def _resolve(self, endpoint: Endpoint) -> list[tuple[Address, bool]]:
        """The addresses to try, each with whether the test map gave it: an address
        literal, the test map, or the system's resolver, run by the proxy (never inside
        the sandbox) and handed the parsed name, never the client's text."""
        host = endpoint.host
        if isinstance(host, IpLiteral):
            return [(host.address, False)]
        mapped = self.resolve_overrides.get(host.text)
        if mapped is not None:
            return [(ipaddress.ip_address(mapped), True)]
        return [(address, False) for address in await system_addresses(host, endpoint.port)]

    def _judged(
        self, endpoint: Endpoint, addresses: list[tuple[Address, bool]]
    ) -> tuple[list[Address], str]:
        """The addresses a connection may go to, and why the first refused one is."""
        allowed: list[Address] = []
        refusal = ""
        for address, mapped in addresses:
            why = None if mapped and address.is_loopback else self.addresses.refusal(address)
            if why is None:
                allowed.append(address)
            elif not refusal:
                named = endpoint.host.shown
                place = (
                    f"{named} is"
                    if isinstance(endpoint.host, IpLiteral)
                    else (f"{named} resolves to {address},")
                )
                refusal = f"{place} {why}; no granted host leads to this host or its cloud"
        return allowed, refusal

    async def _connect(
        self, addresses: list[Address], port: int
    ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter] | None:
        """A connection to the first of ``addresses`` that answers within the bound."""
        deadline = asyncio.get_running_loop().time() + CONNECT_SECONDS
        for address in addresses:
            left = deadline - asyncio.get_running_loop().time()
            if left <= 0:
                break
            try:
                return await asyncio.wait_for(
                    asyncio.open_connection(str(address), port, limit=CHUNK_BYTES), left
                )
            except (OSError, TimeoutError):
                continue
        return None


async def _readable(loop: asyncio.AbstractEventLoop, sock: socket.socket) -> None:
    """Until ``sock`` has something to read (or its end closed)."""
    ready: asyncio.Future[None] = loop.create_future()

    def woken() -> None:
        if not ready.done():
            ready.set_result(None)

    loop.add_reader(sock.fileno(), woken)
    try:
        await ready
    finally:
        loop.remove_reader(sock.fileno())
