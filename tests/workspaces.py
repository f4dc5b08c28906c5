"""Agent workspaces for test setup, made by the real ``init_workspace`` once per agent name
and copied per test.

``init_workspace`` runs git six times inside the agent's sandbox, about half a second on a
loaded machine; a copy of its result takes milliseconds. Tests that are about
``init_workspace`` itself call it directly; the others only need the repository it leaves.
"""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

from plancord.agent.workspace import init_workspace


class WorkspaceTemplates:
    """One ``init_workspace`` result per agent name under ``root``, copied on request."""

    def __init__(self, root: Path) -> None:
        self.root = root

    async def copy(self, path: Path, agent: str) -> Path:
        """``path`` made the workspace ``init_workspace(path, agent)`` would make."""
        template = self.root / agent
        if not template.exists():
            # Made beside its place and moved in whole, so a failed init leaves no template.
            building = self.root / f"{agent}.building"
            await asyncio.to_thread(shutil.rmtree, building, True)
            await init_workspace(building, agent)
            building.rename(template)
        await asyncio.to_thread(shutil.copytree, template, path, symlinks=True)
        return path
