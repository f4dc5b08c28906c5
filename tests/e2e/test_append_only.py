"""A whole plan cycle through the real bot on the default model (Sonnet 5.5, whose thinking
blocks the fake binds to their prefix), every request captured: planning, approval,
execution, completion, a compaction, a restart that brings an MCP server, and the agent's
next turns. Each conversation's requests must be append-only (same ``system`` and ``tools``
as its first request, ``messages`` the previous request's plus its reply plus new messages)
and the fake must refuse none of them."""

from __future__ import annotations

import json
import site
from pathlib import Path
from typing import Any

from plancord.config import Config
from plancord.core.planning import Phase
from plancord.demo import (
    AGENT,
    TASK,
    executing_turns,
    exploring_turns,
    host_plan_mode,
    seed_workspace,
)
from plancord.testing.anthropic_server import ToolCall, text_turn, tool_turn
from plancord.testing.sim import MODEL
from tests.append_only import check_append_only, is_agent_request
from tests.world import Worlds, plan_scene_in

SERVERS = Path(__file__).resolve().parent.parent / "fakes" / "mcp_servers"
SITE_PACKAGES = next(p for p in site.getsitepackages() if p.endswith("site-packages"))
TRACKER = {
    "command": "/usr/bin/python3.11",
    "args": [str(SERVERS / "tracker_server.py"), SITE_PACKAGES],
    "mounts": [SITE_PACKAGES, str(SERVERS)],
    "trust_hints": True,
    "unclassified": "mutating",
}


def scripted(turns: list[Any]) -> Any:
    """The agent's turns in order; a summary request (no tools) gets a summary."""

    def answer(request: dict[str, Any]) -> Any:
        if not request.get("tools"):
            return text_turn("SUMMARY: greet.py was added and committed.")
        return turns.pop(0)

    return answer


async def test_a_whole_cycle_is_append_only_and_never_refused(worlds: Worlds) -> None:
    look, write, submit = exploring_turns()
    turns: list[Any] = [
        look,
        write,
        submit,
        *executing_turns(),
        text_turn("Nothing else for now."),
        text_turn("The docs are fine."),
        tool_turn(ToolCall("mcp__tracker__read_issue", {"number": 7})),
        text_turn("Issue 7 says the build is red."),
    ]
    world = await worlds.start(scripted(turns), plan_mode=host_plan_mode())
    assert MODEL == "claude-sonnet-5-5"
    scene = await plan_scene_in(world, guild="plancord demo", agent=AGENT)
    await seed_workspace(scene.app.manager.workspace_of(AGENT))

    await scene.ana.slash(scene.channel, "plan start", task=TASK)
    assert (await scene.app.store.load_state(AGENT)).phase is Phase.SUBMITTED
    await scene.ana.click(scene.plan_message(1), label="Approve")
    assert (await scene.app.store.load_state(AGENT)).phase is Phase.INACTIVE
    await scene.ana.send(scene.channel, "anything else?")
    assert await scene.app.runtime.compact(AGENT, keep_fraction=0.0001)
    await scene.ana.send(scene.channel, "and the docs?")

    world.config = Config.model_validate(
        {
            "data_dir": str(world.data_dir),
            "anthropic": {"model": MODEL},
            "plan_mode": host_plan_mode(),
            "agents": {AGENT: {"mcp_servers": {"tracker": TRACKER}}},
        }
    )
    await world.restart()
    await scene.ana.send(scene.channel, "what does issue 7 say?")
    await world.env.settle()

    server = world.server
    assert turns == [], f"the cycle did not run to its end: {scene.bot_texts()[-3:]}"
    assert server.rejections == []
    outcome = check_append_only(server.requests, server.responses)
    assert outcome.violations == []
    assert outcome.conversations == 2  # before and after the compaction
    agent_requests = [r for r in server.requests if is_agent_request(r)]
    assert outcome.checked == len(agent_requests) >= 10
    # Every reply came with a thinking block, and every one went back.
    assert all(r["content"][0]["type"] == "thinking" for r in server.responses)
    last = agent_requests[-1]
    sent = json.dumps(last["messages"])
    assert '"tool_addition"' in sent and "mcp__tracker__read_issue" in sent
    assert all("mcp__tracker" not in t["name"] for t in last["tools"])
    assert "Issue 7 says the build is red." in scene.bot_texts()
