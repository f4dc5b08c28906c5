"""Which share of a Discord application's shards one process serves, and so which agents
(the core's ``core.serving.AgentShare``).

Discord sends a guild's events to shard ``(guild_id >> 22) % shard_count``. An agent belongs
to its guild, so the process serving that shard runs the agent: its turns, the resumption of
a turn cut short, the plan and question messages restored after a start. Every process reads
and writes the one shared store; a click or a deadline any process handles is settled there,
by the version column, exactly once.
"""

from __future__ import annotations

from dataclasses import dataclass

from plancord.core.agents import AgentRecord


@dataclass(frozen=True, slots=True)
class ShardShare:
    count: int = 1
    ids: frozenset[int] = frozenset({0})

    def __post_init__(self) -> None:
        if self.count < 1:
            raise ValueError("shard_count must be at least 1")
        if not self.ids or any(not 0 <= i < self.count for i in self.ids):
            raise ValueError(f"shard ids must be between 0 and {self.count - 1}")

    @property
    def everything(self) -> bool:
        """This process serves every shard: one process, as without sharding."""
        return len(self.ids) == self.count

    def shard_of(self, guild_id: int | None) -> int:
        """Discord's shard for the guild; agents outside any guild belong to shard 0."""
        return 0 if guild_id is None else (guild_id >> 22) % self.count

    def owns_guild(self, guild_id: int | None) -> bool:
        return self.everything or self.shard_of(guild_id) in self.ids

    def owns(self, agent: AgentRecord) -> bool:
        return self.owns_guild(agent.guild_id)
