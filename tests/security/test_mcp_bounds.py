"""What an MCP server sends is bounded, end to end: a real stdio server (written with the
SDK, in the agent's real sandbox), the real bot under SimCord, a scripted model that asks it
for too much. A result is cut like the shell's output; a line without end stops the server;
a conversation the API refuses as too large is repaired instead of leaving the agent stuck.
"""

from __future__ import annotations

from typing import Any

from plancord.agent.mcp.stdio import MAX_LINE_BYTES
from plancord.testing.anthropic_server import text_turn
from tests.security.hostile import Hostile
from tests.security.mcp_scene import call, patient, planning, tracker

SHELL_LIMIT = 100_000


NOTE = (
    "[output truncated: showing the first 100,000 of 3,000,000 bytes; call the tool again "
    "with narrower arguments to see the rest]"
)


async def test_a_3_mb_mcp_result_is_cut_like_the_shells_and_the_agent_goes_on(
    hostile: Any,
) -> None:
    scene = await planning(
        hostile,
        [call("dump", characters=3_000_000), text_turn("read it")],
        tracker(read_only=["*"]),
    )

    [result] = scene.tool_results()
    assert result.endswith(NOTE)
    assert len(result.encode()) <= SHELL_LIMIT + len(NOTE) + 1
    assert result.startswith("issue log issue log")
    assert len(scene.database_bytes()) < 2_000_000
    assert scene.world.server.rejections == []


async def test_a_line_of_100_mb_without_newline_stops_the_server_with_a_clear_error(
    hostile: Any,
) -> None:
    scene = await planning(
        hostile,
        [call("endless", mebibytes=100), call("read_issue", number=3), text_turn("so")],
        tracker(read_only=["*"], timeout_seconds=60),
    )

    stopped, _after = scene.tool_results()
    bound = f"more than {MAX_LINE_BYTES:,} bytes"
    assert stopped.startswith("MCP server `tracker` was stopped:") and bound in stopped
    [notice] = [t for t in scene.channel_texts() if "was stopped" in t]
    assert "`tracker`" in notice and bound in notice
    [connection] = {t.connection for t in scene.app.mcp.tools_started("ada")}
    assert not connection.running


async def test_a_conversation_the_api_refuses_as_too_large_is_repaired(
    hostile: Any,
) -> None:
    """Two results of 100 kB each fit the shell's bound, but the API (here taking 150 kB)
    refuses the conversation holding both: the larger is replaced by a note, the request is
    sent again and the agent answers, instead of failing on every later message."""
    scene: Hostile = await patient(
        hostile,
        [
            call("dump", characters=90_000),
            call("dump", characters=99_000),
            text_turn("made it"),
            text_turn("and again"),
        ],
        config=tracker(read_only=["*"]),
    )
    scene.world.server.max_request_bytes = 150_000
    await scene.ana.send(scene.channel, "dump the tracker twice")
    await scene.ana.send(scene.channel, "still there?")

    refused = scene.world.server.rejections
    assert [r.error_type for r in refused] == ["request_too_large"]
    scene.world.server.rejections.clear()
    first, second = scene.tool_results()
    assert first.startswith("issue log") and len(first) == 90_000
    assert second.startswith("[This tool result (") and "too large" in second
    texts = scene.channel_texts()
    assert "made it" in texts and "and again" in texts
