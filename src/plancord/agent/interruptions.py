"""Turns cut short by a shutdown, remembered across the restart.

A turn writes a marker file, ``<agents_dir>/<agent>/turn-running``, when it starts and removes
it when it ends. A shutdown cancels running turns and leaves their markers, and so does a
crash or a kill, so after any restart the marked agents are exactly those that were working.
The runtime then tells each one's channel and resumes or waits as its phase says.

A file per agent, not a table: it is written on every turn, and it must survive exactly the
events (kill -9, a full disk for the database) that could lose a transaction in flight.
"""

from __future__ import annotations

import contextlib
import logging
from pathlib import Path

log = logging.getLogger(__name__)

MARKER = "turn-running"


class TurnMarkers:
    def __init__(self, agents_dir: Path) -> None:
        self.agents_dir = agents_dir

    def _path(self, agent: str) -> Path:
        return self.agents_dir / agent / MARKER

    def mark(self, agent: str) -> None:
        path = self._path(agent)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.touch()
        except OSError as exc:
            log.warning("agent %s: could not record that a turn is running: %s", agent, exc)

    def clear(self, agent: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            self._path(agent).unlink()

    def marked(self) -> list[str]:
        """Agents whose last turn never ended, by name."""
        if not self.agents_dir.is_dir():
            return []
        return sorted(p.parent.name for p in self.agents_dir.glob(f"*/{MARKER}") if p.is_file())
