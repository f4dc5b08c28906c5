"""An operator rule only says "read-only"; with no read-only wall to hold it, it grants nothing.

An operator who writes a rule for ``rm`` (a mistake, or a rule broader than meant) is saved
by the read-only sandbox: the command runs unasked but cannot delete. With
``sandbox.layer: off`` (and, in plan mode, ``plan_mode.shell_sandbox: off``) no wall holds,
so a rule-allowed command must ask (plan mode refuses it), and no result may claim that a
read-only sandbox ran.
"""

from __future__ import annotations

from typing import Any

from plancord.testing.anthropic_server import ToolCall, text_turn, tool_turn
from tests.security.hostile import Hostile, planning

_RM_RULE = {
    "command": "rm",
    "flags": "rf",
    "operands": "paths",
    "match": ["rm -rf x"],
}
_NO_WALL = {"sandbox": {"layer": "off"}, "shell": {"read_only_rules": [_RM_RULE]}}
_DELETE = "rm -rf README.md app.py"
_CLAIM = "[ran in the read-only sandbox]"


def _bash(command: str) -> Any:
    return tool_turn(ToolCall("bash_execute", {"command": command}))


async def test_a_rule_allowed_command_asks_when_no_wall_holds_it(hostile: Any) -> None:
    scene: Hostile = await hostile([_bash(_DELETE), text_turn("done")], config=_NO_WALL)
    await scene.ana.send(scene.channel, "tidy up")
    request = scene.channel.last_message
    shown = request.content + "".join(str(embed.to_dict()) for embed in request.embeds)
    assert "rm -rf" in shown, "the rule-allowed command ran without asking"
    await scene.ana.click(request, label="Deny")
    assert (scene.workspace / "README.md").exists()
    assert (scene.workspace / "app.py").exists()
    [result] = scene.tool_results()
    assert "denied" in result
    assert _CLAIM not in result


async def test_plan_mode_without_its_wall_refuses_a_rule_allowed_command(hostile: Any) -> None:
    scene = await planning(
        hostile,
        [_bash(_DELETE), _bash("cat README.md")],
        config=_NO_WALL,
        plan_mode={"shell_sandbox": "off"},
    )
    assert (scene.workspace / "README.md").exists()
    assert (scene.workspace / "app.py").exists()
    refused, read = scene.tool_results()
    assert "plan_mode_refusal" in refused
    assert "operator rule" in refused and "no read-only wall" in refused
    assert "[exit code 0]" in read
    assert _CLAIM not in read, "a result claims a sandbox that did not run"
