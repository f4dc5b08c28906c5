"""One MCP server entry for both phases (``writable_workspace: executing``), end to end:
the real tracker server in the agent's real sandbox, the real bot under SimCord, a
scripted (attacker-steered) model. While planning the server runs with the workspace
read-only, so even a writing tool the operator wrongly called read-only writes nothing;
once the plan is approved the same entry writes on the execution branch."""

from __future__ import annotations

from typing import Any

from plancord.core.planning import Phase
from plancord.testing.anthropic_server import ToolCall, text_turn, tool_turn
from tests.security.hostile import Hostile
from tests.security.mcp_scene import call, patient, planning, tracker


async def test_while_planning_the_server_reads_and_cannot_write(hostile: Any) -> None:
    config = tracker(read_only=["*"], writable_workspace="executing")
    scene = await planning(
        hostile, [call("read_issue", number=3), call("close_issue", number=4)], config
    )

    read, write = scene.tool_results()
    assert read == "issue 3: the build is red"
    assert write == "Error executing tool close_issue"  # the read-only workspace refused it
    assert not (scene.workspace / "closed.txt").exists()


async def test_once_approved_the_same_entry_writes(hostile: Any) -> None:
    plan = {
        "summary": "Close the red-build issue",
        "steps": [{"description": "Close issue 9", "tools": ["mcp__tracker__close_issue"]}],
    }
    script = [
        call("read_issue", number=9),
        tool_turn(ToolCall("submit_plan", {"plan": plan})),
        call("close_issue", number=9),
        text_turn("closed"),
    ]
    config = tracker(trust_hints=True, writable_workspace="executing")
    scene: Hostile = await patient(hostile, script, profile="open", config=config)
    await scene.ana.slash(scene.channel, "plan start", task="close the issue")
    assert scene.tool_results()[0] == "issue 9: the build is red"
    assert (await scene.app.store.load_state("ada")).phase is Phase.SUBMITTED
    [card] = [
        m
        for m in scene.channel.history()
        if m.embeds and (m.embeds[0].title or "").startswith("Plan: ")
    ]

    await scene.ana.click(card, label="Approve")

    assert (scene.workspace / "closed.txt").read_text() == "9\n"
