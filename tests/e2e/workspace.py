"""What the end-to-end story reads from the agent's git workspace."""

from __future__ import annotations

import subprocess
from pathlib import Path

from plancord.demo import AGENT
from tests.world import PlanScene


def git_subjects(workspace: Path) -> list[str]:
    return subprocess.run(
        ["git", "log", "--format=%s"], cwd=workspace, capture_output=True, text=True, check=True
    ).stdout.splitlines()


def empty_commits(workspace: Path) -> list[str]:
    """The subjects of commits whose tree is their parent's (a commit that changed nothing)."""
    listing = subprocess.run(
        ["git", "log", "--format=%H%x00%T%x00%P%x00%s"],
        cwd=workspace,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    rows = [line.split("\x00") for line in listing]
    trees = {commit: tree for commit, tree, _, _ in rows}
    return [subject for _, tree, parents, subject in rows if trees.get(parents) == tree]


def workspace_of(scene: PlanScene) -> Path:
    return scene.app.manager.workspace_of(AGENT)
