"""Stopping and starting again: a shutdown cancels every running turn (and the processes its
tools started), leaving each turn's marker; the next start tells each marked agent of the
guilds this process serves that its turn was cut short, and resumes the ones whose phase
says work goes on."""

from __future__ import annotations

import asyncio
import logging

from plancord.agent.conversation_writer import ConversationWriter
from plancord.agent.host_prompts import HOST
from plancord.agent.interruptions import TurnMarkers
from plancord.agent.loop import ToolLoop
from plancord.agent.sessions import Sessions
from plancord.core.errors import PlancordError
from plancord.core.execution import step_number
from plancord.core.planning import Actor, Phase
from plancord.core.service import PlanningService
from plancord.core.serving import AgentShare
from plancord.storage.executions import ExecutionStore
from plancord.storage.store import SqlStore

log = logging.getLogger(__name__)


class Restarts:
    """Shutdown and the resumption after a start, over the sessions and the turn markers."""

    def __init__(
        self,
        *,
        sessions: Sessions,
        loop: ToolLoop,
        writer: ConversationWriter,
        markers: TurnMarkers,
        store: SqlStore,
        shards: AgentShare,
        executions: ExecutionStore,
        planning: PlanningService,
    ) -> None:
        self._executions = executions
        self._planning = planning
        self._sessions = sessions
        self._loop = loop
        self._writer = writer
        self._markers = markers
        self._store = store
        self._shards = shards

    async def shutdown(self, *, notice: bool = False, grace_seconds: float = 10.0) -> None:
        """Stop every running turn: cancel it (which kills the processes its tools started)
        and wait at most ``grace_seconds`` for it to unwind. With ``notice``, each busy
        agent's channel is told first. The turns' markers stay, so the next start resumes."""
        self._loop.shutting_down = True
        busy = [s for s in self._sessions if s.task is not None and not s.task.done()]
        if notice:
            for session in busy:
                await self._writer.say(
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
        for agent in self._markers.marked():
            try:
                if not self._shards.owns(await self._store.get_agent(agent)):
                    continue  # another process serves its guild, and resumes it
                self._markers.clear(agent)
                state = await self._store.load_state(agent)
            except PlancordError:
                self._markers.clear(agent)
                continue
            resumed.append(agent)
            if state.phase is Phase.EXECUTING and await self._checkpoint_waited(agent):
                continue
            if state.phase in (Phase.EXECUTING, Phase.GATHERING):
                work = "the approved plan" if state.phase is Phase.EXECUTING else "planning"
                await self._writer.say(
                    agent, f"↻ plancord restarted during my turn; resuming {work}."
                )
                text = (
                    f"{HOST} plancord restarted during your turn; anything that was running "
                    "was stopped. Check where you were and continue."
                )
                session = self._sessions.get(agent)
                session.claim([{"type": "text", "text": text}], self._loop.turn(session))
            elif state.phase is Phase.SUBMITTED:
                await self._writer.say(
                    agent, "↻ plancord restarted; my plan is still waiting for a decision."
                )
            else:
                await self._writer.say(
                    agent,
                    "↻ plancord restarted during my turn, which was interrupted; "
                    "send a message to continue.",
                )
        return resumed

    async def _checkpoint_waited(self, agent: str) -> bool:
        """A restart while a 🔴 checkpoint card waited is not a Continue: execution ends
        (the step never starts) and the agent is not resumed. True when that happened."""
        record = await self._executions.running(agent)
        if record is None or record.waiting_checkpoint is None:
            return False
        step = step_number(record.waiting_checkpoint)
        why = f"plancord restarted while the checkpoint of high-risk step {step} waited"
        try:
            await self._planning.complete(
                agent, Actor.policy("restart"), f"Execution ended: {why}."
            )
        except PlancordError:
            log.exception("agent %s: could not end execution after a restart", agent)
        note = (
            f"{HOST} Execution ended: {why}, so step {step} never started. Plan mode has "
            "ended with the steps so far kept; do not continue the plan."
        )
        await self._writer.add_user_blocks(agent, [{"type": "text", "text": note}])
        await self._writer.say(
            agent,
            f"⏹ Execution ended: {why}. Step {step} did not start; the steps before it are "
            "kept on the plan's branch.",
        )
        return True
