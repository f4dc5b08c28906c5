"""A directory shared with every agent (``sandbox.shared_paths``) never shows the host's
private files: a shared path that holds the data directory (the database, every agent's
workspace, the proxy's sockets), the database file or a workspace root, or lies inside one,
is refused when the config is read, so the bot does not start with it.

Played end to end: the hostile scene starts the real bot under SimCord with such a config,
and a scripted model reads the database and another agent's workspace through the shared
path. Before the config check the bot started and the model read both.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from plancord.config import Config
from plancord.testing.anthropic_server import ToolCall, text_turn, tool_turn
from tests.security.hostile import OTHER_SECRET, Hostile


def _read(command: str) -> Any:
    return tool_turn(ToolCall("bash_execute", {"command": command}))


async def _attack(hostile: Any, shared: Path) -> None:
    """Start the bot with ``shared`` shared and have the model read the database and another
    agent's notes through it; reached past the start only where the config was taken."""
    scene: Hostile = await hostile(
        [], profile="open", config={"sandbox": {"shared_paths": [str(shared)]}}
    )
    other = scene.app.manager.workspace_of("other")
    scene.world.server.add_turns(
        _read(f"cat {other}/notes.txt"),
        _read(f"strings {scene.data_dir}/plancord.db | head -50"),
        text_turn("done"),
    )
    await scene.ana.send(scene.channel, "look around")
    scene.ran(2)
    assert scene.leaks() == []


async def test_a_shared_path_holding_the_data_directory_is_refused(
    hostile: Any, tmp_path: Path
) -> None:
    with pytest.raises(ValidationError, match=r"sandbox\.shared_paths: .* overlaps data_dir"):
        await _attack(hostile, tmp_path)


@pytest.mark.parametrize("where", ["the data directory itself", "a folder inside it"])
def test_every_overlap_with_the_data_directory_is_refused(tmp_path: Path, where: str) -> None:
    data = tmp_path / "data"
    shared = data if where == "the data directory itself" else data / "agents"
    with pytest.raises(ValidationError, match="overlaps data_dir"):
        Config.model_validate({"data_dir": str(data), "sandbox": {"shared_paths": [str(shared)]}})


def test_a_shared_path_over_a_workspace_root_or_the_database_is_refused(tmp_path: Path) -> None:
    roots = tmp_path / "src"
    with pytest.raises(ValidationError, match="overlaps workspace_roots"):
        Config.model_validate(
            {
                "data_dir": str(tmp_path / "data"),
                "workspace_roots": [str(roots / "repos")],
                "sandbox": {"shared_paths": [str(roots)]},
            }
        )
    with pytest.raises(ValidationError, match="overlaps database"):
        Config.model_validate(
            {
                "data_dir": str(tmp_path / "data"),
                "database": str(tmp_path / "db" / "plancord.db"),
                "sandbox": {"shared_paths": [str(tmp_path / "db")]},
            }
        )


def test_a_shared_path_through_a_link_is_judged_where_it_leads(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "innocent").symlink_to(tmp_path / "data")
    with pytest.raises(ValidationError, match="overlaps data_dir"):
        Config.model_validate(
            {
                "data_dir": str(tmp_path / "data"),
                "sandbox": {"shared_paths": [str(tmp_path / "innocent")]},
            }
        )


async def test_a_shared_path_beside_them_is_shown_to_the_agent(
    hostile: Any, tmp_path: Path
) -> None:
    """The positive control: a shared directory apart from the host's files is readable in
    the sandbox, so the refusal above is what keeps the data directory out of sight."""
    shared = tmp_path / "cache"
    shared.mkdir()
    (shared / "note.txt").write_text(OTHER_SECRET)
    scene: Hostile = await hostile(
        [], profile="open", config={"sandbox": {"shared_paths": [str(shared)]}}
    )
    scene.world.server.add_turns(_read(f"cat {shared}/note.txt"), text_turn("done"))
    await scene.ana.send(scene.channel, "look around")

    assert OTHER_SECRET in scene.ran(1)[0]
