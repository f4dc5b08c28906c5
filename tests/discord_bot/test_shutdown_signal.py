"""SIGTERM (what ``docker stop`` and systemd send) closes the bot cleanly when it handles
signals, as ``plancord run`` asks it to: the app is closed (running turns stopped, their
channels told) instead of the process dying mid-write."""

from __future__ import annotations

import asyncio
import os
import signal

from tests.discord_bot.agent_scene import Scene, SceneFactory


async def test_sigterm_closes_the_bot_and_its_app(scene_factory: SceneFactory) -> None:
    scene: Scene = await scene_factory()
    await scene.create_agent("ada")
    bot = scene.world.bot
    loop = asyncio.get_running_loop()
    closed: list[bool] = []
    original_shutdown = scene.app.runtime.shutdown

    async def recording_shutdown(**options: object) -> None:
        closed.append(bool(options.get("notice")))
        await original_shutdown(**options)  # type: ignore[arg-type]

    scene.app.runtime.shutdown = recording_shutdown  # type: ignore[method-assign]
    bot.install_signal_handlers()
    try:
        os.kill(os.getpid(), signal.SIGTERM)
        for _ in range(200):
            if bot._closing is not None:
                break
            await asyncio.sleep(0.01)
        assert bot._closing is not None
        await asyncio.wait_for(asyncio.shield(bot._closing), timeout=10)
    finally:
        loop.remove_signal_handler(signal.SIGTERM)
        loop.remove_signal_handler(signal.SIGINT)
    assert closed == [True]
    assert bot.is_closed()
