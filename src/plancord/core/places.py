"""Where an act was made, and where an agent lives: part of who may act.

Why this exists: a member's standing is not theirs alone but theirs *somewhere*. Their roles
and administrator flag belong to one server, and a control on a card carries only the id of
what it decides, so a copy of the control on any message the bot can see (another channel,
another server where the clicker is an administrator) would decide the agent's work unless
the place is judged too. A front end gives every act the ``Place`` it was made in (opaque
ids: the front end's own); the authority (``core.authority``) lets a member act only from
the agent's ``Home``, its channel or a thread of it, in its own server, and refuses and
audits everything else, on every card alike. The operator's shell has no place: it is not a
member of any server, and the operator may always act.
"""

from __future__ import annotations

from dataclasses import dataclass

from plancord.core.agents import AgentRecord


@dataclass(frozen=True, slots=True)
class Place:
    """Where a member acted: the server (None outside one, as in direct messages), the
    channel, and for a thread the channel it is under."""

    guild: str | None
    channel: str
    parent: str | None = None


@dataclass(frozen=True, slots=True)
class Home:
    """Where an agent lives: its server (None for an agent recorded without one) and its
    channel."""

    guild: str | None
    channel: str

    @classmethod
    def of(cls, agent: AgentRecord | None) -> Home | None:
        """``agent``'s home; None for an agent bound to no channel (nobody may act on it
        from anywhere then)."""
        if agent is None or agent.channel_id is None:
            return None
        guild = str(agent.guild_id) if agent.guild_id is not None else None
        return cls(guild, str(agent.channel_id))

    def holds(self, place: Place) -> bool:
        """Whether ``place`` is this home: its channel or a thread under it, and, when the
        home names its server, in that server."""
        if place.guild is None or (self.guild is not None and place.guild != self.guild):
            return False
        return self.channel in (place.channel, place.parent)
