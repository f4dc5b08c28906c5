"""SIGTERM (what ``docker stop`` and systemd send) ends ``plancord run``'s serving cleanly:
the app is closed (running turns stopped, their channels told) instead of the process dying
mid-write, and the run's status is 0."""

from __future__ import annotations

import asyncio
import os
import signal

import pytest

from plancord.discord_bot.serving import Serving
from tests.discord_bot.agent_scene import Scene, SceneFactory


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
async def test_a_stop_signal_closes_the_bot_and_its_app(
    scene_factory: SceneFactory, signum: signal.Signals, capsys: pytest.CaptureFixture[str]
) -> None:
    scene: Scene = await scene_factory()
    await scene.create_agent("ada")
    bot = scene.world.bot
    closed: list[bool] = []
    original_shutdown = scene.app.runtime.shutdown

    async def recording_shutdown(**options: object) -> None:
        closed.append(bool(options.get("notice")))
        await original_shutdown(**options)  # type: ignore[arg-type]

    async def logged_in(token: str) -> None:  # the world's bot is logged in already
        return None

    async def connected(*, reconnect: bool = True) -> None:  # a gateway that stays up
        await asyncio.Event().wait()

    scene.app.runtime.shutdown = recording_shutdown  # type: ignore[method-assign]
    bot.login = logged_in  # type: ignore[method-assign]
    bot.connect = connected  # type: ignore[method-assign]
    serving = asyncio.create_task(Serving(bot, "token").run())
    await asyncio.sleep(0.05)
    os.kill(os.getpid(), signum)

    assert await asyncio.wait_for(serving, timeout=20) == 0
    assert closed == [True]
    assert bot.is_closed()
    assert capsys.readouterr().err == f"plancord: {signum.name} received; stopping\n"
