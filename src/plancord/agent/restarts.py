"""Stopping and starting again: a shutdown cancels every running turn (and the processes its
tools started), leaving each turn's marker; the next start tells each marked agent of the
guilds this process serves that its turn was cut short, and resumes the ones whose phase
says work goes on."""

from __future__ import annotations

import asyncio
import logging

from plancord.agent.interruptions import TurnMarkers
from plancord.agent.runtime_base import HOST, AgentSession, RuntimeBase
from plancord.core.errors import PlancordError
from plancord.core.planning import Phase

log = logging.getLogger(__name__)


class Restarts(RuntimeBase):
    markers: TurnMarkers
    _sessions: dict[str, AgentSession]
    _shutting_down: bool

    async def shutdown(self, *, notice: bool = False, grace_seconds: float = 10.0) -> None:
        """Stop every running turn: cancel it (which kills the processes its tools started)
        and wait at most ``grace_seconds`` for it to unwind. With ``notice``, each busy
        agent's channel is told first. The turns' markers stay, so the next start resumes."""
        self._shutting_down = True
        busy = [s for s in self._sessions.values() if s.task is not None and not s.task.done()]
        if notice:
            for session in busy:
                await self._say(
                    session.name,
                    "⏹ plancord is shutting down; this turn was interrupted. "
                    "It resumes when plancord is back.",
                )
        tasks = [s.task for s in busy if s.task is not None]
        for task in tasks:
            task.cancel()
        if tasks:
            _, pending = await asyncio.wait(tasks, timeout=grace_seconds)
            for task in pending:
                log.warning("a turn did not stop within %s s of shutdown: %s", grace_seconds, task)

    async def resume_interrupted(self) -> list[str]:
        """After a start: tell each agent whose turn was cut short, and resume it when its
        phase says work goes on (executing, gathering); a submitted plan keeps waiting for
        its decision and an agent outside plan mode waits for its user. Only agents of the
        guilds this process serves (``discord.shard_ids``) are touched. Returns the agents."""
        resumed: list[str] = []
        for agent in self.markers.marked():
            try:
                if not self.settings.shards.owns(await self.store.get_agent(agent)):
                    continue  # another process serves its guild, and resumes it
                self.markers.clear(agent)
                state = await self.store.load_state(agent)
            except PlancordError:
                self.markers.clear(agent)
                continue
            resumed.append(agent)
            if state.phase in (Phase.EXECUTING, Phase.GATHERING):
                work = "the approved plan" if state.phase is Phase.EXECUTING else "planning"
                await self._say(agent, f"↻ plancord restarted during my turn; resuming {work}.")
                text = (
                    f"{HOST} plancord restarted during your turn; anything that was running "
                    "was stopped. Check where you were and continue."
                )
                self.session(agent).claim(
                    [{"type": "text", "text": text}], self._turn(self.session(agent))
                )
            elif state.phase is Phase.SUBMITTED:
                await self._say(
                    agent, "↻ plancord restarted; my plan is still waiting for a decision."
                )
            else:
                await self._say(
                    agent,
                    "↻ plancord restarted during my turn, which was interrupted; "
                    "send a message to continue.",
                )
        return resumed
