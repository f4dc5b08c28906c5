"""One MCP server of one agent: started, listed, called, restarted with backoff, closed.

Why this exists: the SDK's ``Client`` is an async context manager whose task group must be
entered and left by one task, while tool calls come from the agent's turns. So each
connection runs in a task of its own that holds the client open until it is closed, and the
calls go through the client it publishes. All of it runs on the MCP background loop
(``background``): the public methods cross over to it. A server that dies mid-call is a tool
error; the next call starts it again, no sooner than the backoff allows (1 s, doubling, at
most 60 s). A stdio server talks through ``stdio`` (each message bounded) and its stderr
is drained into a bounded tail (``stderr``), whose last line says why a server died. A
result keeps its first bytes (``core.output_bound``, the shell's cut) and says how to get
the rest.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from plancord.agent.mcp.background import BackgroundLoop
from plancord.agent.mcp.spawn import ServerSpawn
from plancord.agent.mcp.stderr import StderrTail
from plancord.agent.mcp.stdio import StdioFault, bounded_stdio
from plancord.agent.tools.base import ToolResult
from plancord.core.errors import PlancordError
from plancord.core.output_bound import bounded_text

if TYPE_CHECKING:
    # The SDK is imported where a server is first started or called, not with this module:
    # a process that starts no server (the operator's shell, an agent without servers) never
    # pays its import, which costs longer than the rest of plancord's together.
    from mcp import Client
    from mcp.types import CallToolResult
    from mcp.types import Tool as RemoteTool

log = logging.getLogger(__name__)

MAX_BACKOFF_SECONDS = 60.0
_MAX_PAGES = 50


class McpServerDown(PlancordError):
    """A server that could not be started (or restarted)."""

    def __init__(self, server: str, why: str) -> None:
        super().__init__(f"MCP server `{server}` did not start: {why}")
        self.server = server
        self.why = why


@dataclass(frozen=True, slots=True)
class McpAnswer:
    """A call's result for the model, and, when the transport stopped the server during
    it, why (for the channel)."""

    result: ToolResult
    stopped: str | None = None


@dataclass(frozen=True, slots=True)
class Endpoint:
    """Where a server is: a spawn made fresh for each start (stdio), or a URL."""

    spawn: Callable[[], ServerSpawn] | None = None
    url: str | None = None


@dataclass(frozen=True, slots=True)
class PhaseEndpoints:
    """A server whose workspace follows the phase (``writable_workspace: executing``):
    read-only while planning, writable while executing. The tool switches its connection
    at each call, by the phase of that call."""

    planning: Endpoint
    executing: Endpoint

    def of(self, planning: bool) -> Endpoint:
        return self.planning if planning else self.executing


class McpConnection:
    def __init__(
        self,
        server: str,
        endpoint: Endpoint,
        *,
        loop: BackgroundLoop,
        call_timeout: float,
        startup_timeout: float,
    ) -> None:
        self.server = server
        self.endpoint = endpoint
        """Where the next start finds the server (the hub changes it between phases)."""
        self._background = loop
        self._call_timeout = call_timeout
        self._startup_timeout = startup_timeout
        self._client: Client | None = None
        self._task: asyncio.Task[None] | None = None
        self._closing: asyncio.Event | None = None
        self._lock_made: asyncio.Lock | None = None
        self._failures = 0
        self._next_attempt = 0.0
        self.restarts = 0
        self.stderr = ""
        self._fault = StdioFault()
        self.stderr_bytes = 0
        """The end of what the server's last run wrote to stderr (at most ``TAIL_BYTES``);
        ``stderr_bytes`` counts all it wrote, in every run."""

    @property
    def running(self) -> bool:
        return self._client is not None and self._task is not None and not self._task.done()

    @property
    def _lock(self) -> asyncio.Lock:
        if self._lock_made is None:
            self._lock_made = asyncio.Lock()
        return self._lock_made

    async def start(self) -> list[RemoteTool]:
        """Start the server and list its tools; McpServerDown when it cannot."""
        return await self._background.run(self._locked_start())

    async def call(self, tool: str, arguments: dict[str, Any], *, max_output: int) -> McpAnswer:
        """Call ``tool``; a dead server is an error result, restarted on a later call. The
        result keeps its first ``max_output`` bytes, with a note of the rest."""
        return await self._background.run(self._call(tool, arguments, max_output))

    async def switch_to(self, endpoint: Endpoint) -> None:
        """Serve from ``endpoint`` from now on: a server running elsewhere is stopped, and
        the next call starts it there."""
        if self.endpoint is endpoint:
            return
        await self.close()
        self.endpoint = endpoint

    async def close(self) -> None:
        await self._background.run(self._close())

    async def _locked_start(self) -> list[RemoteTool]:
        async with self._lock:
            return await self._start()

    async def _start(self) -> list[RemoteTool]:
        await self._stop()
        self._closing = closing = asyncio.Event()
        ready: asyncio.Future[list[RemoteTool]] = asyncio.get_running_loop().create_future()
        self._task = asyncio.create_task(self._serve(ready, closing), name=f"mcp:{self.server}")
        try:
            return await asyncio.wait_for(asyncio.shield(ready), self._startup_timeout)
        except TimeoutError:
            await self._stop()
            raise McpServerDown(self.server, "it did not answer in time") from None
        except McpServerDown:
            await self._stop()
            raise

    async def _serve(self, ready: asyncio.Future[list[RemoteTool]], closing: asyncio.Event) -> None:
        from mcp import Client

        spawn: ServerSpawn | None = None
        errlog = StderrTail() if self.endpoint.spawn is not None else None
        self._fault = fault = StdioFault()

        try:
            if self.endpoint.spawn is not None:
                spawn = await asyncio.to_thread(self.endpoint.spawn)
            async with Client(self._transport(spawn, errlog, fault), cache=None) as client:
                if errlog is not None:
                    errlog.spawned()
                tools = await _list_tools(client)
                self._client = client
                if not ready.done():
                    ready.set_result(tools)
                await closing.wait()
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            if not ready.done():
                ready.set_exception(McpServerDown(self.server, _why(exc, errlog, fault)))
            else:
                log.warning("MCP server %s ended: %s", self.server, exc)
        finally:
            self._client = None
            if errlog is not None:
                errlog.close()
                self.stderr = errlog.text()
                self.stderr_bytes += errlog.total
            if not ready.done():
                ready.set_exception(McpServerDown(self.server, _why(None, errlog, fault)))
            if spawn is not None:
                spawn.cleanup()

    def _transport(
        self, spawn: ServerSpawn | None, errlog: StderrTail | None, fault: StdioFault
    ) -> Any:
        if spawn is None or errlog is None:
            return self.endpoint.url
        return bounded_stdio(spawn, errlog.writer, fault)

    async def _call(self, tool: str, arguments: dict[str, Any], max_output: int) -> McpAnswer:
        from mcp.shared.exceptions import MCPError
        from mcp.types import CONNECTION_CLOSED

        client = await self._client_for_call()
        if isinstance(client, ToolResult):
            return McpAnswer(client)
        fault = self._fault

        try:
            result = await asyncio.wait_for(
                client.call_tool(tool, arguments), timeout=self._call_timeout
            )
        except MCPError as exc:
            if exc.code != CONNECTION_CLOSED:
                return McpAnswer(
                    ToolResult.error(f"MCP server `{self.server}`: {exc.error.message}")
                )
            await self._died(exc.error.message)
            if fault.why is not None:
                return McpAnswer(
                    ToolResult.error(
                        f"MCP server `{self.server}` was stopped: {fault.why}. It is restarted "
                        "on the next call; ask it for less (narrower arguments)."
                    ),
                    stopped=fault.why,
                )
            said = last_line(self.stderr)
            return McpAnswer(
                ToolResult.error(
                    f"MCP server `{self.server}` ended during the call"
                    + (f" (its last words on stderr: {said})" if said else "")
                    + "; it is restarted on the next call"
                )
            )
        except TimeoutError:
            await self._died("it did not answer within the call timeout")
            return McpAnswer(
                ToolResult.error(
                    f"MCP server `{self.server}` did not answer within "
                    f"{self._call_timeout:g} s; it is restarted on the next call"
                )
            )
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            await self._died(str(exc) or type(exc).__name__)
            return McpAnswer(
                ToolResult.error(
                    f"MCP server `{self.server}` failed during the call "
                    f"({type(exc).__name__}); it is restarted on the next call"
                )
            )
        self._failures = 0
        return McpAnswer(_as_result(result, max_output))

    async def _client_for_call(self) -> Client | ToolResult:
        async with self._lock:
            if self.running and self._client is not None:
                return self._client
            wait = self._next_attempt - time.monotonic()
            if wait > 0:
                return ToolResult.error(
                    f"MCP server `{self.server}` is down; it is restarted in {wait:.0f} s"
                )
            try:
                await self._start()
            except McpServerDown as exc:
                self._backoff()
                return ToolResult.error(str(exc))
            self.restarts += 1
            if self._client is None:
                return ToolResult.error(f"MCP server `{self.server}` ended as it started")
            return self._client

    def _backoff(self) -> None:
        self._failures += 1
        delay = min(2.0 ** (self._failures - 1), MAX_BACKOFF_SECONDS)
        self._next_attempt = time.monotonic() + delay

    async def _died(self, why: str) -> None:
        log.warning("MCP server %s died: %s", self.server, why)
        async with self._lock:
            await self._stop()
            self._backoff()

    async def _stop(self) -> None:
        task, self._task = self._task, None
        if task is None:
            return
        if self._closing is not None:
            self._closing.set()
        try:
            await asyncio.wait_for(asyncio.shield(task), 5.0)
        except Exception:
            task.cancel()
            with contextlib.suppress(BaseException):
                await task
        self._client = None

    async def _close(self) -> None:
        async with self._lock:
            await self._stop()


async def _list_tools(client: Client) -> list[RemoteTool]:
    tools: list[RemoteTool] = []
    cursor: str | None = None
    for _ in range(_MAX_PAGES):
        page = await client.list_tools(cursor=cursor)
        tools += page.tools
        cursor = page.next_cursor
        if cursor is None:
            break
    return tools


def last_line(text: str) -> str:
    """The last line of ``text`` that says something, cut to 300 characters."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1][:300] if lines else ""


def _why(exc: BaseException | None, errlog: StderrTail | None, fault: StdioFault) -> str:
    """One line: why the transport stopped the server, else its last line on stderr, else
    the exception."""
    if fault.why is not None:
        return fault.why
    said = last_line(errlog.text()) if errlog is not None else ""
    if said:
        return said
    if exc is None:
        return "it exited"
    return (f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__)[:300]


#: What the model is told when a result is cut.
NARROWER_CALL = "call the tool again with narrower arguments to see the rest"


def _as_result(result: CallToolResult, max_output: int) -> ToolResult:
    from mcp.types import TextContent

    parts: list[str] = []
    for block in result.content:
        if isinstance(block, TextContent):
            parts.append(block.text)
        else:
            parts.append(f"[{block.type} content omitted]")
    if not parts and result.structured_content is not None:
        parts.append(json.dumps(result.structured_content, ensure_ascii=False))
    text, _ = bounded_text("\n".join(parts) or "(no output)", max_output, NARROWER_CALL)
    return ToolResult(text, is_error=result.is_error)
