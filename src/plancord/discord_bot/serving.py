"""``plancord run``'s process: up before Discord answers, stopped by a signal at any moment.

Why this exists: discord.py opens an application in its ``setup_hook``, which runs only
once Discord has accepted the login. A bot whose network is down then had no database, no
metrics (an outage at start was invisible to monitoring) and no signal handlers (SIGTERM
ended it with 143, SIGINT silently). Here the order is the operator's: the signal handlers
first, then the database (migrated) and the metrics endpoint, then the login, which a
Discord that does not answer never makes fatal: it is tried again with backoff and the
outage is said once a minute. SIGINT or SIGTERM, whenever it comes, closes the app (running
turns stopped, their channels told when the channels can be reached) and exits 0 after
one line.

A refused token, a missing privileged intent or a setting the app cannot use still ends
the process: no retry mends them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol

import aiohttp
import discord
from discord.utils import MISSING

from plancord.app import App
from plancord.core.errors import PlancordError

log = logging.getLogger("plancord.run")

#: The signals that stop ``plancord run``: what Ctrl-C, ``docker stop`` and systemd send.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


@dataclass(frozen=True, slots=True)
class LoginRetry:
    """How a login Discord does not answer is tried again, and how often that is said."""

    attempt_seconds: float = 30.0
    """How long one login may wait for Discord's first answers (the setup after them is
    never cut short)."""
    first_delay: float = 1.0
    max_delay: float = 30.0
    say_every_seconds: float = 60.0

    def delays(self) -> Callable[[], float]:
        """The waits between attempts: doubling from ``first_delay`` up to ``max_delay``."""
        delay = self.first_delay

        def next_delay() -> float:
            nonlocal delay
            current, delay = delay, min(delay * 2, self.max_delay)
            return current

        return next_delay


class ServedBot(Protocol):
    """What serving needs of the bot (``bot.PlancordBot``)."""

    http: discord.http.HTTPClient

    @property
    def setup_begun(self) -> bool: ...

    async def open_app(self) -> App: ...

    async def login(self, token: str) -> None: ...

    async def connect(self, *, reconnect: bool = True) -> None: ...

    async def close(self) -> None: ...


def say(line: str) -> None:
    """One line to stderr, whatever the log level: what the operator must read."""
    print(f"plancord: {line}", file=sys.stderr, flush=True)


def stop_before_the_loop() -> None:
    """Until the event loop's handlers take over, SIGINT and SIGTERM exit 0 with one line
    (the config is still being read, the modules imported)."""

    def stop(signum: int, frame: object) -> None:
        say(f"{signal.Signals(signum).name} received before start; stopped")
        raise SystemExit(0)

    for signum in STOP_SIGNALS:
        signal.signal(signum, stop)


def _unreachable(exc: BaseException) -> bool:
    """Whether a failed login is Discord (or the way to it) not answering, worth a retry."""
    if isinstance(exc, discord.HTTPException) and not isinstance(exc, discord.LoginFailure):
        return exc.status >= 500 or exc.status == 429
    return isinstance(exc, OSError | aiohttp.ClientError | TimeoutError | discord.GatewayNotFound)


class Serving:
    """One run of the bot: signals, app, login with retries, the gateway, the close."""

    def __init__(
        self,
        bot: ServedBot,
        token: str,
        *,
        retry: LoginRetry | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._bot = bot
        self._token = token
        self._retry = retry or LoginRetry()
        self._sleep = sleep
        self._clock = clock
        self._stop = asyncio.Event()
        self.signal_name: str | None = None
        """The signal that stopped the run, once one has."""

    def install_signal_handlers(self) -> None:
        loop = asyncio.get_running_loop()
        for signum in STOP_SIGNALS:
            loop.add_signal_handler(signum, self.request_stop, signum)

    def remove_signal_handlers(self) -> None:
        loop = asyncio.get_running_loop()
        for signum in STOP_SIGNALS:
            loop.remove_signal_handler(signum)

    def request_stop(self, signum: int) -> None:
        if self.signal_name is None:
            self.signal_name = signal.Signals(signum).name
            say(f"{self.signal_name} received; stopping")
        self._stop.set()

    async def run(self) -> int:
        """Serve until Discord closes the session or a signal stops it; the exit status."""
        self.install_signal_handlers()
        try:
            return await self._until_stopped(self._serve())
        finally:
            with contextlib.suppress(Exception):
                await self._bot.close()
            self.remove_signal_handlers()

    async def _until_stopped(self, work: Awaitable[int]) -> int:
        task = asyncio.ensure_future(work)
        stopped = asyncio.ensure_future(self._stop.wait())
        await asyncio.wait({task, stopped}, return_when=asyncio.FIRST_COMPLETED)
        if task.done():
            stopped.cancel()
            return task.result()
        task.cancel()
        with contextlib.suppress(BaseException):
            await task
        return 0

    async def _serve(self) -> int:
        try:
            app = await self._bot.open_app()
        except PlancordError as exc:
            say(f"could not start: {exc}")
            return 1
        endpoint = app.metrics
        served = f"; metrics on port {endpoint.port}" if endpoint is not None else ""
        log.info("database %s is ready%s; logging in to Discord", app.config.database_label, served)
        try:
            await self._log_in()
            await self._bot.connect(reconnect=True)
        except discord.LoginFailure:
            say("Discord refused DISCORD_TOKEN; check the token")
            return 2
        except discord.PrivilegedIntentsRequired:
            say("enable the Message Content intent for this bot in the Discord developer portal")
            return 2
        except PlancordError as exc:
            say(f"could not start: {exc}")
            return 1
        return 0

    async def _log_in(self) -> None:
        """Log in, trying again with backoff while Discord does not answer."""
        next_delay = self._retry.delays()
        down_since: float | None = None
        said_at: float | None = None
        while True:
            try:
                await self._attempt()
            except Exception as exc:
                if not _unreachable(exc):
                    raise
                now = self._clock()
                down_since = now if down_since is None else down_since
                if said_at is None or now - said_at >= self._retry.say_every_seconds:
                    said_at = now
                    self._say_down(exc, now - down_since)
                await self._forget_session()
                await self._sleep(next_delay())
                continue
            if down_since is not None:
                log.warning("Discord answered after %ds; logged in", self._clock() - down_since)
            return

    def _say_down(self, exc: BaseException, seconds: float) -> None:
        if seconds < 1:
            log.warning(
                "Discord does not answer (%s); trying again with backoff, the database and "
                "metrics are up",
                _describe(exc),
            )
        else:
            log.warning(
                "Discord has not answered for %ds (%s); still trying", seconds, _describe(exc)
            )

    async def _attempt(self) -> None:
        """One login, given up when Discord's first answers take longer than the retry
        allows; the setup that follows them (commands, cards) is never cut short."""
        attempt = asyncio.ensure_future(self._bot.login(self._token))
        try:
            await asyncio.wait_for(asyncio.shield(attempt), self._retry.attempt_seconds)
        except TimeoutError:
            if attempt.done():
                raise
            if self._bot.setup_begun:
                await attempt
                return
            attempt.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await attempt
            raise TimeoutError(f"no answer in {self._retry.attempt_seconds:g}s") from None

    async def _forget_session(self) -> None:
        """Close the failed login's HTTP session; the next login opens a fresh one."""
        with contextlib.suppress(Exception):
            await self._bot.http.close()
        self._bot.http.connector = MISSING


def _describe(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
