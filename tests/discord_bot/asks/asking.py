"""What the tests of questions and permission requests read: the tool results the model
got, the stored pending asks, and the components Discord stores for a message."""

from __future__ import annotations

from typing import Any

from tests.discord_bot.agent_scene import Scene
from tests.requests_seen import last_user


def tool_results(scene: Scene, request: int) -> list[dict[str, Any]]:
    last = last_user(scene.server.requests[request])["content"]
    return [b for b in last if b.get("type") == "tool_result"]


async def pending(scene: Scene) -> list[Any]:
    return await scene.rows("SELECT * FROM pending_asks")


def buttons(scene: Scene, message: Any) -> list[dict[str, Any]]:
    return [c for row in scene.stored(message).components for c in row["components"]]
