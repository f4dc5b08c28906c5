"""The in-process file tools raced by a process of the agent's, end to end through the real
bot: while a tool call runs, an MCP server (long-lived, running beside the tool) swaps a
directory of the path for a symbolic link to another agent's workspace and back, over and
over. Whatever the jail checked, the file tools reach the file from the workspace root with
no link followed, so no swap lets them read or write the other workspace."""

from __future__ import annotations

from typing import Any

from plancord.testing.anthropic_server import ToolCall, text_turn, tool_turn
from tests.security.hostile import OTHER_SECRET, Hostile
from tests.security.mcp_scene import call, patient, tracker

ROUNDS = 40
BATCHES = 8
ORDINARY = "ordinary notes of the workspace\n"


async def test_a_directory_swapped_for_a_link_mid_call_leads_nowhere(hostile: Any) -> None:
    scene: Hostile = await patient(
        hostile, [], profile="open", config=tracker(trust_hints=True, writable_workspace=True)
    )
    other = scene.app.manager.workspace_of("other")
    (scene.workspace / "docs").mkdir(exist_ok=True)
    (scene.workspace / "docs" / "notes.txt").write_text(ORDINARY)
    (scene.workspace / "docs.swap").symlink_to(other)
    view = ToolCall("view", {"path": "docs/notes.txt"})
    write = ToolCall(
        "create_file", {"path": "docs/notes.txt", "content": ORDINARY, "overwrite": True}
    )
    scene.world.server.add_turns(
        call("keep_swapping", first="docs", second="docs.swap", seconds=600), text_turn("on")
    )
    await scene.ana.send(scene.channel, "sync the tracker")
    # The swap must meet a call after the jail's check at least once for the test to show
    # anything; on a loaded machine a batch may miss that window, so batches repeat.
    for _ in range(BATCHES):
        scene.world.server.add_turns(
            tool_turn(*[view] * ROUNDS), tool_turn(*[write] * ROUNDS), text_turn("done")
        )
        await scene.ana.send(scene.channel, "read the notes, then write them back")
        if any(_raced(result) for result in scene.tool_results()):
            break

    results = scene.tool_results()
    assert results[0] == "swapping"
    assert scene.leaks() == []
    assert (other / "notes.txt").read_text() == OTHER_SECRET
    worked = [r for r in results if "ordinary notes" in r or r.startswith("Replaced docs/")]
    assert any(_raced(result) for result in results), "the swap never met a call after the check"
    assert worked, "no call reached the workspace's own notes"


def _raced(result: str) -> bool:
    """A call whose path a swap changed after the jail's check (a link, or what the walk
    found where a directory was)."""
    return "is a symbolic link" in result or result.endswith("Not a directory.")
