"""The completion card is never lost: a deleted card of a waiting result is posted again at
once, a card gone while the bot was down is posted again at restart, a diff past Discord's
upload limit is attached gzipped (the card says so), and ``/plan diff result`` attaches the
result's diff."""

from __future__ import annotations

import asyncio
import gzip
import subprocess
import sys
from pathlib import Path
from typing import Any

from plancord.storage.executions import ExecutionStore
from tests.discord_bot.plan_card.test_deleted_cards import deleted_by
from tests.discord_bot.result_card.completed import (
    WORK,
    completed,
    diff_of,
    git,
    record,
    reply,
    result_card,
    result_cards,
)
from tests.fakes.anthropic_server import ToolCall, tool_turn
from tests.world import buttons


async def test_a_deleted_card_is_posted_again_at_once(plan_scene: Any) -> None:
    scene, _ = await completed(plan_scene)
    old = result_card(scene)

    deleted_by(scene, scene.boss)
    await scene.boss.delete(old)

    new = result_card(scene)
    assert new.id != old.id
    assert buttons(new) == {"Merge": True, "Discard": True}
    assert (await record(scene)).card_message == new.id
    said = scene.bot_texts()[-1]
    assert "The completion card of **ada**'s plan v1 was deleted by **boss**" in said
    answer = await scene.ana.click(new, label="Merge")
    assert "Merged" in reply(answer)


async def test_a_decided_card_is_not_posted_again(plan_scene: Any) -> None:
    scene, _ = await completed(plan_scene)
    await scene.ana.click(result_card(scene), label="Discard")

    await scene.boss.delete(result_card(scene))

    assert result_cards(scene) == []


async def test_a_card_lost_while_the_bot_was_down_is_posted_at_restart(plan_scene: Any) -> None:
    scene, _ = await completed(plan_scene)
    found = await record(scene)
    await ExecutionStore(scene.app.db).set_card(found.plan_id, scene.channel.id, 1)

    await scene.restart()

    card = result_card(scene)
    assert (await record(scene)).card_message == card.id
    assert buttons(card) == {"Merge": True, "Discard": True}


async def test_a_diff_past_the_upload_limit_is_attached_gzipped(plan_scene: Any) -> None:
    big = tool_turn(
        ToolCall(
            "bash_execute", {"command": "yes 'a line of the change' | head -c 9000000 > big.txt"}
        )
    )
    scene, workspace = await completed(plan_scene, work=(big, *WORK))

    card = result_card(scene)
    assert "attached gzipped" in (card.embeds[0].description or "")
    attachment = diff_of(card)
    assert attachment.filename.endswith(".diff.gz")
    diff = gzip.decompress(await attachment.read()).decode()
    found = await record(scene)
    assert diff == git(workspace, "diff", "--binary", found.reviewed_commit, found.branch)
    assert len(diff) > 9_000_000


async def test_plan_diff_result_attaches_the_diff(plan_scene: Any) -> None:
    scene, _ = await completed(plan_scene)

    answer = await scene.ana.slash(scene.channel, "plan diff", result=True)

    message = answer.followups[-1] if answer.followups else answer.response
    assert "The result of plan v1" in message.content
    [attachment] = message.attachments
    assert "+def hello():" in (await attachment.read()).decode()


async def test_the_operator_cli_prints_the_whole_diff(plan_scene: Any, tmp_path: Path) -> None:
    scene, workspace = await completed(plan_scene)
    found = await record(scene)
    config = tmp_path / "operator.yaml"
    config.write_text(f"data_dir: {scene.app.config.data_dir}\n")

    printed = await asyncio.to_thread(_cli, "plan", "result-diff", "--agent", "ada", config)

    assert printed.returncode == 0, printed.stderr
    assert printed.stdout == git(workspace, "diff", "--binary", found.reviewed_commit, found.branch)
    assert "+def hello():" in printed.stdout
    nobody = await asyncio.to_thread(_cli, "plan", "result-diff", "--agent", "nobody", config)
    assert nobody.returncode == 1 and "nobody" in nobody.stderr


def _cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    *words, config = args
    argv = [
        sys.executable,
        "-m",
        "plancord.command.main",
        *map(str, words),
        "--config",
        str(config),
    ]
    return subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)


async def test_a_card_whose_file_discord_refuses_is_posted_without_it(plan_scene: Any) -> None:
    scene, _ = await completed(plan_scene)
    found = await record(scene)
    scene.env.inject_error(
        "POST", "/channels/*/messages", status=413, code=40005, message="Request entity too large"
    )

    posted = await scene.world.bot.notifier.results.post(found.plan_id)

    assert posted is not None
    card = result_card(scene)
    assert card.id == posted.id
    assert [a.filename for a in card.attachments] == ["result-v1-steps.md"]
    assert "could not be attached" in (card.embeds[0].description or "")
    assert buttons(card) == {"Merge": True, "Discard": True}
    assert (await record(scene)).card_message == card.id
