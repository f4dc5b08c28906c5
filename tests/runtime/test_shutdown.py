"""Graceful shutdown: a running turn is cancelled with its shell command's processes, the
channel is told, and the next start resumes an executing agent (or tells an idle one's
channel that its turn was cut short)."""

from __future__ import annotations

import asyncio
import os
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from plancord.agent.runtime import AgentRuntime
from plancord.config.shards import ShardShare
from plancord.core.planning import Phase, PlanRef
from tests.fakes.anthropic_server import ToolCall, text_turn, tool_turn
from tests.runtime.builders import build_runtime
from tests.runtime.conftest import ANA, Harness

PLAN = {"summary": "Wait", "steps": [{"description": "Run the long job", "risk": "low"}]}
#: The sleep's length names it among the host's processes (the sandbox has its own pids).
SLEEP = "sleep 600.0713"
LONG = f"touch started; {SLEEP}; touch finished"


async def wait_for(path: Path, seconds: float = 20.0) -> None:
    deadline = time.monotonic() + seconds
    while not await asyncio.to_thread(path.exists):
        assert time.monotonic() < deadline, f"{path} never appeared"
        await asyncio.sleep(0.05)


async def gone(needle: str, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while running(needle):
        assert time.monotonic() < deadline, f"{needle!r} still runs {seconds} s after shutdown"
        await asyncio.sleep(0.05)


def running(needle: str) -> bool:
    """Whether any process on the host has ``needle`` in its command line."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            if needle.encode() in Path(f"/proc/{entry}/cmdline").read_bytes():
                return True
        except OSError:
            continue
    return False


def restarted(harness: Harness, shards: ShardShare | None = None) -> AgentRuntime:
    """A second runtime over the same database and workspaces, as after a restart (serving
    ``shards`` of the application when given)."""
    old = harness.runtime
    return build_runtime(
        harness.core,
        notifier=harness.channel,
        model=old.requests.model,
        clock=harness.clock,
        settings=replace(old.settings, shards=shards) if shards else old.settings,
    )


async def test_shutdown_stops_the_command_tells_the_channel_and_the_restart_resumes(
    make_harness: Any,
) -> None:
    harness: Harness = await make_harness(
        [
            tool_turn(ToolCall("enter_plan_mode", {"reason": "long job"})),
            tool_turn(ToolCall("submit_plan", {"plan": PLAN})),
            tool_turn(ToolCall("bash_execute", {"command": LONG})),
            text_turn("Picking up after the restart."),
        ]
    )
    await harness.say("run the long job")
    revision = await harness.service.current_revision("ada")
    assert revision is not None
    await harness.service.approve(
        PlanRef(agent="ada", plan_id=revision.plan_id, revision=revision.revision), ANA
    )
    started = harness.workspace / "started"
    await wait_for(started)
    assert running(SLEEP)

    began = time.monotonic()
    await harness.runtime.shutdown(notice=True, grace_seconds=5)
    took = time.monotonic() - began

    assert took < 120  # far below the command's sleep: shutdown did not wait for it
    # bubblewrap's pid namespace is torn down by the kernel once its init dies: allow it a
    # moment on a loaded machine, no more
    await gone(SLEEP, seconds=30.0)
    assert "plancord is shutting down" in harness.channel.said[-1]
    assert harness.runtime.markers.marked() == ["ada"]
    assert (await harness.store.load_state("ada")).phase is Phase.EXECUTING

    runtime = restarted(harness)
    assert await runtime.resume_interrupted() == ["ada"]
    await runtime.wait_idle("ada")

    assert "resuming the approved plan" in harness.channel.said[-2]
    assert harness.channel.said[-1] == "Picking up after the restart."
    last = harness.server.requests[-1]["messages"]
    texts = [b.get("text", "") for m in last for b in m["content"]]
    assert any("plancord restarted during your turn" in t for t in texts)
    results = [b for m in last for b in m["content"] if b.get("type") == "tool_result"]
    assert results[-1]["is_error"] is True
    assert not (harness.workspace / "finished").exists()
    assert runtime.markers.marked() == []
    await runtime.shutdown()


async def test_an_idle_agent_whose_turn_was_cut_short_says_so_and_waits(
    make_harness: Any,
) -> None:
    harness: Harness = await make_harness([tool_turn(ToolCall("bash_execute", {"command": LONG}))])
    await harness.runtime.handle_message("ada", "run it", ANA)
    await wait_for(harness.workspace / "started")
    await harness.runtime.shutdown(notice=True, grace_seconds=5)

    runtime = restarted(harness)
    requests_before = len(harness.server.requests)
    assert await runtime.resume_interrupted() == ["ada"]
    assert not runtime.is_busy("ada")
    assert "send a message to continue" in harness.channel.said[-1]
    assert len(harness.server.requests) == requests_before


async def test_a_cut_short_turn_is_resumed_only_by_the_process_serving_its_guild(
    make_harness: Any,
) -> None:
    harness: Harness = await make_harness([tool_turn(ToolCall("bash_execute", {"command": LONG}))])
    await harness.runtime.handle_message("ada", "run it", ANA)
    await wait_for(harness.workspace / "started")
    await harness.runtime.shutdown(notice=True, grace_seconds=5)
    said = len(harness.channel.said)

    # ada has no guild, so she is shard 0's: a process serving shard 1 leaves her alone.
    elsewhere = restarted(harness, ShardShare(2, frozenset({1})))
    assert await elsewhere.resume_interrupted() == []
    assert elsewhere.markers.marked() == ["ada"]
    assert len(harness.channel.said) == said

    owner = restarted(harness, ShardShare(2, frozenset({0})))
    assert await owner.resume_interrupted() == ["ada"]
    assert "send a message to continue" in harness.channel.said[-1]
    assert owner.markers.marked() == []


async def test_a_finished_turn_leaves_nothing_to_resume(make_harness: Any) -> None:
    harness: Harness = await make_harness([text_turn("done")])
    await harness.say("hi")
    assert harness.runtime.markers.marked() == []
    assert await restarted(harness).resume_interrupted() == []
