"""Comments reach the agent at its next turn: the comments on its plan it has not been told
yet go in with the turn's first blocks, as one host message, and are marked told then (so
a restart leaves the untold ones waiting in the database, not lost with the process)."""

from __future__ import annotations

from plancord.agent.turns import Block
from plancord.core.plan_comments import PlanComments, told_text


class CommentNotes:
    def __init__(self, comments: PlanComments) -> None:
        self._comments = comments

    async def for_turn(self, agent: str) -> list[Block]:
        """The host message of the agent's untold comments (none: nothing to add)."""
        told = await self._comments.take_untold(agent)
        return [{"type": "text", "text": told_text(told)}] if told else []
