"""A stdio server's pipes with a bound on each message: the transport every stdio
connection uses.

Why this exists: the MCP SDK's stdio client keeps what a server writes until a newline
comes, without limit, and joins each new piece to all of it; a server that writes 100 MB
without a newline makes the one loop all servers share copy gigabytes and hold them. Here
one message (one line) may be at most ``MAX_LINE_BYTES``; a server that writes more is
stopped at once (its whole process group killed), the session sees the connection end, and
``StdioFault.why`` says what happened, for the tool's error, the channel and ``plancord
doctor``. Everything else is what the SDK's transport does: newline-delimited JSON-RPC,
the server in its own session, stdin closed first at the end, then the group killed.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, TextIO

import anyio
import anyio.abc
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from plancord.agent.mcp.spawn import ServerSpawn

if TYPE_CHECKING:
    # Imported where a server starts, as in ``connection``: the SDK is slow to import.
    from mcp.shared.message import SessionMessage

log = logging.getLogger(__name__)

#: The longest message a server may send (one line of JSON): room for a result far past the
#: bound the model is given, with its structured copy, and no more.
MAX_LINE_BYTES = 16 * 1024 * 1024

#: How long a server has to exit after its stdin closes, and after SIGTERM.
_EXIT_GRACE_SECONDS = 2.0


@dataclass(slots=True)
class StdioFault:
    """Why the transport stopped a server itself (None while it has not)."""

    why: str | None = None


def _parse(line: bytes) -> SessionMessage | Exception:
    from mcp.shared.message import SessionMessage
    from mcp.types import jsonrpc_message_adapter

    try:
        return SessionMessage(jsonrpc_message_adapter.validate_json(line, by_name=False))
    except ValueError as exc:
        return exc


def _kill_group(process: anyio.abc.Process, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, sig)


async def _exited(process: anyio.abc.Process, seconds: float) -> bool:
    with anyio.move_on_after(seconds):
        await process.wait()
    return process.returncode is not None


async def _stop(process: anyio.abc.Process) -> None:
    """Close stdin, give the server a moment, then end its whole group."""
    if process.stdin is not None:
        with contextlib.suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
            await process.stdin.aclose()
    if not await _exited(process, _EXIT_GRACE_SECONDS):
        _kill_group(process, signal.SIGTERM)
        if not await _exited(process, _EXIT_GRACE_SECONDS):
            _kill_group(process, signal.SIGKILL)
            await _exited(process, _EXIT_GRACE_SECONDS)
    with contextlib.suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
        await process.aclose()


@contextlib.asynccontextmanager
async def bounded_stdio(
    spawn: ServerSpawn,
    errlog: TextIO,
    fault: StdioFault,
    *,
    max_line: int = MAX_LINE_BYTES,
) -> AsyncIterator[
    tuple[
        MemoryObjectReceiveStream[SessionMessage | Exception],
        MemoryObjectSendStream[SessionMessage],
    ]
]:
    """Start ``spawn`` and yield the session's (read, write) streams, as the SDK's
    ``stdio_client`` does, with each incoming line bounded by ``max_line`` bytes."""

    process = await anyio.open_process(
        spawn.argv,
        env=spawn.env,
        stderr=errlog,
        cwd=spawn.cwd,
        start_new_session=True,
        pass_fds=spawn.pass_fds,
    )
    incoming_writer: MemoryObjectSendStream[SessionMessage | Exception]
    incoming: MemoryObjectReceiveStream[SessionMessage | Exception]
    incoming_writer, incoming = anyio.create_memory_object_stream(0)
    outgoing: MemoryObjectSendStream[SessionMessage]
    outgoing_reader: MemoryObjectReceiveStream[SessionMessage]
    outgoing, outgoing_reader = anyio.create_memory_object_stream(0)

    async def read_stdout() -> None:
        stdout = process.stdout
        if stdout is None:
            return
        line = bytearray()
        async with incoming_writer:
            with contextlib.suppress(
                anyio.EndOfStream,
                anyio.ClosedResourceError,
                anyio.BrokenResourceError,
                ConnectionError,
                OSError,
            ):
                async for chunk in stdout:
                    start = 0
                    while True:
                        end = chunk.find(b"\n", start)
                        line += chunk[start:] if end < 0 else chunk[start:end]
                        if len(line) > max_line:
                            fault.why = (
                                f"it sent a message of more than {max_line:,} bytes (a line "
                                "without its end), past the bound on one message; it was "
                                "stopped"
                            )
                            log.warning("MCP server stopped: %s", fault.why)
                            _kill_group(process, signal.SIGKILL)
                            return
                        if end < 0:
                            break
                        message, start = _parse(bytes(line)), end + 1
                        line.clear()
                        await incoming_writer.send(message)

    async def write_stdin() -> None:
        stdin = process.stdin
        if stdin is None:
            return
        try:
            async with outgoing_reader:
                async for message in outgoing_reader:
                    text = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    await stdin.send((text + "\n").encode("utf-8"))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            await incoming_writer.aclose()

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(read_stdout)
        tasks.start_soon(write_stdin)
        try:
            yield incoming, outgoing
        finally:
            with anyio.CancelScope(shield=True):
                outgoing.close()
                incoming.close()
                await _stop(process)
            tasks.cancel_scope.cancel()
