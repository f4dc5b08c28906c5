"""Every process hears every decision (the change feed), played through the real bot under
SimCord with a second process beside it over the same store: the other process's timeout
takes the plan card's buttons away, the operator's ``plancord plan cancel`` stops the
running turn before the model's next write, a result discarded from the shell is redrawn
here, and on PostgreSQL a follower whose ``LISTEN`` connection was killed catches up on
what was decided meanwhile. Each on both engines where the store is involved."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import timedelta
from typing import Any

import pytest

from plancord.app import CoreServices, core_services
from plancord.command.operator import open_services, plan_cancel
from plancord.command.operator_results import result_discard
from plancord.core.execution import ResultState
from plancord.core.planning import Phase
from plancord.storage.engines import open_database
from plancord.testing.postgres_server import PostgresServer
from tests.conftest import ManualClock
from tests.discord_bot.plans import ALL_BUTTONS, submitted
from tests.discord_bot.result_card.completed import completed, result_card
from tests.fakes.anthropic_server import ToolCall, text_turn, tool_turn
from tests.world import PlanScene, buttons

FEED_BOUND = 5.0
"""Seconds the bot may take to act on another process's decision here (a loaded two-core
machine; the benchmark measures the figure: well under a second)."""


@pytest.fixture(params=["sqlite", "postgresql"])
def engine(request: pytest.FixtureRequest) -> dict[str, Any]:
    """The config section naming the world's database: its SQLite file, or PostgreSQL."""
    if request.param == "sqlite":
        return {}
    return {"database": request.getfixturevalue("postgres_url")}


async def within(check: Callable[[], bool], bound: float = FEED_BOUND) -> float:
    """Seconds until ``check()`` holds; fails past ``bound``."""
    start = time.monotonic()
    while not check():
        if time.monotonic() - start > bound:
            raise AssertionError(f"not seen within {bound} s")
        await asyncio.sleep(0.02)
    return time.monotonic() - start


@asynccontextmanager
async def other_process(scene: PlanScene, clock: Any) -> AsyncIterator[CoreServices]:
    """The services of another process over the scene's store: its own connections (so its
    own origin), its own clock, no front end."""
    db = await open_database(scene.app.config.database_target, migrate=False)
    core = core_services(scene.app.config, db, clock)
    try:
        yield core
    finally:
        await core.lease.close()
        await db.close()


async def test_the_other_process_timing_a_plan_out_takes_the_cards_buttons_away(
    plan_scene: Any, engine: dict[str, Any]
) -> None:
    scene = await submitted(plan_scene, plan_mode={"approval_timeout": "10m"}, config=engine)
    assert buttons(scene.plan_message(1)) == ALL_BUTTONS
    # The other process's clock is past the deadline; this one's is not, so only the other
    # process's scheduler can fire it.
    ahead = ManualClock(scene.app.clock.now() + timedelta(minutes=11))
    async with other_process(scene, ahead) as other:
        [fired] = await other.planning.fire_due()
        assert await other.planning.fire_due() == []  # fired once
    assert fired.after.phase is Phase.INACTIVE

    await within(lambda: not any(buttons(scene.plan_message(1)).values()))
    await scene.env.settle()
    message = scene.plan_message(1)
    assert (message.embeds[0].description or "").startswith("⌛ **Timed out — planning cancelled**")
    # This process's own scheduler, woken by the change, finds nothing left to fire.
    await scene.env.advance_time(11 * 60)
    assert [a for a, _ in await scene.audit()].count("timed-out") == 1


PLAN = {
    "summary": "Write two files",
    "steps": [
        {"description": "Write a.txt", "tools": ["create_file"], "files": ["a.txt"]},
        {"description": "Write b.txt", "tools": ["create_file"], "files": ["b.txt"]},
    ],
}


async def test_the_shells_cancel_stops_the_running_turn_before_its_next_write(
    plan_scene: Any, engine: dict[str, Any]
) -> None:
    reached, release = asyncio.Event(), asyncio.Event()
    turns = [
        tool_turn(ToolCall("submit_plan", {"plan": PLAN})),
        tool_turn(ToolCall("create_file", {"path": "a.txt", "content": "a\n"})),
        tool_turn(ToolCall("create_file", {"path": "b.txt", "content": "b\n"})),
        text_turn("Both written."),
    ]
    asked: list[int] = []

    async def script(request: dict[str, Any]) -> Any:
        asked.append(1)
        if len(asked) == 3:  # the model's next write waits while the shell cancels
            reached.set()
            await release.wait()
        return turns[len(asked) - 1] if len(asked) <= len(turns) else text_turn("…")

    scene: PlanScene = await plan_scene(script, config=engine)
    await scene.ana.slash(scene.channel, "plan start", task="write two files")
    approving = asyncio.create_task(scene.ana.click(scene.plan_message(1), label="Approve"))
    await asyncio.wait_for(reached.wait(), timeout=60)
    workspace = scene.app.manager.workspace_of("ada")
    assert (workspace / "a.txt").exists()

    async with open_services(scene.app.config) as services:
        said = await plan_cancel(services, "ada", "not now")
    assert "was executing" in said
    session = scene.app.runtime.session("ada")
    await within(lambda: session.stop_requested)

    release.set()
    await approving
    await scene.app.runtime.wait_idle("ada")
    assert not (workspace / "b.txt").exists()
    assert len(asked) == 3  # nothing asked of the model after the stop
    texts = scene.bot_texts()
    assert "Stopped." in texts
    assert not [t for t in texts if "drift" in t.lower()]
    assert (await scene.state()).phase is Phase.INACTIVE


async def test_a_result_discarded_from_the_shell_is_redrawn_here(
    plan_scene: Any, engine: dict[str, Any]
) -> None:
    scene, _ = await completed(plan_scene, config=engine)
    card = result_card(scene)
    assert buttons(card) == {"Merge": True, "Discard": True}

    async with open_services(scene.app.config) as services:
        await result_discard(services, "ada")

    await within(lambda: not any(buttons(result_card(scene)).values()))
    await scene.env.settle()
    record = await scene.app.executions.latest("ada")
    assert record is not None and record.result is ResultState.DISCARDED
    assert "Discarded" in str(result_card(scene).embeds[0].to_dict())


async def test_a_follower_whose_listen_connection_was_killed_catches_up(
    plan_scene: Any, postgres_url: str, postgres_server: PostgresServer
) -> None:
    scene = await submitted(
        plan_scene, plan_mode={"approval_timeout": "10m"}, config={"database": postgres_url}
    )
    changes = scene.app.changes
    assert changes is not None
    follower = changes.feed.follower
    assert follower is not None and changes.feed.listener_pid is not None
    await within(lambda: changes.feed.connects == 1)
    follower.reconnect_delay = 1.0
    postgres_server.admin(f"SELECT pg_terminate_backend({changes.feed.listener_pid})")
    await within(lambda: follower.breaks == 1)

    # Decided while nobody listens: its NOTIFY reaches no one; the reconnect's read does.
    ahead = ManualClock(scene.app.clock.now() + timedelta(minutes=11))
    async with other_process(scene, ahead) as other:
        await other.planning.fire_due()
    await within(lambda: not any(buttons(scene.plan_message(1)).values()))
    assert changes.feed.connects == 2
