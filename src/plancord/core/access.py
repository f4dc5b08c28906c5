"""Who may instruct an agent: talk to it, start its plans, answer its questions.

An agent runs code on the operator's machine, so being able to post in its channel is not
enough. ``Access`` (a plan-mode-style setting: global, per agent, per channel) lists the role
ids and user ids that may; server administrators and the agent's creator always may. The
default lists nobody else: a fresh agent listens to its creator and the admins until the
operator (or its creator, through the config) widens it. ``everyone: true`` opens it to
every member who can post, for a private server.
"""

from __future__ import annotations

from plancord.core.agents import AgentRecord
from plancord.core.planning import Actor, ActorKind
from plancord.core.settings import Access

__all__ = ["Access", "creator_id", "describe_access", "may_instruct"]


def creator_id(agent: AgentRecord) -> str | None:
    """The user id of whoever created ``agent``, when a person did."""
    if agent.created_by is None:
        return None
    creator = Actor.from_label(agent.created_by)
    return creator.id if creator is not None and creator.kind is ActorKind.USER else None


def may_instruct(actor: Actor, agent: AgentRecord, access: Access) -> bool:
    """Whether ``actor`` may instruct ``agent`` under ``access``."""
    if actor.kind is ActorKind.OPERATOR:
        return True
    if actor.kind is not ActorKind.USER:
        return False
    if access.everyone or actor.is_admin or actor.id == creator_id(agent):
        return True
    return actor.id in access.users or bool(actor.roles & set(access.roles))


def describe_access(agent: AgentRecord, access: Access) -> str:
    """Who may instruct ``agent``, in words: for refusals and ``/agent create``."""
    if access.everyone:
        return "everyone who can post in its channel"
    who = ["server administrators"]
    creator = creator_id(agent)
    if creator is not None:
        who.append(f"its creator (<@{creator}>)")
    who += [f"<@&{role}>" for role in access.roles]
    who += [f"<@{user}>" for user in access.users]
    return ", ".join(who[:-1]) + " and " + who[-1] if len(who) > 1 else who[0]
