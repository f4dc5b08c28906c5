"""An executed plan's result from the operator's shell: ``plancord plan status`` names it,
``plan result`` shows its card as text, ``plan merge`` and ``plan discard`` decide it as
``operator`` through the card's own code. A real bot (SimCord, scripted model) executes the
plan on a real data directory; the CLI runs as a separate process against it while the bot
still runs, as an admin would."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from plancord.core.execution import ResultState
from tests.discord_bot.result_card.completed import completed, git, record, result_card
from tests.world import PlanScene, Worlds, buttons, plan_scene_in


async def cli(data_dir: Path, *args: str) -> tuple[int, str, str]:
    """``plancord ARGS --config …`` as its own process, without blocking the bot's loop."""
    config = data_dir.parent / "operator.yaml"
    config.write_text(f"data_dir: {data_dir}\n")
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "plancord.command.main",
        *args,
        "--config",
        str(config),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), timeout=120)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


async def ok(data_dir: Path, *args: str) -> str:
    code, out, err = await cli(data_dir, *args)
    assert (code, err) == (0, ""), err
    return out


async def executed(worlds: Worlds) -> tuple[PlanScene, Path]:
    async def make(script: Any = (), **options: Any) -> PlanScene:
        return await plan_scene_in(await worlds.start(script, **options))

    return await completed(make)


async def operator_rows(scene: PlanScene) -> list[tuple[str, str]]:
    return [
        (entry.actor, entry.action)
        for entry in await scene.app.store.list_audit("ada")
        if entry.actor == "operator"
    ]


async def test_status_names_the_waiting_result_and_result_shows_its_card(worlds: Worlds) -> None:
    scene, workspace = await executed(worlds)
    found = await record(scene)

    status = await ok(worlds.data_dir, "plan", "status", "--agent", "ada")
    assert status.splitlines() == [
        "agent ada: inactive (not in plan mode)",
        f"result waiting for a decision: plan v1 ran on {found.branch}; no other plan can be "
        "approved until it is merged or discarded (plancord plan result --agent ada)",
    ]
    data = json.loads(await ok(worlds.data_dir, "plan", "status", "--agent", "ada", "--json"))
    assert data["result"]["branch"] == found.branch
    assert data["result"]["version"] == found.result_version

    text = await ok(worlds.data_dir, "plan", "result", "--agent", "ada")
    head = git(workspace, "rev-parse", found.branch).strip()
    lines = text.splitlines()
    assert lines[:3] == [
        "result of agent ada: Add a greeting module",
        f"plan v1 · {found.plan_id} · branch {found.branch} onto main",
        "state: waiting for a decision",
    ]
    assert f"commit: {head}" in lines
    assert "requested by: ana" in lines
    step_one = lines.index("1. Write greet.py: ✅ done")
    assert lines[step_one + 1] == "   greet.py +2 −0"
    step_two = lines.index("2. Document it: ✅ done")
    assert lines[step_two + 1] == "   docs/greet.md +1 −0"
    assert lines[-3:] == [
        "merge:   plancord plan merge --agent ada",
        "discard: plancord plan discard --agent ada",
        "diff:    plancord plan result-diff --agent ada",
    ]
    assert await operator_rows(scene) == []  # showing decides nothing


async def test_merge_as_operator_through_the_cards_code(worlds: Worlds) -> None:
    scene, workspace = await executed(worlds)
    found = await record(scene)
    head = git(workspace, "rev-parse", found.branch).strip()

    said = await ok(worlds.data_dir, "plan", "merge", "--agent", "ada")

    assert said == (
        f"Merged {found.branch} into main as a fast-forward ({head[:8]}).\naudited as operator\n"
    )
    assert git(workspace, "rev-parse", "main").strip() == head
    decided = await record(scene)
    assert (decided.result, decided.decided_by_name) == (ResultState.MERGED, "operator")
    assert await operator_rows(scene) == [("operator", "result-merge")]
    status = await ok(worlds.data_dir, "plan", "status", "--agent", "ada")
    assert "result waiting" not in status
    shown = await ok(worlds.data_dir, "plan", "result", "--agent", "ada")
    assert "state: merged" in shown.splitlines()
    assert "decided by operator: merged into main as a fast-forward" in shown

    # The bot hears the shell's decision through the change feed and redraws its card.
    for _ in range(250):
        if not any(buttons(result_card(scene)).values()):
            break
        await asyncio.sleep(0.02)
    await scene.env.settle()
    assert buttons(result_card(scene)) == {"Merge": False, "Discard": False}

    code, out, err = await cli(worlds.data_dir, "plan", "merge", "--agent", "ada")
    assert (code, out) == (1, "")
    assert err.startswith("plancord: agent ada has no result waiting for a decision")
    assert err.count("\n") == 1


async def test_discard_as_operator_puts_the_reviewed_state_back(worlds: Worlds) -> None:
    scene, workspace = await executed(worlds)
    main = git(workspace, "rev-parse", "main").strip()
    assert (workspace / "greet.py").exists()

    said = await ok(worlds.data_dir, "plan", "discard", "--agent", "ada")

    assert (
        said == "Discarded the result; main is back at the reviewed state.\naudited as operator\n"
    )
    assert git(workspace, "rev-parse", "main").strip() == main
    assert not (workspace / "greet.py").exists()
    assert not (workspace / "docs" / "greet.md").exists()
    decided = await record(scene)
    assert (decided.result, decided.decided_by_name) == (ResultState.DISCARDED, "operator")
    assert await operator_rows(scene) == [("operator", "result-discard")]
