"""The host's git writes the workspace's git directory for Merge, Discard and Roll back, and
runs no hook, filter or program a repository names while it does.

The reviewed repository comes with hooks in ``.git/hooks`` (``post-checkout``,
``post-merge``, ``reference-transaction``, ``pre-commit``, ``post-commit``,
``post-rewrite``) and a filter driver in its config (``filter.evil.clean`` and ``smudge``)
that ``.gitattributes`` applies to every file; each would leave a marker in the git
directory. A plan is executed through the real bot under SimCord (a scripted model), its
branch made and committed by the host, and the result merged, discarded or rolled back by
a click: the files are as the action says and no marker appears.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from plancord.sandbox import layers
from tests.discord_bot.result_card.completed import completed, git, menu, reply, result_card
from tests.world import PlanScene, Worlds, plan_scene_in

needs_bubblewrap = pytest.mark.skipif(
    layers.bubblewrap_problem() is not None, reason="needs the bubblewrap layer"
)

HOOKS = (
    "post-checkout",
    "post-merge",
    "reference-transaction",
    "pre-commit",
    "post-commit",
    "post-rewrite",
)


@pytest.fixture
async def plan_scene(worlds: Worlds) -> Callable[..., Any]:
    async def make(script: Any = (), **options: Any) -> PlanScene:
        return await plan_scene_in(await worlds.start(script, **options))

    return make


def _armed(workspace: Path) -> None:
    """The reviewed repository: every file under a filter, then hooks and the filter's
    driver installed (after the commit, so the test's own git runs neither)."""
    (workspace / ".gitattributes").write_text("* filter=evil\n")
    git(workspace, "add", ".gitattributes")
    git(workspace, "commit", "--quiet", "-m", "attributes")
    dot_git = workspace / ".git"
    for name in HOOKS:
        hook = dot_git / "hooks" / name
        hook.write_text(f'#!/bin/sh\ntouch "{dot_git}/ran-{name}"\ncat >/dev/null\nexit 0\n')
        hook.chmod(0o755)
    for end in ("clean", "smudge"):
        git(workspace, "config", f"filter.evil.{end}", f"sh -c 'touch {dot_git}/ran-{end}; cat'")


def _markers(workspace: Path) -> list[str]:
    return sorted(path.name for path in (workspace / ".git").glob("ran-*"))


async def _executed(plan_scene: Any) -> tuple[PlanScene, Path]:
    scene, workspace = await completed(plan_scene, prepare=_armed)
    assert _markers(workspace) == [], "the execution branch's own git ran a program"
    return scene, workspace


@needs_bubblewrap
async def test_merge_runs_no_hook_or_filter(plan_scene: Any) -> None:
    scene, workspace = await _executed(plan_scene)

    answer = await scene.ana.click(result_card(scene), label="Merge")

    assert "Merged" in reply(answer), reply(answer)
    assert (workspace / "docs" / "greet.md").read_text() == "# hello\n"
    assert _markers(workspace) == []


@needs_bubblewrap
async def test_discard_runs_no_hook_or_filter(plan_scene: Any) -> None:
    scene, workspace = await _executed(plan_scene)

    answer = await scene.ana.click(result_card(scene), label="Discard")

    assert "Discarded" in reply(answer), reply(answer)
    assert not (workspace / "greet.py").exists()
    assert git(workspace, "branch", "--show-current").strip() == "main"
    assert _markers(workspace) == []


@needs_bubblewrap
async def test_roll_back_runs_no_hook_or_filter(plan_scene: Any) -> None:
    scene, workspace = await _executed(plan_scene)
    custom_id = menu(scene, result_card(scene))["custom_id"]

    answer = await scene.ana.select(result_card(scene), ["2"], custom_id=custom_id)

    assert "back to before step 2" in reply(answer), reply(answer)
    assert not (workspace / "docs" / "greet.md").exists()
    assert _markers(workspace) == []
    git(workspace, "checkout", "--quiet", "-B", "control")
    git(workspace, "add", "--renormalize", ".")
    assert {"ran-post-checkout", "ran-clean"} <= set(_markers(workspace)), "the control runs them"
