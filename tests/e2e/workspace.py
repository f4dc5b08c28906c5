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


def workspace_of(scene: PlanScene) -> Path:
    return scene.app.manager.workspace_of(AGENT)
