"""A Discord that does not answer the login is tried again with backoff, said once a
minute, never fatal; a refused token still ends the run with status 2."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import discord
import pytest

from plancord.discord_bot.serving import LoginRetry, Serving


class FakeHttp:
    def __init__(self) -> None:
        self.connector: Any = object()
        self.closed = 0

    async def close(self) -> None:
        self.closed += 1


class FakeMetrics:
    port = 9464


class FakeConfig:
    database_label = "sqlite:x"


class FakeApp:
    config = FakeConfig()
    metrics = FakeMetrics()


class FlakyBot:
    """A bot whose login fails ``failures`` times as ``failure`` does, then logs in; its
    gateway then ends at once (as a closed session does)."""

    def __init__(self, failures: int, failure: BaseException | None = None) -> None:
        self.http: Any = FakeHttp()
        self.setup_begun = False
        self.failures = failures
        self.failure = failure
        self.logins = 0
        self.connected = False
        self.closed = False

    async def open_app(self) -> Any:
        return FakeApp()

    async def login(self, token: str) -> None:
        self.logins += 1
        if self.logins <= self.failures:
            if self.failure is None:
                await asyncio.Event().wait()  # Discord never answers
            raise self.failure
        self.setup_begun = True

    async def connect(self, *, reconnect: bool = True) -> None:
        self.connected = True

    async def close(self) -> None:
        self.closed = True


class Clock:
    def __init__(self) -> None:
        self.now = 0.0
        self.waits: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)
        self.now += seconds


async def test_an_unreachable_discord_is_retried_with_backoff_and_said_once_a_minute(
    caplog: pytest.LogCaptureFixture,
) -> None:
    bot = FlakyBot(12, OSError("Cannot connect to host discord.com:443"))
    clock = Clock()
    serving = Serving(bot, "t", retry=LoginRetry(), sleep=clock.sleep, clock=clock)

    with caplog.at_level(logging.WARNING, "plancord.run"):
        assert await serving.run() == 0

    assert bot.logins == 13 and bot.connected and bot.closed
    assert clock.waits == [1, 2, 4, 8, 16, 30, 30, 30, 30, 30, 30, 30]
    said = [r.getMessage() for r in caplog.records if "answer" in r.getMessage()]
    # 241 s of outage, said at 0, 61, 121 and 181 s (once a minute), then its end.
    assert len(said) == 5, said
    assert said[0].startswith("Discord does not answer (OSError: Cannot connect to host")
    assert said[1].startswith("Discord has not answered for 61s")
    assert any("answered after 241s" in r.getMessage() for r in caplog.records)
    # Each failed login's HTTP session is closed and the next opens a fresh one.
    assert bot.http.closed == 12


async def test_a_login_that_hangs_is_given_up_and_tried_again(
    caplog: pytest.LogCaptureFixture,
) -> None:
    bot = FlakyBot(2)
    clock = Clock()
    retry = LoginRetry(attempt_seconds=0.05)
    serving = Serving(bot, "t", retry=retry, sleep=clock.sleep, clock=clock)

    with caplog.at_level(logging.WARNING, "plancord.run"):
        assert await asyncio.wait_for(serving.run(), 10) == 0

    assert bot.logins == 3 and bot.connected
    assert any("no answer in 0.05s" in r.getMessage() for r in caplog.records)


async def test_a_refused_token_ends_the_run_with_status_2(
    capsys: pytest.CaptureFixture[str],
) -> None:
    bot = FlakyBot(1, discord.LoginFailure("Improper token has been passed."))
    clock = Clock()

    assert await Serving(bot, "t", sleep=clock.sleep, clock=clock).run() == 2

    assert clock.waits == []
    assert capsys.readouterr().err == "plancord: Discord refused DISCORD_TOKEN; check the token\n"
    assert bot.closed
