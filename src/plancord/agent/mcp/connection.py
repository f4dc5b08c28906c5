"""One MCP server of one agent: started, listed, called, restarted with backoff, closed.

Why this exists: the SDK's ``Client`` is an async context manager whose task group must be
entered and left by one task, while tool calls come from the agent's turns. So each
connection runs in a task of its own that holds the client open until it is closed, and the
calls go through the client it publishes. All of it runs on the MCP background loop
(``background``): the public methods cross over to it. A server that dies mid-call is a tool
error; the next call starts it again, no sooner than the backoff allows (1 s, doubling, at
most 60 s). A stdio server's stderr is drained into a bounded tail (``stderr``), whose last
line says why a server died.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError
from mcp.types import CONNECTION_CLOSED, CallToolResult, TextContent
from mcp.types import Tool as RemoteTool

from plancord.agent.mcp.background import BackgroundLoop
from plancord.agent.mcp.spawn import ServerSpawn
from plancord.agent.mcp.stderr import StderrTail
from plancord.agent.tools.base import ToolResult
from plancord.core.errors import PlancordError

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
class Endpoint:
    """Where a server is: a spawn made fresh for each start (stdio), or a URL."""

    spawn: Callable[[], ServerSpawn] | None = None
    url: str | None = None


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
        self._endpoint = endpoint
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

    async def call(self, tool: str, arguments: dict[str, Any]) -> ToolResult:
        """Call ``tool``; a dead server is an error result, restarted on a later call."""
        return await self._background.run(self._call(tool, arguments))

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
        spawn: ServerSpawn | None = None
        errlog = StderrTail() if self._endpoint.spawn is not None else None
        try:
            if self._endpoint.spawn is not None:
                spawn = await asyncio.to_thread(self._endpoint.spawn)
            async with Client(self._transport(spawn, errlog), cache=None) as client:
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
                ready.set_exception(McpServerDown(self.server, _why(exc, errlog)))
            else:
                log.warning("MCP server %s ended: %s", self.server, exc)
        finally:
            self._client = None
            if errlog is not None:
                errlog.close()
                self.stderr = errlog.text()
                self.stderr_bytes += errlog.total
            if not ready.done():
                ready.set_exception(McpServerDown(self.server, _why(None, errlog)))
            if spawn is not None:
                spawn.cleanup()

    def _transport(self, spawn: ServerSpawn | None, errlog: StderrTail | None) -> Any:
        if spawn is None or errlog is None:
            return self._endpoint.url
        params = StdioServerParameters(
            command=spawn.argv[0], args=spawn.argv[1:], env=spawn.env, cwd=spawn.cwd
        )
        return stdio_client(params, errlog=errlog.writer)

    async def _call(self, tool: str, arguments: dict[str, Any]) -> ToolResult:
        client = await self._client_for_call()
        if isinstance(client, ToolResult):
            return client
        try:
            result = await asyncio.wait_for(
                client.call_tool(tool, arguments), timeout=self._call_timeout
            )
        except MCPError as exc:
            if exc.code != CONNECTION_CLOSED:
                return ToolResult.error(f"MCP server `{self.server}`: {exc.error.message}")
            await self._died(exc.error.message)
            said = last_line(self.stderr)
            return ToolResult.error(
                f"MCP server `{self.server}` ended during the call"
                + (f" (its last words on stderr: {said})" if said else "")
                + "; it is restarted on the next call"
            )
        except TimeoutError:
            await self._died("it did not answer within the call timeout")
            return ToolResult.error(
                f"MCP server `{self.server}` did not answer within {self._call_timeout:g} s; "
                "it is restarted on the next call"
            )
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            await self._died(str(exc) or type(exc).__name__)
            return ToolResult.error(
                f"MCP server `{self.server}` failed during the call ({type(exc).__name__}); "
                "it is restarted on the next call"
            )
        self._failures = 0
        return _as_result(result)

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


def _why(exc: BaseException | None, errlog: StderrTail | None) -> str:
    """One line: the server's last line on stderr, else the exception."""
    said = last_line(errlog.text()) if errlog is not None else ""
    if said:
        return said
    if exc is None:
        return "it exited"
    return (f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__)[:300]


def _as_result(result: CallToolResult) -> ToolResult:
    parts: list[str] = []
    for block in result.content:
        if isinstance(block, TextContent):
            parts.append(block.text)
        else:
            parts.append(f"[{block.type} content omitted]")
    if not parts and result.structured_content is not None:
        parts.append(json.dumps(result.structured_content, ensure_ascii=False))
    text = "\n".join(parts) or "(no output)"
    return ToolResult(text, is_error=result.is_error)
