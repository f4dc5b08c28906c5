"""Discard gives back the reviewed tree exactly, ignored files included, attacked through the
real bot: a scripted model executing an approved plan rewrites ``.env``, deletes an ignored
cache and plants an ignored directory; after a restart, Discard clicked on the completion
card puts every byte, mode, link and mtime back, so the workspace fingerprints as the tree
the approver reviewed."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from plancord.agent.workspace_probe import GitTreeProbe
from plancord.core.planning import Phase
from plancord.storage.executions import ExecutionStore
from tests.agent.execution.test_observe import tree_state
from tests.discord_bot.result_card.completed import reply, result_card
from tests.fakes.anthropic_server import ToolCall, text_turn, tool_turn
from tests.world import PlanScene

PLAN = {
    "summary": "Rebuild",
    "steps": [{"description": "Rebuild the app", "tools": ["bash_execute"], "files": ["app.py"]}],
}
ATTACK = (
    "echo 'TOKEN=attacker' > .env && rm -rf cache && mkdir -p dist && "
    "ln -s /etc/passwd dist/creds && echo 'print(2)' > app.py"
)


def _prepare(workspace: Path) -> None:
    (workspace / ".gitignore").write_text(".env\ncache/\ndist/\n")
    (workspace / "app.py").write_text("print(1)\n")
    (workspace / ".env").write_text("TOKEN=reviewed\n")
    (workspace / ".env").chmod(0o600)
    (workspace / "cache" / "empty").mkdir(parents=True)
    (workspace / "cache" / "blob").write_bytes(bytes(range(256)))
    os.utime(workspace / ".env", ns=(1_000_000_000, 1_000_000_000))


async def test_discard_after_a_restart_restores_ignored_files_exactly(plan_scene: Any) -> None:
    scene: PlanScene = await plan_scene(
        [
            tool_turn(ToolCall("submit_plan", {"plan": PLAN})),
            tool_turn(ToolCall("bash_execute", {"command": ATTACK})),
            tool_turn(ToolCall("complete_plan", {"summary": "rebuilt"})),
            text_turn("done"),
        ],
        plan_mode={"drift": "log"},
    )
    app = scene.app
    workspace = app.manager.workspace_of("ada")
    _prepare(workspace)
    probe = GitTreeProbe(app.agents_dir, app.config.sandbox_settings)
    reviewed_tree, reviewed_files = await probe.tree("ada"), tree_state(workspace)
    await scene.ana.slash(scene.channel, "plan start", task="rebuild")
    assert (await scene.state()).phase is Phase.SUBMITTED
    await scene.ana.click(scene.plan_message(1), label="Approve")
    await app.runtime.wait_idle("ada")
    assert (workspace / ".env").read_text() == "TOKEN=attacker\n"
    assert not (workspace / "cache").exists()

    await scene.restart()
    app = scene.app
    record = await ExecutionStore(app.db).latest("ada")
    assert record is not None and not record.running
    answer = await scene.ana.click(result_card(scene), label="Discard")
    assert "back at the reviewed state" in reply(answer)

    assert tree_state(workspace) == reviewed_files
    assert (workspace / ".env").stat().st_mtime_ns == 1_000_000_000
    assert await probe.tree("ada") == reviewed_tree
    assert not (app.agents_dir / "ada" / "kept").exists() or not any(
        (app.agents_dir / "ada" / "kept").iterdir()
    )
