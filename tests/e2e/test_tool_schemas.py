"""The tool schemas the model is shown, through the real bot: worked out once, yet exactly
what pydantic builds from each tool's input model, in every phase of a plan cycle, so the
prompt cache that starts at the tools, and every thinking block bound to them, stays valid
from request to request, whatever the tool visibility."""

from __future__ import annotations

from typing import Any

import pytest

from plancord.agent.tools.base import Tool
from plancord.core.gate import ToolKind
from plancord.core.planning import Phase
from plancord.demo import AGENT, TASK, executing_turns, exploring_turns
from plancord.testing.anthropic_server import text_turn
from tests.world import PlanScene


def built_afresh(tools: list[Tool[Any]]) -> list[dict[str, Any]]:
    return [
        {
            "name": tool.name,
            "description": tool.description,
            "input_schema": tool.Input.model_json_schema(),
        }
        for tool in tools
    ]


def refused_while_planning(tool: Tool[Any]) -> bool:
    return tool.kind is ToolKind.MUTATING and tool.name != "bash_execute"


async def plan_cycle(story: Any, visibility: str) -> tuple[PlanScene, list[Tool[Any]]]:
    """A message while inactive, then a plan explored, submitted, approved and executed."""
    look, _write, submit = exploring_turns()
    script = [text_turn("Hello."), look, submit, *executing_turns()]
    scene: PlanScene = await story(script, plan_mode={"tool_visibility": visibility})
    await scene.ana.send(scene.channel, "hello")
    await scene.ana.slash(scene.channel, "plan start", task=TASK)
    assert (await scene.state()).phase is Phase.SUBMITTED
    await scene.ana.click(scene.plan_message(1), label="Approve")
    assert (await scene.state()).phase is Phase.INACTIVE
    assert len(scene.world.server.requests) == len(script)
    tools = list(await scene.app.runtime.registry.for_agent(AGENT))
    return scene, tools


@pytest.mark.parametrize("visibility", ["stable", "filter"])
async def test_every_request_carries_the_schemas_pydantic_builds(
    story: Any, visibility: str
) -> None:
    scene, tools = await plan_cycle(story, visibility)
    every = built_afresh(tools)
    planning = built_afresh([t for t in tools if not refused_while_planning(t)])
    shown = [request["tools"] for request in scene.world.server.requests]

    # ``filter`` hides nothing from ``tools`` (thinking blocks are bound to them): the
    # regime says what is not available while planning.
    assert shown == [every] * len(shown)
    assert len(planning) < len(every)
    assert "explore" in [s["name"] for s in every]
