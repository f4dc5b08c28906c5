"""Which agents this process serves: the one answer the runtime, the restore after a start
and the schedules read, whatever splits the agents between processes.

Why this exists: several processes may share one store, each running some of the agents.
How they are split is the front end's business (Discord's shards: ``config.shards``); the
core only asks ``AgentShare.owns``. With one process, ``EveryAgent`` serves them all.
"""

from __future__ import annotations

from typing import Protocol

from plancord.core.agents import AgentRecord


class AgentShare(Protocol):
    """The agents this process serves."""

    def owns(self, agent: AgentRecord) -> bool: ...


class EveryAgent:
    """One process serving every agent."""

    def owns(self, agent: AgentRecord) -> bool:
        return True
