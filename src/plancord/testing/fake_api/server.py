"""The loopback HTTP server that validates requests, plays the script and streams replies."""

from __future__ import annotations

import inspect
import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from aiohttp import web
from anthropic import AsyncAnthropic, DefaultAsyncHttpxClient

from plancord.llm.anthropic_client import tls_context
from plancord.testing.fake_api.limits import check_model, model_rule
from plancord.testing.fake_api.prompt_cache import (
    PromptCache,
    SimulatedUsage,
    canonical_json,
    prompt_parts,
)
from plancord.testing.fake_api.replies import ReplyRenderer, ReplyRequest
from plancord.testing.fake_api.rules import RequestRejected
from plancord.testing.fake_api.script import (
    ErrorReply,
    Script,
    ScriptFunction,
    Turn,
)
from plancord.testing.fake_api.service_rules import (
    LAX_TEST_RULE,
    HasLimits,
    ModelRule,
    ModelTable,
)
from plancord.testing.fake_api.streaming import stream_events
from plancord.testing.fake_api.thinking_binding import check_bindings
from plancord.testing.fake_api.validation import check_headers, validate_request
from plancord.testing.fake_api.version_rules import RequestContext
from plancord.testing.fake_api.wire import JsonObject

#: The API's limit on one Messages request (32 MB, answered by its front with 413).
MAX_REQUEST_BYTES = 32 * 1024 * 1024


@dataclass(frozen=True)
class Rejection:
    """A request the server refused, and why."""

    status: int
    error_type: str
    message: str
    body: object


