"""The completion card's file lists, under each step, what decided each of its tool calls
and why: a scripted plan explores (the read-only filter decides) and submits (the gate),
executes two steps (the profile and the filter decide), and one call out of its step is
refused (the drift policy); the file names each decider under its step, and ``/plan why``
and ``plancord calls --plan`` name the same deciders."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from plancord.core.planning import Phase
from tests.discord_bot.asks.test_rules_over_time import plancord, private_answer
from tests.discord_bot.result_card.completed import PLAN, result_card
from tests.fakes.anthropic_server import ToolCall, text_turn, tool_turn
from tests.world import PlanScene

EXPLORE = tool_turn(ToolCall("bash_execute", {"command": "ls"}))
WORK = (
    tool_turn(ToolCall("create_file", {"path": "greet.py", "content": "def hello():\n    pass\n"})),
    tool_turn(ToolCall("bash_execute", {"command": "wc -l greet.py"})),
    tool_turn(ToolCall("create_file", {"path": "docs/greet.md", "content": "# hello\n"})),
    tool_turn(ToolCall("create_file", {"path": "outside.txt", "content": "x\n"})),
    tool_turn(ToolCall("complete_plan", {"summary": "greeted"})),
    text_turn("Done."),
)


async def test_the_completion_file_names_the_decider_of_every_call_per_step(
    plan_scene: Any, tmp_path: Path
) -> None:
    scene: PlanScene = await plan_scene(
        [EXPLORE, tool_turn(ToolCall("submit_plan", {"plan": PLAN})), *WORK],
        plan_mode={"drift": "refuse"},
    )
    await scene.ana.slash(scene.channel, "plan start", task="add a greeting module")
    assert (await scene.state()).phase is Phase.SUBMITTED
    await scene.ana.click(scene.plan_message(1), label="Approve")
    await scene.app.runtime.wait_idle("ada")

    card = result_card(scene)
    names = [a.filename for a in card.attachments]
    assert names[0].endswith(".diff") and names[1:] == ["result-v1-steps.md"], names
    text = (await card.attachments[1].read()).decode()
    planning, step_1, step_2 = (
        text.split(heading, 1)[1].split("\n## ", 1)[0]
        for heading in ("## While planning", "## 1. Write greet.py", "## 2. Document it")
    )
    assert "bash_execute #" in planning and "· filter → ran: read-only: ls" in planning
    assert "submit_plan #" in planning and "· gate → ran" in planning
    assert "create_file #" in step_1 and "· profile → ran" in step_1
    assert "bash_execute #" in step_1 and "· filter → ran" in step_1
    assert step_1.count("create_file #") == 1  # docs/greet.md moved the plan on to step 2
    assert "create_file #" in step_2 and "· profile → ran" in step_2
    assert "· drift → refused: not in the approved plan" in step_2 and "outside.txt" in step_2

    answer = private_answer(await scene.ana.slash(scene.channel, "plan why"))
    printed = plancord(scene, tmp_path, "calls", "--agent", "ada", "--plan", plan_id(text))
    assert printed.returncode == 0, printed.stderr
    for decider in ("· filter →", "· gate →", "· profile →", "· drift →"):
        assert decider in answer.content and decider in printed.stdout, decider


def plan_id(text: str) -> str:
    return text.split("(`", 1)[1].split("`)", 1)[0]
