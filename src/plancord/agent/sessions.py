"""The live side of each agent: its turn slot, who the running turn serves, and the requests
from elsewhere waiting for a turn of their own. ``Sessions`` holds one per agent, made on
first use; the runtime, its plan-event reactions and its restarts share the one instance."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from plancord.agent.turns import Block, TurnSlot
from plancord.core.planning import Actor


@dataclass(slots=True)
class Elsewhere:
    """A request that arrived from another place (a thread) while a turn ran there: it gets
    a turn of its own afterwards, answered where it was asked."""

    blocks: list[Block]
    requester: Actor
    origin: object
    interactive: bool = True


@dataclass(slots=True)
class AgentSession(TurnSlot):
    """The live side of one agent: its turn slot and who the running turn serves. The
    requester is fixed when a turn starts; later messages that join it do not change it."""

    requester: Actor | None = None
    interactive: bool = True
    elsewhere: list[Elsewhere] = field(default_factory=list)


class Sessions:
    """Every agent's session in this process, one each, made when first asked for."""

    def __init__(self) -> None:
        self._by_agent: dict[str, AgentSession] = {}

    def get(self, agent: str) -> AgentSession:
        return self._by_agent.setdefault(agent, AgentSession(agent))

    def __iter__(self) -> Iterator[AgentSession]:
        return iter(list(self._by_agent.values()))

    def any_busy(self) -> bool:
        return any(session.busy for session in self._by_agent.values())
