"""The proxy's bytes: an error answer, the system resolver's addresses, and the splice.

Why this exists: the proxy (``sandbox.proxy``) decides which connection is made; what it
then says to a refused client, how a name becomes addresses and how bytes move both ways
are the same for every connection and hold no state, so they live here, bounded: a
resolution within :data:`CONNECT_SECONDS`, data in chunks of :data:`CHUNK_BYTES` with flow
control (a reader waits while its writer's buffer is full), a tunnel idle for
:data:`IDLE_SECONDS` closed.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import socket

from plancord.core.host_names import Address, DnsName

CONNECT_SECONDS = 15.0
IDLE_SECONDS = 300.0
CHUNK_BYTES = 256 * 1024


async def system_addresses(host: DnsName, port: int) -> list[Address]:
    """The system resolver's addresses of ``host`` (the parsed name, never the client's
    text), each once, in its order; OSError when it has none."""
    loop = asyncio.get_running_loop()
    infos = await asyncio.wait_for(
        loop.getaddrinfo(host.text, port, type=socket.SOCK_STREAM), CONNECT_SECONDS
    )
    found: list[Address] = []
    for info in infos:
        with contextlib.suppress(ValueError):
            address = ipaddress.ip_address(str(info[4][0]))
            if address not in found:
                found.append(address)
    if not found:
        raise OSError(f"{host.text} has no address")
    return found


async def answer(writer: asyncio.StreamWriter, status: int, reason: str) -> None:
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


async def splice(
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
