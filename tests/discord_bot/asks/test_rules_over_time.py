"""Remembered rules over time and across processes, end to end: a rule for one day stops
deciding after the day; a revoke from another process (``plancord rules revoke``) is read at
the next call; plan mode never asks a rule; and ``/plan why``, the "Why?" button and
``plancord calls`` name what decided each call."""

from __future__ import annotations

import subprocess
import sys
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import yaml

from plancord.core.call_rules import RuleScope
from plancord.core.kinds import Permission
from tests.discord_bot.agent_scene import Scene, SceneFactory
from tests.discord_bot.asks.remembering import (
    approver_scene,
    cards,
    remember,
    result_texts,
    shell_script,
)
from tests.fakes.anthropic_server import ToolCall, text_turn, tool_turn


def plancord(scene: Scene, tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``plancord ARGS`` in a process of its own, over the bot's database."""
    config = tmp_path / "operator.yaml"
    config.write_text(yaml.safe_dump({"data_dir": str(scene.world.data_dir)}))
    return subprocess.run(
        [sys.executable, "-m", "plancord.command.main", *args, "--config", str(config)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def private_answer(result: Any) -> Any:
    """The private answer to a deferred interaction (the response the first follow-up
    fills in, or that follow-up)."""
    shown = result.followups or [result.response]
    assert shown[0] is not None and shown[0].ephemeral
    return shown[0]


def twice_then_again(command: str) -> list[Any]:
    call = tool_turn(ToolCall("bash_execute", {"command": command}))
    return [call, call, text_turn("Done."), call, text_turn("Again.")]


async def test_a_rule_for_one_day_stops_deciding_after_the_day(
    scene_factory: SceneFactory,
) -> None:
    scene, channel, carol = await approver_scene(scene_factory, twice_then_again("npm test"))
    await scene.ana.send(channel, "run the tests")
    await remember(carol, cards(scene, channel)[0], lasts="day")
    assert len(cards(scene, channel)) == 1  # the second call ran under the rule
    [row] = await scene.rows("SELECT created_at, expires_at FROM call_rules")
    made, ends = (datetime.fromisoformat(row[k]) for k in ("created_at", "expires_at"))
    assert ends - made == timedelta(days=1)
    # The day passes (the stored expiry moved, rather than a day of virtual time).
    await scene.app.db.execute(
        "UPDATE call_rules SET expires_at = ?", ((made + timedelta(minutes=5)).isoformat(),)
    )
    await scene.env.advance_time(6 * 60)
    await scene.ana.send(channel, "once more")

    assert len(cards(scene, channel)) == 2


async def test_a_revoke_from_another_process_is_read_at_the_next_call(
    scene_factory: SceneFactory, tmp_path: Path
) -> None:
    scene, channel, carol = await approver_scene(scene_factory, twice_then_again("npm test"))
    await scene.ana.send(channel, "run the tests")
    await remember(carol, cards(scene, channel)[0])
    [rule] = await scene.rows("SELECT id FROM call_rules")

    listed = plancord(scene, tmp_path, "rules", "list", "--agent", "ada")
    revoked = plancord(scene, tmp_path, "rules", "revoke", rule["id"])
    await scene.ana.send(channel, "once more")

    assert listed.returncode == 0, listed.stderr
    assert f"{rule['id']} · member · allow `bash_execute` running `npm test`" in listed.stdout
    assert "in force" in listed.stdout
    assert revoked.returncode == 0, revoked.stderr
    assert len(cards(scene, channel)) == 2  # asked again
    again = plancord(scene, tmp_path, "rules", "revoke", rule["id"])
    assert again.returncode == 1 and "no member's rule" in again.stderr


async def test_plan_mode_never_asks_an_allow_rule(scene_factory: SceneFactory) -> None:
    script = shell_script("touch made.txt")
    scene, channel, _ = await approver_scene(scene_factory, script)
    rules = scene.app.call_rules
    assert rules is not None
    await rules.remember("ada", RuleScope("bash_execute", argv=("touch",)), Permission.ALLOW, "x")

    await scene.ana.slash(channel, "plan start", task="make a file")
    await scene.ana.send(channel, "make the file")

    assert not (scene.app.manager.workspace_of("ada") / "made.txt").exists()
    assert any("plan_mode_refusal" in t for t in result_texts(scene))
    answer = private_answer(await scene.ana.slash(channel, "plan why"))
    assert "bash_execute" in answer.content and "· filter →" in answer.content
    assert "refused" in answer.content


async def test_plan_why_the_why_button_and_plancord_calls_name_every_decider(
    scene_factory: SceneFactory, tmp_path: Path
) -> None:
    script = shell_script("ls", "npm test", "npm test", "npm run evil")
    scene, channel, carol = await approver_scene(scene_factory, script)
    await scene.ana.send(channel, "look and test")
    await remember(carol, cards(scene, channel)[0])
    await carol.click(cards(scene, channel)[-1], label="Deny")

    answer = private_answer(await scene.ana.slash(channel, "plan why"))
    lines = [line for line in answer.content.splitlines() if line.startswith("- ")]
    assert len(lines) == 4
    assert "bash_execute" in lines[0] and "· filter → ran" in lines[0]
    assert "· human (carol) → ran" in lines[1]
    assert "· rule r" in lines[2] and "→ ran" in lines[2]
    assert "· human (carol) → denied" in lines[3]
    status = next(m for m in channel.history() if m.content.startswith("🔧"))
    clicked = await scene.ana.click(status, label="Why?")
    assert private_answer(clicked).content == answer.content

    printed = plancord(scene, tmp_path, "calls", "--agent", "ada")
    assert printed.returncode == 0, printed.stderr
    assert [f"- {line}" for line in printed.stdout.splitlines()] == lines