class FakeAnthropicServer:
    """The Messages API on 127.0.0.1 at an ephemeral port, playing `script`.

    Every body received on `/v1/messages` is appended to `requests` (and those on
    `/v1/messages/count_tokens` to `token_count_requests`); successful responses go to
    `responses` and their usage to `usages`; refused requests to `rejections`; requests that
    found the script exhausted to `unscripted`; exceptions of a script function to
    `script_errors`. Validation happens before a turn is consumed, so a rejected request does
    not use up the script. `cache` holds the simulated prompt cache (`cache.clear()` expires
    it).

    The models it serves are ``service_rules.MODEL_RULES`` (the service's documented rows and
    the lax test models), or ``models`` alone when given: a ``ModelRule`` each, or a
    ``ModelLimits`` for a test model with the lax rules and those limits. The prompt cache's
    floor is the model's (``min_cacheable_tokens`` overrides it for every model).
    """

    def __init__(
        self,
        script: Script = (),
        *,
        api_key: str | None = None,
        min_cacheable_tokens: int | None = None,
        cache_lookback_blocks: int = 20,
        host: str = "127.0.0.1",
        models: Mapping[str, ModelRule | HasLimits] | None = None,
        cache_clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.models = ModelTable.of(models)
        self._turns: list[Turn] | None = None if callable(script) else list(script)
        self._script_function: ScriptFunction | None = script if callable(script) else None
        self._api_key = api_key
        self._host = host
        self.cache = PromptCache(
            min_cacheable_tokens=min_cacheable_tokens,
            lookback_blocks=cache_lookback_blocks,
            clock=cache_clock,
        )
        self.max_request_bytes = MAX_REQUEST_BYTES
        """The largest body ``/v1/messages`` takes; a larger one is refused with 413
        ``request_too_large``, as the API does (32 MB; a test may lower it)."""
        self.requests: list[JsonObject] = []
        self.responses: list[JsonObject] = []
        self.usages: list[SimulatedUsage] = []
        self.rejections: list[Rejection] = []
        self.unscripted: list[JsonObject] = []
        self.token_count_requests: list[JsonObject] = []
        self.script_errors: list[Exception] = []
        self.turns_served = 0
        self._renderer = ReplyRenderer(self.cache)
        self._runner: web.AppRunner | None = None
        self._url: str | None = None
        self._clients: list[AsyncAnthropic] = []

    @property
    def url(self) -> str:
        """The base URL to give `AsyncAnthropic(base_url=...)`."""
        if self._url is None:
            raise RuntimeError("the fake Anthropic server is not running")
        return self._url

    @property
    def script_exhausted(self) -> bool:
        """Whether some request arrived after the script had run out."""
        return bool(self.unscripted)

    async def start(self) -> FakeAnthropicServer:
        app = web.Application(client_max_size=2 * MAX_REQUEST_BYTES)
        app.router.add_post("/v1/messages", self._handle_messages)
        app.router.add_post("/v1/messages/count_tokens", self._handle_count_tokens)
        app.router.add_route("*", "/{tail:.*}", self._handle_unknown)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, self._host, 0)
        await site.start()
        self._runner = runner
        host, port = runner.addresses[0][:2]
        self._url = f"http://{host}:{port}"
        return self

    async def stop(self) -> None:
        """Close the clients made by `client()`, then the server."""
        clients, self._clients = self._clients, []
        for client in clients:
            await client.close()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
            self._url = None

    async def __aenter__(self) -> FakeAnthropicServer:
        return await self.start()

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()

    def client(
        self, *, api_key: str = "test-key", max_retries: int = 0, **options: Any
    ) -> AsyncAnthropic:
        """An `AsyncAnthropic` bound to this server, closed when the server stops.

        Retries default to none so a failure shows at once; pass `max_retries` to test them.
        """
        # The TLS context the bot's clients share: a client of its own would read the trust
        # store again, tens of milliseconds each time.
        options.setdefault("http_client", DefaultAsyncHttpxClient(verify=tls_context()))
        client = AsyncAnthropic(
            base_url=self.url, api_key=api_key, max_retries=max_retries, **options
        )
        self._clients.append(client)
        return client

    def add_turns(self, *turns: Turn) -> None:
        """Append turns to a list script."""
        if self._turns is None:
            raise TypeError("this server plays a script function, not a list of turns")
        self._turns.extend(turns)

    def _next_id(self, prefix: str) -> str:
        return self._renderer.next_id(prefix)

    async def _next_turn(self, body: JsonObject) -> Turn | None:
        if self._script_function is not None:
            turn = self._script_function(body)
            if inspect.isawaitable(turn):
                turn = await turn
            return turn
        return self._turns.pop(0) if self._turns else None

    def _error(
        self, status: int, error_type: str, message: str, headers: Mapping[str, str] | None = None
    ) -> web.Response:
        request_id = self._next_id("req")
        payload = {
            "type": "error",
            "error": {"type": error_type, "message": message},
            "request_id": request_id,
        }
        return web.json_response(
            payload, status=status, headers={"request-id": request_id, **(headers or {})}
        )

    def _refuse(self, body: object, rejected: RequestRejected) -> web.Response:
        self.rejections.append(
            Rejection(rejected.status, rejected.error_type, rejected.message, body)
        )
        return self._error(rejected.status, rejected.error_type, rejected.message)

    async def _read_body(self, request: web.Request) -> object:
        try:
            raw = await request.read()
        except web.HTTPRequestEntityTooLarge:
            raw = None
        if raw is None or len(raw) > self.max_request_bytes:
            raise RequestRejected(
                "Request exceeds the maximum allowed number of bytes.", status=413
            )
        try:
            return json.loads(raw)
        except ValueError as error:
            raise RequestRejected(
                f"There was an issue with your request body: invalid JSON ({error})"
            ) from error

    async def _handle_messages(self, request: web.Request) -> web.StreamResponse:
        try:
            body = await self._read_body(request)
        except RequestRejected as rejected:
            return self._refuse(None, rejected)
        if isinstance(body, dict):
            self.requests.append(body)
        try:
            check_headers(request.headers, api_key=self._api_key)
            context = RequestContext.of(request.headers)
            rule = self._rule_for(body)
            valid = validate_request(body, rule=rule, context=context)
            check_model(valid, self.models)
            binding = check_bindings(valid, rule, context)
        except RequestRejected as rejected:
            return self._refuse(body, rejected)
        try:
            turn = await self._next_turn(valid)
        except Exception as error:
            self.script_errors.append(error)
            return self._error(
                500,
                "api_error",
                f"fake Anthropic server: the script function raised {error!r}",
                {"x-should-retry": "false"},
            )
        if turn is None:
            self.unscripted.append(valid)
            return self._error(
                500,
                "api_error",
                f"fake Anthropic server: script exhausted after {self.turns_served} turn(s); "
                f"request #{len(self.requests)} was not scripted",
                {"x-should-retry": "false"},
            )
        self.turns_served += 1
        if isinstance(turn, ErrorReply):
            headers = {}
            if turn.retry_after is not None:
                headers["retry-after-ms"] = str(max(1, round(turn.retry_after * 1000)))
            return self._error(turn.status, turn.error_type, turn.message, headers)
        try:
            message, usage = self._renderer.render(
                turn, ReplyRequest(valid, rule, context, binding)
            )
        except ValueError as error:
            self.script_errors.append(error)
            return self._error(
                500, "api_error", f"fake Anthropic server: {error}", {"x-should-retry": "false"}
            )
        self.usages.append(usage)
        self.responses.append(message)
        if valid.get("stream"):
            return await self._stream(request, message)
        return web.json_response(message, headers={"request-id": self._next_id("req")})

    async def _handle_count_tokens(self, request: web.Request) -> web.Response:
        try:
            body = await self._read_body(request)
        except RequestRejected as rejected:
            return self._refuse(None, rejected)
        if isinstance(body, dict):
            self.token_count_requests.append(body)
        try:
            check_headers(request.headers, api_key=self._api_key)
            context = RequestContext.of(request.headers)
            valid = validate_request(
                body, count_tokens=True, rule=self._rule_for(body), context=context
            )
            model_rule(valid, self.models)
        except RequestRejected as rejected:
            return self._refuse(body, rejected)
        tokens = sum(part.tokens for part in prompt_parts(valid))
        return web.json_response({"input_tokens": tokens})

    async def _handle_unknown(self, request: web.Request) -> web.Response:
        return self._error(404, "not_found_error", f"Not Found: {request.method} {request.path}")

    def _rule_for(self, body: object) -> ModelRule:
        """The rules to validate ``body`` by: its model's row, or the lax one when the model
        is missing or unknown (the request then fails on its model)."""
        model = body.get("model") if isinstance(body, dict) else None
        return self.models.get(model) or LAX_TEST_RULE

    async def _stream(self, request: web.Request, message: JsonObject) -> web.StreamResponse:
        response = web.StreamResponse(
            headers={
                "content-type": "text/event-stream",
                "cache-control": "no-cache",
                "request-id": self._next_id("req"),
            }
        )
        await response.prepare(request)
        for event in stream_events(message):
            data = canonical_json(event)
            await response.write(f"event: {event['type']}\ndata: {data}\n\n".encode())
        await response.write_eof()
        return response


# --- several servers -------------------------------------------------------------------------


class FakeAnthropicServers:
    """Starts fake servers for one test and stops them all when it ends."""

    def __init__(self) -> None:
        self._servers: list[FakeAnthropicServer] = []

    async def start(
        self,
        script: Script = (),
        *,
        api_key: str | None = None,
        min_cacheable_tokens: int | None = None,
        cache_lookback_blocks: int = 20,
    ) -> FakeAnthropicServer:
        server = FakeAnthropicServer(
            script,
            api_key=api_key,
            min_cacheable_tokens=min_cacheable_tokens,
            cache_lookback_blocks=cache_lookback_blocks,
        )
        self._servers.append(server)
        return await server.start()

    async def stop_all(self) -> None:
        servers, self._servers = self._servers, []
        for server in reversed(servers):
            await server.stop()
