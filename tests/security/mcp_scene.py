"""The scene of the MCP attack tests: agent ``ada`` with the test tracker server (a real
stdio MCP server written with the SDK, ``tests/fakes/mcp_servers``), in a hostile world
patient enough for a server starting inside the sandbox."""

from __future__ import annotations

import site
from pathlib import Path
from typing import Any

from plancord.core.planning import Phase
from plancord.testing.anthropic_server import ToolCall, text_turn, tool_turn
from tests.security.hostile import Hostile

SERVERS = Path(__file__).resolve().parent.parent / "fakes" / "mcp_servers"
SITE_PACKAGES = next(p for p in site.getsitepackages() if p.endswith("site-packages"))
PATIENT_SECONDS = 60.0


async def patient(hostile: Any, *args: Any, **options: Any) -> Hostile:
    """A hostile world whose SimCord waits long enough for real servers: an MCP server starts
    inside the sandbox, and on a loaded machine that alone can take seconds."""
    scene: Hostile = await hostile(*args, **options)
    scene.world.env.settle_timeout = PATIENT_SECONDS
    return scene


def tracker(*extra_args: str, **settings: Any) -> dict[str, Any]:
    """The config of the test tracker server for agent ``ada``."""
    server = {
        "command": "/usr/bin/python3.11",
        "args": [str(SERVERS / "tracker_server.py"), SITE_PACKAGES, *extra_args],
        "mounts": [SITE_PACKAGES, str(SERVERS)],
        **settings,
    }
    return {"agents": {"ada": {"mcp_servers": {"tracker": server}}}}


def call(tool: str, **arguments: Any) -> Any:
    return tool_turn(ToolCall(f"mcp__tracker__{tool}", arguments))


async def planning(hostile: Any, script: list[Any], config: dict[str, Any]) -> Hostile:
    scene: Hostile = await patient(hostile, [*script, text_turn("still exploring")], config=config)
    await scene.ana.slash(scene.channel, "plan start", task="triage the tracker")
    assert (await scene.app.store.load_state("ada")).phase is Phase.GATHERING
    return scene
