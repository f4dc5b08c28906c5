"""The bot freezes what startup built out of the collector's way and keeps refreezing while
it runs; the simulated bots of other tests leave the collector alone."""

from __future__ import annotations

import gc
from pathlib import Path

import simcord

from plancord.config import Config
from plancord.testing.sim import MODEL, SimClock, make_bot
from tests.fakes.anthropic_server import FakeAnthropicServer


async def test_the_bot_tunes_the_collector_from_startup_to_close(tmp_path: Path) -> None:
    gc.unfreeze()
    server = await FakeAnthropicServer().start()
    config = Config.model_validate(
        {"data_dir": str(tmp_path / "data"), "anthropic": {"model": MODEL}}
    )
    clock = SimClock()
    bot = make_bot(config, server, clock, tune_gc=True)
    env = simcord.Env(bot)
    clock.env = env
    try:
        await env.start()
        assert bot.gc_tuning is not None
        assert gc.get_freeze_count() > 10_000
        task = bot.gc_tuning._task
        assert task is not None and not task.done()
        await env.settle()
        await bot.close()
        assert task.done()
        await env.shutdown()
    finally:
        await server.stop()
        gc.unfreeze()


async def test_simulated_bots_leave_the_collector_alone(world_factory: object) -> None:
    gc.unfreeze()
    world = await world_factory()  # type: ignore[operator]
    assert world.bot.gc_tuning is None
    assert gc.get_freeze_count() == 0
