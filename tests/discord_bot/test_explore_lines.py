"""Each ``explore`` sub-agent's line in the channel: posted once when it starts, edited as it
works (no faster than the lines' interval, however many calls it makes), ending in its final
state; an edit Discord refuses never stops it; a restart ends it, says so on its line, and
tells the parent. The real bot under SimCord, the model scripted through the fake API."""

from __future__ import annotations

import asyncio
import itertools
import time
from typing import Any

from plancord.agent.context import INTERRUPTED_BY_TOOL
from plancord.agent.subagents.explore import NAME
from plancord.testing.anthropic_server import ToolCall, text_turn, tool_turn
from tests.discord_bot.exploring import (
    QUESTION,
    is_sub_agent,
    lines,
    posts_of_lines,
    sub_agent_requests,
)
from tests.requests_seen import answered, first_call, last_user
from tests.world import PlanScene


def exploring(*calls: ToolCall, answer: str = "It is app.py.") -> Any:
    """A parent that asks one question, and a sub-agent that makes ``calls`` (one reply
    each) and then answers."""

    async def script(request: dict[str, Any]) -> Any:
        if not is_sub_agent(request):
            if first_call(request):
                return tool_turn(ToolCall(NAME, {"question": QUESTION}))
            return text_turn("thanks")
        made = answered(request)
        return tool_turn(calls[made]) if made < len(calls) else text_turn(answer)

    return script


async def test_a_sub_agents_line_is_posted_once_edited_and_ends_done(plan_scene: Any) -> None:
    views = [ToolCall("glob", {"pattern": "*"}) for _ in range(3)]
    scene: PlanScene = await plan_scene(exploring(*views))

    await scene.ana.send(scene.channel, "find the entry point")

    [line] = lines(scene)
    [posted] = posts_of_lines(scene)
    assert posted.startswith(f"🔎 explore #1: {QUESTION} — 0 calls")
    edits = [p["content"] for p in scene.patches(line.id)]
    assert edits, "the line was never edited"
    assert line.content == edits[-1]
    assert line.content.startswith(f"✅ explore #1: {QUESTION} — done · 3 calls · ")
    assert " tokens · " in line.content and line.content.endswith(" s")
    assert last_user(scene.world.server.requests[-1])["content"][0]["content"] == ("It is app.py.")


async def test_a_busy_sub_agent_edits_its_line_no_faster_than_the_interval(
    plan_scene: Any,
) -> None:
    interval = 0.5
    calls = [ToolCall("glob", {"pattern": "*"}) for _ in range(30)]
    scene: PlanScene = await plan_scene(exploring(*calls), config={"explore": {"max_calls": 40}})
    scene.world.bot.notifier.lines.min_interval = interval
    written: list[tuple[float, Any]] = []

    class Timed(list[Any]):
        """The simulated Discord's request log, noting when each request arrived."""

        def append(self, entry: Any) -> None:
            written.append((time.perf_counter(), entry))
            super().append(entry)

    backend = scene.env.backend
    backend.http_requests = Timed(backend.http_requests)
    started = time.perf_counter()
    await scene.ana.send(scene.channel, "find the entry point")
    elapsed = time.perf_counter() - started

    [line] = lines(scene)
    assert line.content.startswith(f"✅ explore #1: {QUESTION} — done · 30 calls")
    writes = [
        at
        for at, entry in written
        if entry.path.endswith(f"/messages/{line.id}")
        or (entry.method == "POST" and " explore #" in str((entry.json or {}).get("content")))
    ]
    # The line changed at least twice per call (the reply, the call's end): 60 changes.
    edits = len(writes) - 1
    assert 1 <= edits < len(calls)
    assert edits <= elapsed / interval + 1
    gaps = [later - earlier for earlier, later in itertools.pairwise(writes)]
    assert min(gaps) >= interval * 0.9, gaps


async def test_an_edit_discord_refuses_neither_stops_the_sub_agent_nor_its_final_line(
    plan_scene: Any,
) -> None:
    calls = [ToolCall("glob", {"pattern": "*"}) for _ in range(4)]
    scene: PlanScene = await plan_scene(exploring(*calls))
    scene.env.inject_error("PATCH", "/channels/*/messages/*", status=500, times=2)

    await scene.ana.send(scene.channel, "find the entry point")

    [line] = lines(scene)
    assert line.content.startswith(f"✅ explore #1: {QUESTION} — done · 4 calls")
    answer = last_user(scene.world.server.requests[-1])["content"][0]
    assert answer["content"] == "It is app.py." and "is_error" not in answer


async def test_a_line_discord_never_lets_edit_leaves_the_sub_agent_working(
    plan_scene: Any,
) -> None:
    calls = [ToolCall("glob", {"pattern": "*"}) for _ in range(4)]
    scene: PlanScene = await plan_scene(exploring(*calls))
    scene.env.inject_error("PATCH", "/channels/*/messages/*", status=403, times=None)

    await scene.ana.send(scene.channel, "find the entry point")

    [line] = lines(scene)
    assert line.content.startswith(f"🔎 explore #1: {QUESTION} — 0 calls")
    answer = last_user(scene.world.server.requests[-1])["content"][0]
    assert answer["content"] == "It is app.py." and "is_error" not in answer
    scene.env.backend.faults.clear()


async def test_a_restart_ends_the_sub_agent_says_so_and_tells_the_parent(
    plan_scene: Any,
) -> None:
    asked = asyncio.Event()
    never = asyncio.Event()

    async def script(request: dict[str, Any]) -> Any:
        if not is_sub_agent(request):
            if first_call(request):
                return tool_turn(ToolCall(NAME, {"question": QUESTION}))
            return text_turn("I will ask again.")
        if first_call(request):
            return tool_turn(ToolCall("glob", {"pattern": "*"}))
        asked.set()
        await never.wait()  # the sub-agent is still waiting for this reply at the restart
        return text_turn("too late")

    scene: PlanScene = await plan_scene(script)
    sending = asyncio.create_task(scene.ana.send(scene.channel, "find the entry point"))
    await asyncio.wait_for(asked.wait(), timeout=60)
    await scene.world.bot.close()
    await sending
    await scene.env.restart_bot(scene.world.new_bot())
    never.set()
    [line] = lines(scene)
    assert line.content.startswith(
        f"⛔ explore #1: {QUESTION} — stopped: plancord stopped or restarted while it ran"
    )

    await scene.ana.send(scene.channel, "where were we?")

    parent = [r for r in scene.world.server.requests if not is_sub_agent(r)][-1]
    results = [
        b
        for m in parent["messages"]
        if m["role"] == "user" and isinstance(m["content"], list)
        for b in m["content"]
        if b.get("type") == "tool_result"
    ]
    [explored] = results
    assert explored["is_error"] is True
    assert explored["content"] == INTERRUPTED_BY_TOOL[NAME]
    assert "ended by the restart" in explored["content"]
    assert len(sub_agent_requests(scene)) == 2
